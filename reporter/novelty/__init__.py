"""Novelty against the ingested graph: graph events, verdicts, fail-closed resolvers.

The public surface: `load_graph`, `parse_candidate`, `check_candidate`,
`load_novelty_results` and `openalex_events`. A verdict is evidence, never a
score.
"""

from .candidate import Candidate, CandidateInput, parse_candidate, read_candidate_batch, read_candidate_file
from .graph import Graph, load_graph, parse_events, read_graph
from .ingest import openalex_events, read_openalex_works, write_events
from .resolvers import Lookup, OpenAlexResolver, Resolver, SemanticScholarResolver, make_resolvers
from .results import load_novelty_results, result_row, write_novelty_results
from .verdict import NoveltyResult, check_candidate

__all__ = ["Candidate", "CandidateInput", "Graph", "Lookup", "NoveltyResult", "OpenAlexResolver", "Resolver",
           "SemanticScholarResolver", "check_candidate", "load_graph", "load_novelty_results",
           "make_resolvers", "openalex_events", "parse_candidate", "parse_events", "read_candidate_batch",
           "read_candidate_file", "read_graph", "read_openalex_works", "result_row", "write_events",
           "write_novelty_results"]

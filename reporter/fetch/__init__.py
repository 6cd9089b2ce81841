"""Fetching a week of papers from the public APIs into the digest's records (docs/fetch.md).

- `config.py`: [fetch] and [fetch.<source>] of reporter.toml;
- `http.py`: one polite client per source (etiquette, retries, Retry-After, the cache);
- `cache.py`: the raw-answer cache, every page by request, written before it is parsed;
- `arxiv.py`, `biorxiv.py` (and medRxiv), `pubmed.py`, `openalex.py`: each API's paging;
- `pages.py`: what the walkers share (the window, a page, reading records through the digest's readers);
- `run.py`: several sources into one list of records, and the JSONL file;
- `reporter fetch` itself is reporter/commands/fetch.py, at the edge.
"""

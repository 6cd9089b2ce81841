"""The names of a release folder's files, in one light module (no Arrow, no JSON): routing's readers and writers
take them from here, and `reporter route --help` names them without importing the readers."""

from __future__ import annotations

MANIFEST_FILE = "release.json"
"""The release's manifest: its id, inputs and their digests, the engine version."""
ROUTING_FILE = "routing.parquet"
"""The routing table: one row per work, its pile, the deciding rule, the evidence."""
STATS_FILE = "rule_stats.json"
"""Per-rule counts: matches, wins, overlaps."""
SAMPLES_FILE = "samples.json"
"""Seeded samples of each rule's wins."""
RELEASE_FILES = (MANIFEST_FILE, ROUTING_FILE, STATS_FILE, SAMPLES_FILE)
"""The files every route writes into `releases/<release_id>/`."""

"""Shared test setup: the routing helpers on the path, and where ../shared/data lives."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

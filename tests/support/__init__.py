"""Helpers shared by the tests; no tests live here.

tests/ is on sys.path (pytest's default rootdir-relative import of test
modules, and tests/conftest.py), so test modules import these as
`from support.routing import write_specs`; no test module imports another.

- support.routing: a rule book folder and a pool file from Python values.
- support.routing_fixture: the hand-computed rule book and pool of test_routing_fixture.
- support.reference: the one plain-Python reading of routing.md's rule language.
- support.site: a toy router writing release folders, and an HTML tree for assertions.
"""

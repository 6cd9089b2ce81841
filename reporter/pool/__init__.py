"""The pool side: reading pools and overlays (reader.py, overlay.py), the paper record (record.py) and the
sources' own formats into records (sources/), shared by the digest and fetch; it imports no stage.
The example generator is reporter.example."""

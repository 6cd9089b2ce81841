"""Reading pools and overlays (reader.py, overlay.py); the example generator is reporter.example."""

"""The weekly digest: records, merge, the three axes, decisions, archive. So far: its settings (config.py)."""

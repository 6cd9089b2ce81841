"""Fetching a week of papers from the public sources. So far: its settings (config.py)."""

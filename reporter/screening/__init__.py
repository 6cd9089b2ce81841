"""Screening (Stage 2b): two voters, one gate, claimed jobs. So far: its settings (config.py)."""

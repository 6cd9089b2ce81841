"""Screening (Stage 2b): two voters, one gate, claimed jobs; the only stage that admits a work or spends.

See docs/screening.md for the modules and how they join.
"""

"""Every term a reader meets is in the glossary or explained where it stands (issue 37, item 7)."""

from __future__ import annotations

import subprocess
import sys

from reporter.site.glossary import build_glossary


def test_the_digest_words_of_its_pages_are_in_the_glossary():
    terms = {t.word: t.meaning for _group, terms in build_glossary(()).groups for t in terms}
    assert "criteria silent 0.70 (a stand-in)" in terms["criteria silent"]
    assert "never KEEP" in terms["criteria silent"] and "Out of scope" in terms["look-alike trap"]


def test_digest_help_says_what_it_does_in_words_not_spec_patterns():
    """"pattern A/B/C/D" named the spec's sections, which a reader of --help has not got."""
    done = subprocess.run([sys.executable, "-m", "reporter.cli", "digest", "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "pattern" not in text.lower()
    assert "the one ISO week to decide" in text and "catch-up of several weeks" in text
    assert "a sanity check of the watchlist" in text

"""What an operator guessed, made plain (issue 34, items 6 and 9): a voter down with no key variable says so in
words; the PostgreSQL password from the variable `password_env` names, never written to any file; the dry run's
prices and whether they are checked; costs to a tenth of a cent."""

from __future__ import annotations

import dataclasses

from test_panel_provider import _voter_settings

from reporter.panel.tier_loop import voter_down


def test_a_voter_down_without_a_key_variable_says_so_in_words():
    """It said `the key in $(none)`."""
    voter = dataclasses.replace(_voter_settings("http://127.0.0.1:9/v1"), api_key_env=None)
    message = str(voter_down(voter, "[screen.expensive]", 5, "HTTP 500"))
    assert "$(none)" not in message and "(none)" not in message
    assert "no key variable set" in message
    keyed = str(voter_down(_voter_settings("http://127.0.0.1:9/v1"), "[screen.expensive]", 5, "HTTP 500"))
    assert "the key in $SCREEN_KEY" in keyed

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


def test_the_dry_run_prints_the_prices_it_used_and_whether_they_are_checked(tmp_path, capsys):
    """The shipped prices are all unchecked, and nothing on the command line said so."""
    from support.fake_openai import FakeOpenAI
    from test_screen_run import make_workspace

    from reporter.cli import main
    with FakeOpenAI() as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=2, cheap_voters=False, prices=(0.5, 1.5))
    toml = w["root"] / "reporter.toml"
    text = toml.read_text()
    head, sep, tail = text.partition('model = "exp-b"\n')
    tail = tail.replace("price_in_per_mtok = 0.5\nprice_out_per_mtok = 1.5\n", "", 1)
    toml.write_text(head + 'model = "claude-3-5-haiku-20241022"\n' + tail)
    assert main(["screen", "--workspace", str(w["root"])]) == 0
    out = capsys.readouterr().out
    assert "Prices used (US dollars per million tokens, input / output):" in out
    assert "  expensive-a (exp-a): $0.5 / $1.5, configured (price_in_per_mtok, price_out_per_mtok)" in out
    assert ("  expensive-b (claude-3-5-haiku-20241022): $0.8 / $4, from the shipped prices.json, UNCHECKED "
            "(never compared with the provider's pricing page") in out

"""What an operator guessed, made plain (issue 34, items 6 and 9): a voter down with no key variable says so in
words; the PostgreSQL password from the variable `password_env` names, never written to any file; the dry run's
prices and whether they are checked; costs to a tenth of a cent."""

from __future__ import annotations

import dataclasses

import pytest

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


PG_PASSWORD = "pw-SECRET-93c1e"
"""The screener role's PostgreSQL password: it must reach the server and no file."""


@pytest.fixture
def password_server():
    """A PostgreSQL server of this test alone that wants a password (scram) from the role `screener` over TCP."""
    from support.postgres import PostgresServer, postgres_available
    if not postgres_available():
        pytest.skip("PostgreSQL is not installed")
    import psycopg
    server = PostgresServer()
    server.start()
    try:
        url = server.new_database()
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE screener LOGIN PASSWORD '{PG_PASSWORD}'")
            conn.execute(f'ALTER DATABASE "{name}" OWNER TO screener')
            conn.execute(f'GRANT ALL ON DATABASE "{name}" TO screener')
        (server.folder / "data" / "pg_hba.conf").write_text(
            "local all all trust\nhost all postgres 127.0.0.1/32 trust\n"
            "host all screener 127.0.0.1/32 scram-sha-256\n", encoding="utf-8")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        yield url.replace("postgresql://postgres@", "postgresql://screener@")
    finally:
        server.stop()


@pytest.mark.slow
def test_password_env_gives_the_postgresql_password_and_no_file_holds_it(tmp_path, monkeypatch, capsys,
                                                                         password_server):
    from support.fake_openai import Answer, FakeOpenAI
    from test_screen_run import KEY, KEY_ENV, make_workspace

    from reporter.cli import main
    from reporter.runs import read_runs
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    with FakeOpenAI(default=Answer("include")) as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=3, cheap_voters=False, database=password_server)
        server.titles = w["titles"]
        toml = w["root"] / "reporter.toml"
        toml.write_text(toml.read_text().replace("[screen]\n", '[screen]\npassword_env = "SCREEN_PG_PASSWORD"\n', 1))
        argv = ["screen", "--workspace", str(w["root"]), "--run", "--tier", "expensive"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "[screen] password_env names $SCREEN_PG_PASSWORD, which is not set: export it with the password" in err
        monkeypatch.setenv("SCREEN_PG_PASSWORD", PG_PASSWORD)
        assert main(argv) == 0
        assert main(["screen", "--workspace", str(w["root"])]) == 0  # the dry run reads the database too
    out = capsys.readouterr()
    assert PG_PASSWORD not in out.out + out.err
    [record] = read_runs(w["root"] / "state")
    assert record.status == "done" and record.settings["tasks"]["password_env"] == "SCREEN_PG_PASSWORD"
    leaked = [p for p in w["root"].rglob("*") if p.is_file() and PG_PASSWORD.encode() in p.read_bytes()]
    assert leaked == []


def test_password_env_goes_with_postgresql_only(tmp_path):
    from support.fake_openai import FakeOpenAI
    from test_screen_run import make_workspace

    from reporter.config import load_workspace
    from reporter.errors import InputError
    with FakeOpenAI() as server:
        w = make_workspace(tmp_path / "ws", server.base_url, screen=1, cheap_voters=False)
    toml = w["root"] / "reporter.toml"
    toml.write_text(toml.read_text().replace("[screen]\n", '[screen]\npassword_env = "PG_PW"\n', 1))
    with pytest.raises(InputError, match=r"\[screen\].*password_env.*goes with a postgresql:// database"):
        load_workspace(w["root"])

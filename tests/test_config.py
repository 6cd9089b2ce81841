"""reporter.toml: each stage's table parsed once into frozen settings; errors name file, table and key."""

from pathlib import Path

import re

import pytest

from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.panel.store_connect import is_postgres

BASE = 'pool = "pool.jsonl"\nspecs = "specs"\nreleases = "releases"\nsite = "site"\n'


def _load(tmp_path: Path, extra: str):
    (tmp_path / "reporter.toml").write_text(BASE + extra)
    return load_workspace(tmp_path)


VOTER = ('name = "{name}"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\napi_key_env = "KEY"\n'
         'price_in_per_mtok = 0.15\nprice_out_per_mtok = 0.6\n')


def _cheap_pair(first: str) -> str:
    """Two [[screen.cheap.voters]]: `first` (a voter's keys) and an ordinary voter "b"."""
    return "[[screen.cheap.voters]]\n" + first + "[[screen.cheap.voters]]\n" + VOTER.format(name="b")


def test_every_table_parses_into_typed_settings(tmp_path):
    ws = _load(tmp_path, (
        '[novelty]\nresolvers = ["s2", "openalex"]\ntimeout_seconds = 3\ncandidates = "c.jsonl"\n'
        '[example]\nrows = 10\n'
        '[digest]\npapers = "weeks"\nwatchlist = "w.txt"\ncriteria = "c.md"\nmax_kept = 5\n'
        '[fetch.arxiv]\nquery = "cat:cs.CL"\nmin_interval_seconds = 0\n'
        '[screen]\ndatabase = "postgresql://u@127.0.0.1/db"\n'
        + "[[screen.expensive.voters]]\n" + VOTER.format(name="a")
        + "[[screen.expensive.voters]]\n" + VOTER.format(name="b")))
    assert ws.novelty.resolvers == ("s2", "openalex") and ws.novelty.timeout_seconds == 3.0
    assert ws.novelty.candidates == tmp_path.resolve() / "c.jsonl"
    assert (ws.example.rows, ws.example.seed) == (10, 0)
    assert ws.digest.papers == tmp_path.resolve() / "weeks" and ws.digest.max_kept == 5
    assert (ws.digest.keep_threshold, ws.digest.review_threshold) == (70, 50)
    assert ws.digest.archive == tmp_path.resolve() / "digests"
    arxiv = ws.fetch.source("arxiv")
    assert (arxiv.query, arxiv.min_interval_seconds) == ("cat:cs.CL", 0.0)
    assert ws.fetch.source("pubmed").min_interval_seconds == pytest.approx(1 / 3)  # NCBI's etiquette
    assert ws.fetch.cache_dir == tmp_path.resolve() / "state" / "fetch-cache"
    assert is_postgres(ws.screen.database) and ws.screen.lease_seconds == 300 and ws.screen.cheap == ()
    assert [v.name for v in ws.screen.expensive] == ["a", "b"]
    assert ws.screen.expensive[0].max_concurrency == 8 and ws.screen.expensive[1].price_out_per_mtok == 0.6


def test_the_certify_table(tmp_path):
    ws = _load(tmp_path, "[certify]\nmax_missed_fraction = 0.01\nconfidence = 0.99\n")
    assert (ws.certify.max_missed_fraction, ws.certify.confidence) == (0.01, 0.99)


def test_absent_tables_take_their_defaults(tmp_path):
    ws = _load(tmp_path, "")
    assert ws.certify.max_missed_fraction is None and ws.certify.confidence == 0.95
    assert ws.novelty.resolvers == () and ws.novelty.candidates is None
    assert ws.screen is None and ws.digest is None and ws.fetch is None and ws.example is None


def test_a_sqlite_database_is_resolved_against_the_workspace(tmp_path):
    ws = _load(tmp_path, '[screen]\ndatabase = "state/s.db"\n')
    assert ws.screen.database == str(tmp_path.resolve() / "state" / "s.db") and not is_postgres(ws.screen.database)
    assert ws.screen.raw_dir == tmp_path.resolve() / "state" / "raw"


@pytest.mark.parametrize("extra, message", [
    ('[example]\nrows = "abc"\n', "[example]: key 'rows' must be an integer, not 'abc'"),
    ("[example]\nrows = -5\n", "[example]: key 'rows' must be from 1 to 50,000,000, not -5"),
    ("[example]\nrows = true\n", "[example]: key 'rows' must be an integer, not True"),
    ("[example]\nrowz = 5\n", "[example]: unknown key 'rowz'; allowed: rows, seed"),
    ("example = 3\n", "[example] must be a table"),
    ('[novelty]\nresolvers = ["bing"]\n', "[novelty]: key 'resolvers' names unknown resolvers ['bing']"),
    ("[novelty]\ntimeout_seconds = 0\n", "[novelty]: key 'timeout_seconds' must be positive, not 0"),
    ('[digest]\npapers = "p"\nwatchlist = "w"\n', "[digest]: key 'criteria' is missing (a string)"),
    ('[digest]\npapers = "p"\nwatchlist = "w"\ncriteria = "c"\nreview_threshold = 80\n',
     "[digest]: key 'review_threshold' (80) must not be above keep_threshold (70)"),
    ('[digest]\npapers = "p"\nwatchlist = "w"\ncriteria = "c"\nmax_kept = 0\n',
     "[digest]: key 'max_kept' must be 1 or more, not 0"),
    ("[fetch.arxiv]\nmin_interval_seconds = -1\n",
     "[fetch.arxiv]: key 'min_interval_seconds' must be zero or more, not -1.0"),
    ("[fetch.scholar]\nquery = \"x\"\n", "[fetch]: unknown key 'scholar'"),
    ("[screen]\nlease_seconds = 0\n", "[screen]: key 'lease_seconds' must be positive, not 0"),
    ("[screen]\nlease_seconds = 99999999999999999\n",
     "[screen]: key 'lease_seconds' must be at most 604,800 seconds (a week), not 1e+17"),
    ("[[screen.expensive.voters]]\n" + VOTER.format(name="a"),
     "[screen.expensive]: key 'voters' must hold exactly 2 [[screen.expensive.voters]] entries, not 1"),
    ("[[screen.cheap.voters]]\n" + VOTER.format(name="a") + "[[screen.cheap.voters]]\n" + VOTER.format(name="a"),
     "[screen.cheap]: key 'voters' names 'a' twice"),
    ("[[screen.cheap.voters]]\n" + VOTER.format(name="a").replace("http://", "ftp://")
     + "[[screen.cheap.voters]]\n" + VOTER.format(name="b"),
     "[screen.cheap.voters[0]]: key 'base_url' must be an http:// or https:// URL"),
    ("[[screen.cheap.voters]]\n" + VOTER.format(name="a") + "api_key = \"sk-123\"\n"
     + "[[screen.cheap.voters]]\n" + VOTER.format(name="b"),
     "[screen.cheap.voters[0]]: unknown key 'api_key'"),
    (_cheap_pair(VOTER.format(name="a").replace("price_in_per_mtok = 0.15\n", "")),
     "[screen.cheap.voters[0]]: key 'price_in_per_mtok' is missing: model 'm' is not in the default price "
     "table (prices.json); set price_in_per_mtok and price_out_per_mtok"),
    (_cheap_pair(VOTER.format(name="a").replace("price_out_per_mtok = 0.6\n", "")),
     "[screen.cheap.voters[0]]: key 'price_out_per_mtok' is missing: model 'm' is not in the default price table"),
    (_cheap_pair(VOTER.format(name="a") + "structured_output = \"no\"\n"),
     "[screen.cheap.voters[0]]: key 'structured_output' must be true or false, not 'no'"),
    (_cheap_pair(VOTER.format(name="a") + "max_concurrency = 100000\n"),  # issue 30: 12,500 clients, 318 s
     "[screen.cheap.voters[0]]: key 'max_concurrency' must be 1 to 256 (requests in flight for this voter), not "
     "100000"),
    (_cheap_pair(VOTER.format(name="a") + "max_concurrency = 0\n"),
     "[screen.cheap.voters[0]]: key 'max_concurrency' must be 1 to 256"),
    (_cheap_pair(VOTER.format(name="a") + "max_tokens = 0\n"),
     "[screen.cheap.voters[0]]: key 'max_tokens' must be positive, not 0"),
    (_cheap_pair(VOTER.format(name="a").replace("0.15", "-1")),
     "[screen.cheap.voters[0]]: key 'price_in_per_mtok' must be zero or more, not -1.0"),
    (_cheap_pair(VOTER.format(name="a").replace('"m"', '"gpt-4o-mini"').replace("0.6", "-2")),
     "[screen.cheap.voters[0]]: key 'price_out_per_mtok' must be zero or more, not -2.0"),
    ("[screen]\nbatch_size = 0\n", "[screen]: key 'batch_size' must be positive, not 0"),
    ("[screen]\ncriteria = \"\"\n", "[screen]: key 'criteria' must be a non-empty path"),
    ("[screen]\ncriteria = 3\n", "[screen]: key 'criteria' must be a string, not 3"),
    ("[certify]\nmax_missed_fraction = 0\n",
     "[certify]: key 'max_missed_fraction' must be above 0 and at most 1 (0.01 is 1%), not 0.0"),
    ("[certify]\nmax_missed_fraction = 1.5\n", "[certify]: key 'max_missed_fraction' must be above 0 and at most 1"),
    ("[certify]\nconfidence = 1\n", "[certify]: key 'confidence' must be above 0 and below 1 (e.g. 0.95), not 1.0"),
    ("[certify]\ntarget = 0.01\n", "[certify]: unknown key 'target'; allowed: confidence, max_missed_fraction"),
])
def test_errors_name_the_file_the_table_and_the_key(tmp_path, extra, message):
    with pytest.raises(InputError) as caught:
        _load(tmp_path, extra)
    assert str(caught.value).startswith(str(tmp_path / "reporter.toml")), caught.value
    assert message in str(caught.value)


def test_screen_defaults_and_new_keys(tmp_path):
    ws = _load(tmp_path, '[screen]\ncriteria = "screen/criteria.md"\nbatch_size = 8\n'
               + _cheap_pair(VOTER.format(name="a") + "structured_output = false\nmax_tokens = 50\n"))
    assert ws.screen.criteria == tmp_path.resolve() / "screen" / "criteria.md" and ws.screen.batch_size == 8
    a, b = ws.screen.cheap
    assert (a.structured_output, a.max_tokens) == (False, 50)
    assert (b.structured_output, b.max_tokens, b.temperature, b.max_concurrency) == (True, 300, 0.0, 8)
    assert (b.price_in_per_mtok, b.price_out_per_mtok, b.price_checked) == (0.15, 0.6, None)
    bare = _load(tmp_path, "[screen]\n").screen
    assert bare.criteria is None and bare.batch_size == 32


def test_a_model_in_the_price_table_needs_no_price(tmp_path):
    from reporter.panel.prices import default_price
    listed = default_price("gpt-4o-mini")
    without = VOTER.replace('model = "m"', 'model = "gpt-4o-mini"').replace("price_in_per_mtok = 0.15\n", "")
    ws = _load(tmp_path, "[[screen.expensive.voters]]\n" + without.replace("price_out_per_mtok = 0.6\n", "").format(
        name="a") + "[[screen.expensive.voters]]\n" + without.format(name="b").replace("0.6", "9.5"))
    a, b = ws.screen.expensive
    assert (a.price_in_per_mtok, a.price_out_per_mtok) == (listed.in_per_mtok, listed.out_per_mtok)
    assert a.price_checked == listed.checked
    # A configured price wins over the table's, key by key.
    assert (b.price_in_per_mtok, b.price_out_per_mtok) == (listed.in_per_mtok, 9.5)
    configured = _load(tmp_path, "[[screen.expensive.voters]]\n" + VOTER.replace('"m"', '"gpt-4o-mini"').format(
        name="a") + "[[screen.expensive.voters]]\n" + VOTER.format(name="b").replace("0.15", "0"))
    a, b = configured.screen.expensive
    assert (a.price_in_per_mtok, a.price_out_per_mtok, a.price_checked) == (0.15, 0.6, None)
    assert b.price_in_per_mtok == 0.0


INF_KEYS = [("[fetch]\n", "fetch", "timeout_seconds"), ("[fetch]\n", "fetch", "max_wait_seconds"),
            ("[fetch]\n", "fetch", "backoff_seconds"), ("[fetch.arxiv]\n", "fetch.arxiv", "min_interval_seconds"),
            ("[novelty]\n", "novelty", "timeout_seconds")]


@pytest.mark.parametrize("value, complaint", [
    ("inf", "must be a finite number, not inf"), ("-inf", "must be a finite number, not -inf"),
    ("nan", "must be a finite number, not nan"), ("1e300", "must be at most 604,800 seconds (a week), not 1e+300"),
])
@pytest.mark.parametrize("table, name, key", INF_KEYS)
def test_a_duration_of_inf_nan_or_1e300_is_refused_at_load_time(tmp_path, table, name, key, value, complaint):
    with pytest.raises(InputError) as caught:
        _load(tmp_path, f"{table}{key} = {value}\n")
    assert str(caught.value) == f"{tmp_path / 'reporter.toml'}: [{name}]: key '{key}' {complaint}"


@pytest.mark.parametrize("key, value", [("timeout_seconds", "inf"), ("timeout_seconds", "1e300"),
                                        ("temperature", "nan"), ("price_in_per_mtok", "inf")])
def test_a_voters_number_of_inf_nan_or_1e300_is_refused_the_same_way(tmp_path, key, value):
    voter = VOTER.format(name="a").replace("price_in_per_mtok = 0.15\n", "") + (
        "price_in_per_mtok = 0.15\n" if key != "price_in_per_mtok" else "")
    with pytest.raises(InputError, match=rf"\[screen.cheap.voters\[0\]\]: key '{key}' must be "):
        _load(tmp_path, _cheap_pair(voter + f"{key} = {value}\n"))


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:99999/v1", "http://", "https://exa mple.org/v1",
                                 "http://host:port/"])
def test_a_base_url_that_does_not_parse_is_refused_in_fetch_and_in_screen(tmp_path, url):
    with pytest.raises(InputError) as caught:
        _load(tmp_path, f'[fetch.openalex]\nbase_url = "{url}"\n')
    assert "[fetch.openalex]: key 'base_url' " in str(caught.value)
    voter = VOTER.format(name="a").replace("http://127.0.0.1:8000/v1", url)
    with pytest.raises(InputError) as caught:
        _load(tmp_path, _cheap_pair(voter))
    assert "[screen.cheap.voters[0]]: key 'base_url' " in str(caught.value)


def test_a_bad_number_or_url_exits_2_from_the_command_line(tmp_path, capsys):
    from reporter import cli
    (tmp_path / "reporter.toml").write_text(BASE + '[fetch]\ntimeout_seconds = inf\n[fetch.arxiv]\n')
    assert cli.main(["fetch", "--workspace", str(tmp_path), "--since", "2026-05-11", "--until", "2026-05-17",
                     "--out", str(tmp_path / "x.jsonl"), "--dry-run"]) == 2
    assert "[fetch]: key 'timeout_seconds' must be a finite number, not inf" in capsys.readouterr().err
    (tmp_path / "reporter.toml").write_text(BASE + '[fetch.arxiv]\nbase_url = "http://[::1"\n')
    assert cli.main(["fetch", "--workspace", str(tmp_path), "--since", "2026-05-11", "--until", "2026-05-17",
                     "--out", str(tmp_path / "x.jsonl"), "--dry-run"]) == 2
    assert "[fetch.arxiv]: key 'base_url' is not a URL that parses" in capsys.readouterr().err


# --- credentials in a URL (issue 30, item 4) -------------------------------------------------------------

SECRET = "pa55-Word"
JUDGE_VOTER = ('[digest]\npapers = "papers"\nwatchlist = "w.txt"\ncriteria = "c.md"\n[digest.judge]\n'
               '[[digest.judge.voters]]\nname = "j"\nbase_url = "{url}"\nmodel = "m"\n'
               'price_in_per_mtok = 0.15\nprice_out_per_mtok = 0.6\n')


@pytest.mark.parametrize("url", [f"https://user:{SECRET}@example.org/v1", f"http://user:{SECRET}@127.0.0.1:8000/v1",
                                 f"https://{SECRET}@example.org/", f"https://user:{SECRET}@[::1]:80/",
                                 f"https://user:{SECRET}@exa mple.org/", f"https://:{SECRET}@example.org/"])
@pytest.mark.parametrize("table, key", [
    ('[site]\nbase_url = "{url}"\n', "[site]: key 'base_url'"),
    ('[fetch.openalex]\nbase_url = "{url}"\n', "[fetch.openalex]: key 'base_url'"),
    (_cheap_pair(VOTER.format(name="a").replace("http://127.0.0.1:8000/v1", "{url}")),
     "[screen.cheap.voters[0]]: key 'base_url'"),
    (JUDGE_VOTER, "[digest.judge.voters[0]]: key 'base_url'"),
    ('[novelty]\nopenalex_url = "{url}"\n', "[novelty]: key 'openalex_url'"),
    ('[novelty]\ns2_url = "{url}"\n', "[novelty]: key 's2_url'"),
])
def test_a_url_with_credentials_is_refused_naming_the_key_and_never_echoing_them(tmp_path, table, key, url):
    with pytest.raises(InputError) as caught:
        if table.startswith("[site]"):
            (tmp_path / "reporter.toml").write_text(BASE.replace('site = "site"\n', "") + table.replace("{url}", url))
            load_workspace(tmp_path)
        else:
            _load(tmp_path, table.replace("{url}", url))
    message = str(caught.value)
    assert key in message and "user name or a password" in message, message
    assert SECRET not in message and SECRET.lower() not in message.lower()


def test_a_url_with_credentials_exits_2_before_anything_is_written(tmp_path, capsys):
    from reporter import cli
    (tmp_path / "reporter.toml").write_text(f'site = {{ path = "site", base_url = "https://u:{SECRET}@example.org/" }}'
                                            '\n[digest]\npapers = "papers"\nwatchlist = "w.txt"\ncriteria = "c.md"\n')
    before = sorted(tmp_path.rglob("*"))
    assert cli.main(["build", "--workspace", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "[site]: key 'base_url' must not hold a user name or a password" in err and SECRET not in err
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("url", ["https://example.org/a@b", "https://example.org/?q=a@b", "http://127.0.0.1:8000/v1"])
def test_an_at_sign_past_the_host_is_not_a_credential(tmp_path, url):
    assert _load(tmp_path, f'[fetch.openalex]\nbase_url = "{url}"\n').fetch is not None


def test_a_non_ascii_site_host_is_refused_with_its_ascii_spelling(tmp_path):
    """Item 9: the Message-ID's domain is the host; one that is not ASCII broke the build (now refused at load)."""
    with pytest.raises(InputError) as caught:
        (tmp_path / "reporter.toml").write_text(BASE.replace('site = "site"\n', "")
                                                + '[site]\nbase_url = "https://ëxample.org/digest"\n')
        load_workspace(tmp_path)
    message = str(caught.value)
    assert "[site]: key 'base_url'" in message and "https://xn--xample-ova.org/digest" in message, message


@pytest.mark.parametrize("url, complaint", [
    ('https://example.org/x\\"><script>alert(1)</script>', '" < >, which a URL cannot hold'),
    ("https://example.org/{week}", "{ }, which a URL cannot hold"),
    ("https://example.org/a|b", "|, which a URL cannot hold"),
    ("https://example.org:0/v1", "names port 0"),
])
def test_a_url_rfc_3986_has_no_place_for_is_refused(tmp_path, url, complaint):
    """Issue 30, adversarial: a base_url holding `"><script>` was accepted and written raw into every e-mail
    edition's text part; each reader reads such a URL its own way, so it is refused at load, naming the key."""
    with pytest.raises(InputError, match=re.escape(complaint)) as caught:
        _load(tmp_path, f'[fetch.openalex]\nbase_url = "{url}"\n')
    assert "base_url" in str(caught.value)

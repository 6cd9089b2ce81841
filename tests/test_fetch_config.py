"""[fetch] and [fetch.<source>]: each source takes only the keys it uses; errors name the table and the key."""

from __future__ import annotations

import pytest

from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.fetch.config import SOURCES, default_fetch

BASE = 'pool = "p"\nspecs = "s"\nreleases = "r"\nsite = "t"\n'


def _load(tmp_path, extra):
    (tmp_path / "reporter.toml").write_text(BASE + extra)
    return load_workspace(tmp_path)


def test_every_key_parses(tmp_path):
    ws = _load(tmp_path, (
        '[fetch]\ncache_dir = "c"\ntimeout_seconds = 30\nretries = 2\nbackoff_seconds = 0.5\nmax_wait_seconds = 60\n'
        '[fetch.pubmed]\nbase_url = "http://127.0.0.1:9/eutils/"\nquery = "protein[tiab]"\nemail = "a@b.org"\n'
        'api_key_env = "NCBI_API_KEY"\npage_size = 1000\n'
        '[fetch.openalex]\nmailto = "a@b.org"\napi_key_env = "OPENALEX_KEY"\nmin_interval_seconds = 0\n'
        '[fetch.biorxiv]\nquery = "bioinformatics"\n'))
    f = ws.fetch
    assert (f.cache_dir, f.timeout_seconds, f.retries, f.backoff_seconds, f.max_wait_seconds) == (
        tmp_path.resolve() / "c", 30.0, 2, 0.5, 60.0)
    pubmed = f.source("pubmed")
    assert (pubmed.base_url, pubmed.query, pubmed.email, pubmed.api_key_env, pubmed.size) == (
        "http://127.0.0.1:9/eutils", "protein[tiab]", "a@b.org", "NCBI_API_KEY", 1000)
    assert (pubmed.interval(has_key=False), pubmed.interval(has_key=True)) == (1 / 3, 0.1)  # NCBI: 3/s, 10/s
    openalex = f.source("openalex")
    assert (openalex.mailto, openalex.interval(has_key=True), openalex.size) == ("a@b.org", 0.0, 100)
    assert [s.name for s in f.sources] == ["biorxiv", "pubmed", "openalex"]  # SOURCES order
    assert f.source("arxiv").min_interval_seconds == 3.0 and f.source("arxiv").size == 200  # defaults


def test_a_workspace_without_fetch_takes_the_defaults(tmp_path):
    settings = default_fetch(tmp_path)
    assert settings.cache_dir == tmp_path.resolve() / "state" / "fetch-cache" and settings.retries == 5
    assert [settings.source(n).base_url for n in SOURCES] == [
        "https://export.arxiv.org/api/query", "https://api.biorxiv.org", "https://api.biorxiv.org",
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils", "https://api.openalex.org"]


@pytest.mark.parametrize("extra, message", [
    ('[fetch.arxiv]\nmailto = "a@b.org"\n', "[fetch.arxiv]: unknown key 'mailto'; allowed: base_url, "
                                            "min_interval_seconds, page_size, query"),
    ('[fetch.biorxiv]\npage_size = 50\n', "[fetch.biorxiv]: unknown key 'page_size'"),
    ('[fetch.openalex]\nemail = "a@b.org"\n', "[fetch.openalex]: unknown key 'email'"),
    ("[fetch.openalex]\npage_size = 200\n", "[fetch.openalex]: key 'page_size' must be from 1 to 100 (the most the "
                                            "API serves a page), not 200"),
    ("[fetch.arxiv]\npage_size = 0\n", "[fetch.arxiv]: key 'page_size' must be from 1 to 2,000"),
    ('[fetch.pubmed]\nbase_url = "eutils.example"\n', "[fetch.pubmed]: key 'base_url' must be an http:// or "
                                                      "https:// URL"),
    ('[fetch.pubmed]\nquery = " "\n', "[fetch.pubmed]: key 'query' must not be empty"),
    ("[fetch]\nretries = -1\n", "[fetch]: key 'retries' must be from 0 to 100, not -1"),
    ("[fetch]\ntimeout_seconds = 0\n", "[fetch]: key 'timeout_seconds' must be positive, not 0"),
    ("[fetch]\nwait = 1\n", "[fetch]: unknown key 'wait'"),
])
def test_a_key_a_source_does_not_take_or_a_bad_value_is_an_error_naming_it(tmp_path, extra, message):
    with pytest.raises(InputError, match=r"reporter\.toml: ") as caught:
        _load(tmp_path, extra)
    assert message in str(caught.value)

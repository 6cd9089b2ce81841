"""`reporter serve` against a real server on 127.0.0.1 (an ephemeral port), with raw http.client requests.

Issue 8, item 7: only regular files whose resolved path is inside the site
folder are served (no symbolic links out, no listings, no pipes), and a
request must name 127.0.0.1:PORT or localhost:PORT in its Host header (a
DNS-rebinding page names its own host). Item 6: a port out of range is
exit 2 naming --port.
"""

import http.client
import os
import threading

import pytest

from reporter.cli import main
from reporter.site.server import make_server

INDEX = b"<!doctype html><title>site</title><h1>home</h1>"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("serve")
    root = tmp_path / "site"
    (root / "releases" / "r1").mkdir(parents=True)
    (root / "index.html").write_bytes(INDEX)
    (root / "releases" / "r1" / "index.html").write_bytes(b"<h1>r1</h1>")
    (root / "releases" / "r1" / "index.md").write_bytes(b"# r1\n")
    (root / "empty").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"not part of the site")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "index.html").write_bytes(b"outside")
    os.symlink(secret, root / "x")                                  # `ln -s /etc/passwd site/x`
    os.symlink(tmp_path / "outside", root / "out")                  # a folder out of the site
    os.symlink(root / "index.html", root / "alias.html")            # a link that stays inside
    os.symlink(tmp_path / "missing", root / "dangling")
    os.mkfifo(root / "pipe")
    server = make_server(root, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def request(port, path, host="default", method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    if host is not None:
        conn.putheader("Host", f"127.0.0.1:{port}" if host == "default" else host)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, dict(resp.getheaders()), body


def test_serves_the_sites_files(site):
    status, headers, body = request(site, "/index.html")
    assert (status, body) == (200, INDEX)
    assert headers["Content-type"] == "text/html" and headers["Content-Length"] == str(len(INDEX))
    assert request(site, "/")[::2] == (200, INDEX)
    assert request(site, "/releases/r1/")[::2] == (200, b"<h1>r1</h1>")
    assert request(site, "/releases/r1/index.md?x=1#y")[::2] == (200, b"# r1\n")
    status, headers, body = request(site, "/index.html", method="HEAD")
    assert (status, body, headers["Content-Length"]) == (200, b"", str(len(INDEX)))
    assert request(site, "/alias.html")[::2] == (200, INDEX)     # a link whose target is inside the site


def test_a_folder_without_its_slash_is_redirected_once(site):
    status, headers, _ = request(site, "/releases/r1?q=1")
    assert status == 301 and headers["Location"] == "/releases/r1/?q=1"


@pytest.mark.parametrize("path", [
    "/x",                        # a symbolic link to a file outside the site
    "/out/index.html",           # through a linked folder outside the site
    "/out/", "/out",
    "/dangling",
    "/pipe",                     # not a regular file (and never blocks the server)
    "/empty/", "/empty",         # a folder without index.html: no listing
    "/releases/",                # the same, one level down
    "/../secret.txt", "/%2e%2e/secret.txt", "/releases/../../secret.txt",
    "/nothing.html", "/a%00b",
])
def test_nothing_outside_the_site_and_no_listings(site, path):
    status, _, body = request(site, path)
    assert status == 404, path
    assert b"not part of the site" not in body and b"outside" not in body and b"Directory listing" not in body


@pytest.mark.parametrize("host,status", [
    ("evil.example", 421), ("evil.example:{port}", 421), ("127.0.0.1.nip.io:{port}", 421),
    ("127.0.0.1:1", 421), ("localhost", 421), ("127.0.0.1", 421), (None, 400), ("", 400),
])
def test_a_host_header_other_than_this_server_is_refused(site, host, status):
    got, _, body = request(site, "/index.html", host=None if host is None else host.format(port=site))
    assert got == status and INDEX not in body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_this_servers_names_are_answered(site, host):
    assert request(site, "/index.html", host=host.format(port=site))[0] == 200


@pytest.mark.parametrize("port", ["70000", "-1", "65536"])
def test_a_port_out_of_range_is_exit_2_naming_the_flag(tmp_path, capsys, port):
    (tmp_path / "index.html").write_text("x")
    assert main(["serve", "--dir", str(tmp_path), "--port", port]) == 2
    err = capsys.readouterr().err
    assert f"--port {port}: a port is a number from 0 to 65535" in err and "Traceback" not in err


def test_a_folder_without_a_site_is_exit_2(tmp_path, capsys):
    assert main(["serve", "--dir", str(tmp_path / "nothing"), "--port", "0"]) == 2
    assert "no index.html here; render the site first" in capsys.readouterr().err

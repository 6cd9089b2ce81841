"""`reporter mail` against a real SMTP server on 127.0.0.1 that each test starts (aiosmtpd, in the test extra).

A send delivers exactly the site's message (From and To added), to exactly
the recipients of [mail]; it is recorded, so a re-run sends nothing and
`--resend` sends again; a server that refuses (550 on RCPT, 554 on DATA) or
drops the connection in the middle of DATA is exit 2 naming host:port, with
nothing recorded; the login goes over STARTTLS (a throwaway certificate
authority made with the openssl command) or over plain text to loopback only,
the password read from the variable `password_env` names and never shown;
two sends at once send one message.
"""

from __future__ import annotations

import asyncio
import email
import hashlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from email.policy import default as default_policy
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from reporter.cli import main
from reporter.config import load_workspace
from reporter.errors import InputError
from reporter.mail.config import is_loopback
from reporter.mail.send import SENT_RECORD
from reporter.build import render_site
from support.digest import week_document, write_week

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "pw-Zq8!s3cret/never+shown"
PASSWORD_ENV = "REPORTER_TEST_SMTP_PASSWORD"
TO = ["a@example.org", "Bea Two <b@example.org>"]
RECIPIENTS = ["a@example.org", "b@example.org"]


@dataclass(frozen=True)
class Received:
    sender: str
    recipients: tuple[str, ...]
    content: bytes


class Mailbox:
    """An aiosmtpd handler that keeps what it accepts, or refuses as told."""

    def __init__(self, refuse_rcpt: tuple[str, ...] = (), refuse_data: str | None = None, delay: float = 0.0,
                 refuse_mail: str | None = None, quit: str | None = None, rcpt_says: str = "no such user here"):
        self.received: list[Received] = []
        self.refuse_rcpt, self.refuse_data, self.delay = refuse_rcpt, refuse_data, delay
        self.refuse_mail, self.quit, self.rcpt_says = refuse_mail, quit, rcpt_says
        self.quit_seen = threading.Event()

    async def handle_MAIL(self, server, session, envelope, address, mail_options):  # noqa: N802 (aiosmtpd's name)
        if self.refuse_mail:
            return self.refuse_mail
        envelope.mail_from = address
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address in self.refuse_rcpt:
            return f"550 5.1.1 <{address}>: {self.rcpt_says}"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_QUIT(self, server, session, envelope):  # noqa: N802
        """QUIT answered as told: `stall` never answers (until the server stops), any other text is the answer."""
        self.quit_seen.set()
        if self.quit == "stall":
            await asyncio.Event().wait()
        return self.quit or "221 Bye"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        await asyncio.sleep(self.delay)
        if self.refuse_data:
            return self.refuse_data
        self.received.append(Received(envelope.mail_from, tuple(envelope.rcpt_tos), envelope.content))
        return "250 OK: queued"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _login(server, session, envelope, mechanism, auth_data):
    """aiosmtpd's authenticator: bot and PASSWORD (handled=False: aiosmtpd answers a failure with 535)."""
    return AuthResult(success=auth_data.login == b"bot" and auth_data.password == PASSWORD.encode(), handled=False)


@contextmanager
def smtp_server(handler: Mailbox, **options):
    """An aiosmtpd server on 127.0.0.1 for the block; yields its port."""
    port = _free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


class ScriptedServer(threading.Thread):
    """A minimal SMTP server for what aiosmtpd does not stage: a connection dropped in the middle of DATA, or
    a refused login whose answer repeats what the client sent."""

    def __init__(self, *, drop_in_data: bool = False, echo_auth: bool = False, drop_at_quit: bool = False):
        super().__init__(daemon=True)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.drop_in_data, self.echo_auth, self.drop_at_quit = drop_in_data, echo_auth, drop_at_quit
        self.data_lines = 0
        self.accepted = 0

    def run(self):
        conn, _ = self.sock.accept()
        with conn, conn.makefile("rb") as lines:
            conn.sendall(b"220 scripted ESMTP\r\n")
            for line in lines:
                verb = line[:4].upper()
                if verb in (b"EHLO", b"HELO"):
                    conn.sendall(b"250-scripted\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n")
                elif verb == b"AUTH":
                    conn.sendall(b"535 5.7.8 not accepted: " + line.strip()[:200] + b"\r\n" if self.echo_auth
                                 else b"235 2.7.0 ok\r\n")
                elif verb == b"DATA" and self.drop_in_data:
                    conn.sendall(b"354 go ahead\r\n")
                    for _ in range(5):  # a few lines of the message, then the line goes dead
                        lines.readline()
                        self.data_lines += 1
                    return
                elif verb == b"DATA":
                    conn.sendall(b"354 go ahead\r\n")
                    while lines.readline() not in (b".\r\n", b""):
                        self.data_lines += 1
                    self.accepted += 1
                    conn.sendall(b"250 2.0.0 queued\r\n")
                elif verb == b"QUIT":
                    if not self.drop_at_quit:  # else: the line goes dead without an answer
                        conn.sendall(b"221 bye\r\n")
                    return
                else:
                    conn.sendall(b"250 ok\r\n")

    def __enter__(self):
        self.start()
        return self.port

    def __exit__(self, *exc):
        self.sock.close()


BASE_URL = "https://example.org/digest-site"


def built_site(root: Path, base_url: str | None) -> Path:
    """A site with the e-mail editions of 2026-W19 and 2026-W20 (hostile titles), built with `base_url` or not."""
    write_week(root / "digests", week_document("2026-W19", hostile=False, prior=()))
    write_week(root / "digests", week_document("2026-W20"))
    site = f'[site]\npath = "site"\nbase_url = "{base_url}"\n' if base_url else 'site = "site"\n'
    (root / "reporter.toml").write_text(f'pool = "p.jsonl"\nspecs = "specs"\nreleases = "releases"\n{site}')
    render_site(root / "releases", root / "site", digests_dir=root / "digests", progress=False,
                workspace=load_workspace(root))
    return root / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A built site with absolute links ([site] base_url), as a site that sends e-mail is built."""
    return built_site(tmp_path_factory.mktemp("mail_site"), BASE_URL)


def workspace(tmp_path: Path, site: Path, port: int | None, **mail) -> Path:
    """A workspace whose `site` is the built one, with a [mail] table for the port (none when port is None)."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    settings = {"smtp_host": "127.0.0.1", "smtp_port": port, "starttls": False, "from": "Digest <digest@example.org>",
                "to": TO, **mail}
    table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items() if v is not None)
    (ws / "reporter.toml").write_text(f'pool = "p.jsonl"\nspecs = "specs"\nreleases = "releases"\n'
                                      f'site = {json.dumps(str(site))}\n' + (f"[mail]\n{table}" if port else ""))
    return ws


def mail(ws: Path, *flags: str) -> int:
    return main(["mail", "--workspace", str(ws), *flags])


def _record(ws: Path) -> list[dict]:
    path = ws / SENT_RECORD
    return json.loads(path.read_text())["sent"] if path.exists() else []


def _no_password_anywhere(ws: Path, *texts: str) -> None:
    for text in texts:
        assert PASSWORD not in text
    for path in ws.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


# --- sending -------------------------------------------------------------------------------------------


def test_a_send_delivers_exactly_the_sites_message_to_the_recipients(site, tmp_path, capsys):
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 0
    out = capsys.readouterr().out
    assert "2026-W20: sent" in out and "to 2 recipients" in out
    eml = (site / "digest" / "2026-W20.eml").read_bytes()
    [got] = box.received
    assert (got.sender, got.recipients) == ("digest@example.org", tuple(RECIPIENTS))
    assert got.content == b"From: Digest <digest@example.org>\r\nTo: a@example.org, Bea Two <b@example.org>\r\n" + eml
    msg = email.message_from_bytes(got.content, policy=default_policy)
    assert msg["Subject"] == "Weekly digest 2026-W20: 3 papers kept"
    assert msg["From"] == "Digest <digest@example.org>" and msg["To"] == ", ".join(TO)
    plain, html = msg.get_payload()
    assert plain.get_content().replace("\r\n", "\n") == (site / "digest" / "2026-W20.email.txt").read_text()
    assert html.get_content().replace("\r\n", "\n") == (site / "digest" / "2026-W20.email.html").read_text()
    [entry] = _record(ws)
    assert entry["week"] == "2026-W20" and entry["recipients"] == RECIPIENTS
    assert entry["sha256"] == hashlib.sha256(eml).hexdigest() and entry["message_id"] == msg["Message-ID"]
    assert entry["server"] == f"127.0.0.1:{port}"


def test_a_rerun_sends_nothing_and_resend_sends_again(site, tmp_path, capsys):
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 0
        assert mail(ws, "--week", "2026-W20", "--send") == 0
        assert "nothing sent" in capsys.readouterr().out and len(box.received) == 1
        assert mail(ws, "--week", "2026-W20") == 0
        assert "--send sends nothing" in capsys.readouterr().out
        assert mail(ws, "--week", "2026-W20", "--send", "--resend") == 0
        assert mail(ws, "--week", "2026-W20", "--resend") == 0  # --resend implies --send
    assert len(box.received) == 3 and len(_record(ws)) == 3


@pytest.mark.parametrize("refusal, said", [
    ({"refuse_rcpt": tuple(RECIPIENTS)}, "550 5.1.1"),
    ({"refuse_data": "554 5.7.1 message refused: looks like spam"}, "554 5.7.1 message refused"),
])
def test_a_refusing_server_is_exit_2_naming_it_and_nothing_is_recorded(site, tmp_path, capsys, refusal, said):
    box = Mailbox(**refusal)
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and said in err and "nothing was recorded as sent" in err
    assert box.received == [] and _record(ws) == []


def test_a_recipient_refused_while_another_is_accepted_is_recorded_for_the_other(site, tmp_path, capsys):
    box = Mailbox(refuse_rcpt=("b@example.org",))
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    assert "refused b@example.org (550 5.1.1" in capsys.readouterr().err
    [entry] = _record(ws)
    assert entry["recipients"] == ["a@example.org"] and list(entry["refused"]) == ["b@example.org"]
    assert [r.recipients for r in box.received] == [("a@example.org",)]


def test_a_connection_dropped_in_the_middle_of_data_is_exit_2_and_nothing_is_recorded(site, tmp_path, capsys):
    server = ScriptedServer(drop_in_data=True)
    with server as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and "sending the message" in err and "nothing was recorded" in err
    assert server.data_lines == 5 and _record(ws) == []


def test_no_server_is_exit_2_naming_it(site, tmp_path, capsys):
    ws = workspace(tmp_path, site, _free_port())
    assert mail(ws, "--week", "2026-W20", "--send") == 2
    assert "could not connect to 127.0.0.1:" in capsys.readouterr().err and _record(ws) == []


# --- the login and the encryption ---------------------------------------------------------------------


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway certificate authority and a server certificate for 127.0.0.1 it signed: (ca, cert, key)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        if os.environ.get("CI"):
            pytest.fail("the openssl command is needed to test STARTTLS")
        pytest.skip("no openssl command to make a test certificate")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *args: subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=reporter test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-new", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (folder / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                                       "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                                       "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "server.ext")
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


def _tls(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def test_the_login_goes_over_starttls_with_the_password_from_the_environment(site, tmp_path, capsys, monkeypatch):
    ca, cert, key = _certificates(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # the system's trust store, as OpenSSL reads it, holds our CA
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    box = Mailbox()
    with smtp_server(box, tls_context=_tls(cert, key), require_starttls=True, auth_required=True,
                     authenticator=_login) as port:
        ws = workspace(tmp_path, site, port, starttls=True, username="bot", password_env=PASSWORD_ENV)
        assert mail(ws, "--week", "2026-W20") == 0
        dry = capsys.readouterr().out
        assert "STARTTLS, login bot (password from $REPORTER_TEST_SMTP_PASSWORD: set)" in dry
        assert mail(ws, "--week", "2026-W20", "--send", "--json") == 0
        sent = capsys.readouterr()
        monkeypatch.setenv(PASSWORD_ENV, PASSWORD + "-wrong")
        assert mail(ws, "--week", "2026-W19", "--send") == 2
        refused = capsys.readouterr()
    assert json.loads(sent.out)["action"] == "sent" and len(box.received) == 1
    assert f"127.0.0.1:{port} refused the login of bot (535" in refused.err
    assert f"${PASSWORD_ENV}" in refused.err and [e["week"] for e in _record(ws)] == ["2026-W20"]
    _no_password_anywhere(ws, dry, sent.out, sent.err, refused.out, refused.err)


def test_a_server_whose_certificate_is_not_trusted_gets_nothing(site, tmp_path, capsys, monkeypatch):
    _, cert, key = _certificates(tmp_path)
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-ca.pem"))
    box = Mailbox()
    with smtp_server(box, tls_context=_tls(cert, key), require_starttls=True, authenticator=_login) as port:
        ws = workspace(tmp_path, site, port, starttls=True, username="bot", password_env=PASSWORD_ENV)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}: its TLS certificate could not be verified" in err and "SSL_CERT_FILE" in err
    assert box.received == [] and _record(ws) == []


def test_starttls_asked_but_not_offered_sends_nothing(site, tmp_path, capsys, monkeypatch):
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port, starttls=True)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    assert f"127.0.0.1:{port} does not offer STARTTLS" in capsys.readouterr().err and box.received == []


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_the_login_may_go_in_plain_text_to_loopback(site, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    box = Mailbox()
    with smtp_server(box, auth_required=True, auth_require_tls=False, authenticator=_login) as port:
        ws = workspace(tmp_path, site, port, username="bot", password_env=PASSWORD_ENV)
        assert mail(ws, "--week", "2026-W20", "--send") == 0
    captured = capsys.readouterr()
    assert len(box.received) == 1
    _no_password_anywhere(ws, captured.out, captured.err)


def test_a_password_the_server_repeats_is_masked(site, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    with ScriptedServer(echo_auth=True) as port:
        ws = workspace(tmp_path, site, port, username="bot", password_env=PASSWORD_ENV)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    captured = capsys.readouterr()
    assert "refused the login of bot (535 5.7.8 not accepted: AUTH PLAIN" in captured.err
    assert "[password]" in captured.err
    _no_password_anywhere(ws, captured.out, captured.err)


def test_a_missing_password_variable_is_exit_2_before_connecting(site, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    ws = workspace(tmp_path, site, _free_port(), username="bot", password_env=PASSWORD_ENV)
    assert mail(ws, "--week", "2026-W20", "--send") == 2
    assert f"password_env names {PASSWORD_ENV}, which is not set" in capsys.readouterr().err


def test_plain_text_to_a_host_that_is_not_loopback_is_refused_without_connecting(site, tmp_path, capsys,
                                                                                 monkeypatch):
    import smtplib
    monkeypatch.setattr(smtplib, "SMTP", lambda *a, **k: pytest.fail("connected"))
    ws = workspace(tmp_path, site, 25, smtp_host="smtp.example.org")
    assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert "starttls = false would send the password and the mail unencrypted to smtp.example.org:25" in err
    assert "loopback" in err and _record(ws) == []


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST.", True), ("10.0.0.1", False), ("128.0.0.1", False), ("smtp.example.org", False),
    ("localhost.example.org", False), ("::2", False)])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


# --- two runs at once, the dry run, the inputs ----------------------------------------------------------


def test_two_sends_at_once_send_one_message(site, tmp_path):
    box = Mailbox(delay=1.0)
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        argv = [sys.executable, "-m", "reporter.cli", "mail", "--workspace", str(ws), "--week", "2026-W20", "--send"]
        runs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        outs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outs
    assert len(box.received) == 1 and len(_record(ws)) == 1
    assert sorted("nothing sent" in out for out, _ in outs) == [False, True]


def test_the_dry_run_says_what_it_would_send(site, tmp_path, capsys):
    ws = workspace(tmp_path, site, 2525)
    assert mail(ws, "--latest") == 0
    out = capsys.readouterr().out
    eml = site / "digest" / "2026-W20.eml"
    assert f"2026-W20: would send {eml} ({eml.stat().st_size:,} bytes" in out
    for line in ("Subject:    Weekly digest 2026-W20: 3 papers kept", "From:       Digest <digest@example.org>",
                 "To:         a@example.org, Bea Two <b@example.org>", "sent:       not yet"):
        assert line in out
    assert mail(ws, "--week", "2026-W19", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["action"] == "would send" and report["to"] == TO and report["sent"] is None
    assert report["bytes"] == (site / "digest" / "2026-W19.eml").stat().st_size and not (ws / "state").exists()


def test_without_a_mail_table_the_dry_run_works_and_a_send_is_refused(site, tmp_path, capsys):
    ws = workspace(tmp_path, site, None)
    assert mail(ws, "--week", "2026-W20") == 0
    assert "not set: add a [mail] table" in capsys.readouterr().out
    assert mail(ws, "--week", "2026-W20", "--send") == 2
    assert "no [mail] table" in capsys.readouterr().err


@pytest.mark.parametrize("flags, complaint", [
    (("--week", "2026-W18"), "the site holds no e-mail edition of 2026-W18"),
    (("--week", "2026-W99"), "is not an ISO week"),
])
def test_a_week_without_a_message_is_exit_2(site, tmp_path, capsys, flags, complaint):
    ws = workspace(tmp_path, site, 2525)
    assert mail(ws, *flags) == 2
    assert complaint in capsys.readouterr().err


def test_an_edited_message_is_refused(site, tmp_path, capsys):
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    eml = copy / "digest" / "2026-W20.eml"
    eml.write_bytes(eml.read_bytes().replace(b"3 papers kept", b"4 papers kept"))
    ws = workspace(tmp_path, copy, 2525)
    assert mail(ws, "--week", "2026-W20") == 2
    assert "changed since the site was built" in capsys.readouterr().err


@pytest.mark.parametrize("mail_table, complaint", [
    ({"to": []}, "key 'to' must list at least one address"),
    ({"to": ["not an address"]}, "key 'to' holds 'not an address'"),
    ({"from": "a@example.org\r\nBcc: evil@example.org"}, "key 'from' must be one e-mail address"),
    ({"from": "a@example.org, b@example.org"}, "key 'from' must be one e-mail address"),
    ({"username": "bot"}, "key 'password_env' is missing"),
    ({"password_env": PASSWORD_ENV}, "key 'username' is missing"),
    ({"password_env": "NOT A NAME", "username": "bot"}, "must name an environment variable"),
    ({"smtp_port": 70000}, "must be a port from 1 to 65535"),
    ({"smtp_host": "smtp://example.org"}, "must be a host name or an IP address"),
    ({"smtp_host": "smtp.example.org"}, "key 'starttls' is false for a host that is not loopback"),
    ({"tls": True}, "unknown key 'tls'"),
])
def test_a_bad_mail_table_is_refused(site, tmp_path, mail_table, complaint):
    ws = workspace(tmp_path, site, 2525, **mail_table)
    with pytest.raises(InputError, match=None) as caught:
        load_workspace(ws)
    assert complaint in str(caught.value) and "[mail]" in str(caught.value)


# --- sent once: the record is written at the server's 250, before QUIT (issue 30, item 2) ---------------


@pytest.mark.parametrize("quit", ["421 4.3.2 shutting down", "500 what?", "stall"])
def test_a_failed_quit_after_the_server_accepted_is_a_send_and_a_rerun_sends_nothing(site, tmp_path, capsys,
                                                                                      monkeypatch, quit):
    monkeypatch.setattr("reporter.mail.send.QUIT_TIMEOUT", 0.2)  # how long a stalled QUIT is waited for
    box = Mailbox(quit=quit)
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 0
        assert "2026-W20: sent" in capsys.readouterr().out
        assert [e["week"] for e in _record(ws)] == ["2026-W20"]
        assert mail(ws, "--week", "2026-W20", "--send") == 0
        assert "nothing sent" in capsys.readouterr().out
    assert len(box.received) == 1


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_a_run_killed_between_the_servers_250_and_its_quit_has_recorded_the_send(site, tmp_path, capsys,
                                                                                 signal_name):
    import signal
    box = Mailbox(quit="stall")
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        argv = [sys.executable, "-m", "reporter.cli", "mail", "--workspace", str(ws), "--week", "2026-W20", "--send"]
        run = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert box.quit_seen.wait(120), run.communicate(timeout=5)  # the 250 came back; QUIT is waiting
        finally:
            run.send_signal(getattr(signal, signal_name))
            run.communicate(timeout=60)
        assert run.returncode == -getattr(signal, signal_name)
        assert [e["week"] for e in _record(ws)] == ["2026-W20"] and len(box.received) == 1
        box.quit = None
        assert mail(ws, "--week", "2026-W20", "--send") == 0
    assert "nothing sent" in capsys.readouterr().out and len(box.received) == 1


# --- secrets in what the server says (issue 30, item 4) --------------------------------------------------


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
@pytest.mark.parametrize("echo", [PASSWORD, PASSWORD.upper(), PASSWORD.replace("!", "! \t  ")])
def test_a_recipient_refused_with_the_password_in_the_answer_never_stores_or_prints_it(site, tmp_path, capsys,
                                                                                       monkeypatch, echo):
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    box = Mailbox(refuse_rcpt=("b@example.org",), rcpt_says=f"no such user (you logged in with {echo})")
    with smtp_server(box, auth_required=True, auth_require_tls=False, authenticator=_login) as port:
        ws = workspace(tmp_path, site, port, username="bot", password_env=PASSWORD_ENV)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    captured = capsys.readouterr()
    assert "refused b@example.org (550 5.1.1 <b@example.org>: no such user (you logged in with [password])" \
        in captured.err
    [entry] = _record(ws)
    assert entry["refused"]["b@example.org"].endswith("you logged in with [password])")
    for text in (captured.out, captured.err, (ws / SENT_RECORD).read_text()):
        assert PASSWORD.upper() not in text.upper() and "s3cret" not in text.lower()


def test_a_short_password_the_server_repeats_in_auth_plain_is_masked(site, tmp_path, capsys, monkeypatch):
    import base64
    monkeypatch.setenv(PASSWORD_ENV, "pw1")
    with ScriptedServer(echo_auth=True) as port:
        ws = workspace(tmp_path, site, port, username="bot", password_env=PASSWORD_ENV)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert "not accepted: AUTH PLAIN [password])" in err, err
    assert base64.b64encode(b"\0bot\0pw1").decode() not in err


# --- the manifest vouches for the .eml (issue 30, item 8) ------------------------------------------------


def _break_manifest(site: Path, how: str) -> None:
    manifest = site / "manifest.json"
    if how == "missing":
        manifest.unlink()
    elif how == "not JSON":
        manifest.write_text("{not json")
    elif how == "a folder":
        manifest.unlink()
        manifest.mkdir()
    elif how == "without the entry":
        doc = json.loads(manifest.read_text())
        del doc["files"]["digest/2026-W20.eml"]
        manifest.write_text(json.dumps(doc))
    elif how == "a huge file":
        with open(manifest, "r+b") as f:
            f.truncate(1 << 40)  # sparse: never read


@pytest.mark.parametrize("how", ["missing", "not JSON", "a folder", "without the entry", "a huge file"])
def test_an_edition_the_manifest_cannot_vouch_for_is_not_sent(site, tmp_path, capsys, how):
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    _break_manifest(copy, how)
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, copy, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
        assert mail(ws, "--week", "2026-W20") == 2
    err = capsys.readouterr().err
    assert str(copy / "manifest.json") in err and "build the site again" in err, err
    assert box.received == [] and _record(ws) == []


# --- state files read with a cap; a record that is not ours (issue 30, items 9 and 10) -------------------


@pytest.mark.parametrize("record, complaint", [
    ({"sent": [{"week": "2026-W20", "recipients": [1, 2]}]}, "not a record of sent weeks"),
    ({"sent": [{"week": "2026-W20", "recipients": "a@example.org"}]}, "not a record of sent weeks"),
    ({"sent": [{"week": "2026-W20", "sent_at": 5}]}, "not a record of sent weeks"),
    (None, "more than the"),
])
def test_a_sent_record_that_is_not_ours_is_exit_2_naming_it(site, tmp_path, capsys, record, complaint):
    ws = workspace(tmp_path, site, 2525)
    path = ws / SENT_RECORD
    path.parent.mkdir(parents=True)
    if record is None:
        with open(path, "wb") as f:
            f.truncate(1 << 40)
    else:
        path.write_text(json.dumps(record))
    assert mail(ws, "--week", "2026-W20") == 2
    err = capsys.readouterr().err
    assert str(path) in err and complaint in err, err


def test_an_eml_past_the_cap_is_refused_before_it_is_read(site, tmp_path, capsys):
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    with open(copy / "digest" / "2026-W20.eml", "r+b") as f:
        f.truncate(1 << 40)
    ws = workspace(tmp_path, copy, 2525)
    assert mail(ws, "--week", "2026-W20") == 2
    err = capsys.readouterr().err
    assert str(copy / "digest" / "2026-W20.eml") in err and "more than the" in err


# --- messages that point at the right fix (issue 30, item 10) -------------------------------------------


def test_a_421_on_mail_from_says_the_server_is_unavailable_not_check_from(site, tmp_path, capsys):
    box = Mailbox(refuse_mail="421 4.3.2 service not available, closing channel")
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port} is unavailable for now" in err and "try again later" in err, err
    assert "check `from`" not in err and "421 4.3.2 service not available" in err and _record(ws) == []


def test_a_server_that_never_greets_says_so(site, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("reporter.mail.send.TIMEOUT", 0.3)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # the kernel accepts; nobody ever speaks
        ws = workspace(tmp_path, site, silent.getsockname()[1])
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert "accepted the connection but did not greet within 0.3 s" in err and "could not connect" not in err, err


@pytest.mark.parametrize("host", ["127.0.0.1:25", "mail.example.org:587", "[::1]:25", "[mail.example.org]"])
def test_a_port_in_smtp_host_is_refused_naming_smtp_port(site, tmp_path, host):
    ws = workspace(tmp_path, site, 2525, smtp_host=host, starttls=True)
    with pytest.raises(InputError) as caught:
        load_workspace(ws)
    assert "key 'smtp_host'" in str(caught.value) and "smtp_port" in str(caught.value), caught.value


@pytest.mark.parametrize("host, server", [("::1", "[::1]:2525"), ("[::1]", "[::1]:2525"),
                                          ("mail.example.org", "mail.example.org:2525")])
def test_an_ipv6_host_with_or_without_brackets_is_one_host(site, tmp_path, host, server):
    ws = workspace(tmp_path, site, 2525, smtp_host=host, starttls=True)
    assert load_workspace(ws).mail.server == server


def test_a_record_that_cannot_be_written_after_the_servers_250_says_the_week_was_sent(site, tmp_path, capsys,
                                                                                      monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("reporter.mail.send.write_json", full)
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert "accepted the message of 2026-W20" in err and "No space left on device" in err, err
    assert "WAS sent" in err and len(box.received) == 1


def test_a_connection_dropped_at_quit_after_the_servers_250_is_a_send(site, tmp_path, capsys):
    server = ScriptedServer(drop_at_quit=True)
    with server as port:
        ws = workspace(tmp_path, site, port)
        assert mail(ws, "--week", "2026-W20", "--send") == 0
    assert "2026-W20: sent" in capsys.readouterr().out
    assert server.accepted == 1 and [e["week"] for e in _record(ws)] == ["2026-W20"]


# --- issue 33, item 7: relative links, list headers, the Message-ID of a resend -------------------------


def test_relative_links_warn_in_the_dry_run_and_refuse_the_send(tmp_path, capsys):
    """A site built without [site] base_url: the dry run passed silently and --send mailed links to nowhere."""
    relative = built_site(tmp_path / "relative", None)
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, relative, port)
        assert mail(ws, "--week", "2026-W20") == 0
        assert "warning:    its links are relative to the site" in capsys.readouterr().out
        assert mail(ws, "--week", "2026-W20", "--json") == 0
        assert json.loads(capsys.readouterr().out)["relative_links"] is True
        assert mail(ws, "--week", "2026-W20", "--send") == 2
    err = capsys.readouterr().err
    assert "its links are relative to the site" in err and "base_url" in err and "nothing was sent" in err
    assert box.received == [] and _record(ws) == []


def test_the_list_headers_are_put_before_the_message_and_a_resend_keeps_its_message_id(site, tmp_path, capsys):
    box = Mailbox()
    with smtp_server(box) as port:
        ws = workspace(tmp_path, site, port, list_id="Weekly digest <digest.example.org>",
                       unsubscribe=["mailto:digest@example.org?subject=unsubscribe", "https://example.org/u/1"])
        assert mail(ws, "--week", "2026-W20") == 0
        out = capsys.readouterr().out
        assert ("List-Id:    Weekly digest <digest.example.org>; List-Unsubscribe: "
                "mailto:digest@example.org?subject=unsubscribe, https://example.org/u/1") in out
        assert "warning" not in out
        assert mail(ws, "--week", "2026-W20", "--send") == 0
        assert mail(ws, "--week", "2026-W20", "--resend") == 0
    eml = (site / "digest" / "2026-W20.eml").read_bytes()
    first, again = box.received
    assert first.content == again.content and first.content.endswith(b"\r\n" + eml)
    head = email.message_from_bytes(first.content, policy=default_policy)
    assert head["List-Id"] == "Weekly digest <digest.example.org>"
    assert head["List-Unsubscribe"].strip() == "<mailto:digest@example.org?subject=unsubscribe>, <https://example.org/u/1>"
    assert list(head.keys())[:4] == ["From", "To", "List-Id", "List-Unsubscribe"]
    ids = [email.message_from_bytes(m.content, policy=default_policy)["Message-ID"] for m in box.received]
    assert ids[0] == ids[1] and ids[0].endswith("@example.org>")
    dates = [email.message_from_bytes(m.content, policy=default_policy)["Date"] for m in box.received]
    assert dates == ["Mon, 18 May 2026 00:00:00 +0000"] * 2  # the Monday after the week, not the sending time


@pytest.mark.parametrize("key, value", [
    ("list_id", "digest.example.org"), ("list_id", "Digest <not a label>"), ("list_id", "A <b.c>\r\nBcc: x@y.z"),
    ("unsubscribe", ["http://example.org/u"]), ("unsubscribe", ["mailto:a@example.org>, <https://evil"]),
    ("unsubscribe", []), ("unsubscribe", "mailto:a@example.org"),
])
def test_bad_list_headers_are_refused_naming_the_key(site, tmp_path, capsys, key, value):
    ws = workspace(tmp_path, site, 2525, **{key: value})
    assert mail(ws, "--week", "2026-W20") == 2
    assert f"[mail]: key '{key}'" in capsys.readouterr().err

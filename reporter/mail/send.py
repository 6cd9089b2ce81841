"""Sending a week's e-mail edition once: find the built message, send it over SMTP, record it.

The message is the built site's `digest/YYYY-Www.eml` as it is, with the
From and To headers of `[mail]` put before it (the site is public and the
recipients are not, so the site's message has neither). It goes out only
encrypted (STARTTLS, the certificate checked) unless the server is on this
machine. A week is sent once: `state/mail-sent.json` in the workspace lists
each send (week, Message-ID, recipients, the .eml's sha256), written the
moment the server accepted the message (its 250 to DATA), before QUIT, so
that nothing after it (a refused or stalled QUIT, a kill) sends it twice;
the whole check-send-record runs under the state folder's lock, so two runs
at once send one message. The .eml is sent only when the site's manifest
(read by the site's reader, `reporter.site.manifest`) records its sha256.
"""

from __future__ import annotations

import datetime as dt
import json
import smtplib
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import SMTP
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import parse_json, read_capped, write_json
from ..hashing import sha256_bytes
from ..isoweek import is_week, week_start
from ..locks import locked
from ..masking import mask_secret
from ..naming import RELATIVE_LINKS_DOMAIN, email_edition_paths
from ..site.manifest import read_manifest
from .config import MailSettings, cleartext_problem

SENT_RECORD = "state/mail-sent.json"
"""The record of sent weeks, relative to the workspace."""
TIMEOUT = 60.0
"""Seconds the server may take to answer any one command before the send fails."""
QUIT_TIMEOUT = 10.0
"""Seconds the server's answer to QUIT is waited for, once it has accepted the message (whatever it answers, the
message is sent)."""
EML_LIMIT = 64 * 1024 * 1024
"""The largest .eml read (an edition is under 100 kB; mail servers refuse far less than this)."""
RECORD_LIMIT = 16 * 1024 * 1024
"""The largest state/mail-sent.json read (about 400 bytes a send: 40,000 sends)."""
REBUILD = ("build the site again (reporter build, or reporter render) so that its manifest records the e-mail "
           "edition; nothing was sent")
PASSWORD_MARK = "[password]"
"""What the password reads as in any message."""


@dataclass(frozen=True)
class Built:
    """A week's message as the site holds it."""

    week: str
    """The ISO week."""
    path: Path
    """The `.eml` file."""
    data: bytes
    """Its bytes, exactly as sent after the From and To headers."""
    sha256: str
    """sha256 of `data`."""
    subject: str
    """Its Subject."""
    message_id: str
    """Its Message-ID."""
    relative: str = ""
    """Its path in the site (`digest/2026-W25.eml`, a topic's `digest/topics/NAME/2026-W25.eml`)."""

    @property
    def relative_links(self) -> bool:
        """The site was built without `[site] base_url`: the message's links are relative to the site, and lead
        nowhere in a mailbox (its Message-ID's domain says so: `RELATIVE_LINKS_DOMAIN`)."""
        return self.message_id.endswith(f"@{RELATIVE_LINKS_DOMAIN}>")


@dataclass(frozen=True)
class Outcome:
    """What a `reporter mail` run did for one week."""

    built: Built
    """The message."""
    before: tuple[dict[str, Any], ...]
    """The week's earlier sends, as the record lists them (oldest first)."""
    sent: dict[str, Any] | None = None
    """The send this run made (as recorded), or None when it sent nothing."""


def built_weeks(site: Path, root: str = "digest") -> list[str]:
    """The weeks whose message the site holds, oldest first (`root`: a named topic's folder, docs/digest.md)."""
    folder = Path(site) / root
    stems = [p.name.removesuffix(".eml") for p in folder.glob("*.eml")] if folder.is_dir() else []
    return sorted((w for w in stems if is_week(w)), key=week_start)


def find_message(site: Path, week: str, root: str = "digest") -> Built:
    """A week's `.eml` in the built site, checked against the site's manifest; InputError when absent or edited."""
    relative = email_edition_paths(week, root)[2]
    path = Path(site) / relative
    try:
        data = read_capped(path, EML_LIMIT, "the e-mail edition")
    except FileNotFoundError:
        raise InputError(f"{path}: the site holds no e-mail edition of {week}; build the site once the week is "
                         f"published in the digest archive (reporter build, or reporter render --digests ARCHIVE)"
                         ) from None
    sha = sha256_bytes(data)
    manifest = _manifest_entry(Path(site), relative)
    if manifest != sha:
        raise InputError(f"{path}: changed since the site was built (sha256 {sha[:12]}, the manifest says "
                         f"{manifest[:12]}); build the site again rather than editing its files")
    headers = BytesHeaderParser(policy=SMTP).parsebytes(data)
    subject, message_id = str(headers.get("Subject") or ""), str(headers.get("Message-ID") or "")
    if not subject or not message_id or headers.get("From") or headers.get("To"):
        raise InputError(f"{path}: not an e-mail edition as the site writes it (a Subject and a Message-ID, no "
                         f"From or To); build the site again")
    return Built(week, path, data, sha, subject, message_id, relative)


def read_sent(record: Path) -> list[dict[str, Any]]:
    """Every send the record lists, oldest first ([] when there is no record yet)."""
    try:
        data = read_capped(record, RECORD_LIMIT, "the record of sent weeks")
    except FileNotFoundError:
        return []
    doc = parse_json(data, str(record))
    sends = doc.get("sent") if isinstance(doc, dict) else None
    if not isinstance(sends, list) or not all(_a_send(s) for s in sends):
        raise InputError(f"{record}: not a record of sent weeks ({{\"sent\": [{{\"week\": ...}}, ...]}}); restore it "
                         f"(removing it makes every week sendable again)")
    return sends


def _a_send(send: Any) -> bool:
    """Whether a record's entry is a send as `send_week` writes it (every field this command reads, typed)."""
    if not isinstance(send, dict) or not isinstance(send.get("week"), str):
        return False
    texts = all(isinstance(send.get(k, ""), str) for k in ("eml", "sha256", "message_id", "server", "sent_at"))
    recipients, refused = send.get("recipients", []), send.get("refused", {})
    return (texts and isinstance(recipients, list) and all(isinstance(a, str) for a in recipients)
            and isinstance(refused, dict) and all(isinstance(v, str) for v in refused.values()))


def sends_of(sends: Sequence[dict[str, Any]], week: str, eml: str | None = None) -> tuple[dict[str, Any], ...]:
    """The sends of one week (`eml`: of that message only, a topic's week having its own)."""
    return tuple(s for s in sends if s["week"] == week and (eml is None or s.get("eml") == eml))


def plan(root: Path, built: Built) -> Outcome:
    """What sending `built` would do: its earlier sends (nothing is sent)."""
    return Outcome(built, sends_of(read_sent(Path(root) / SENT_RECORD), built.week, built.relative or None))


def send_week(root: Path, settings: MailSettings, built: Built, password: str | None, *, resend: bool,
              now: dt.datetime, tls: ssl.SSLContext | None = None) -> Outcome:
    """Send a week's message unless it was sent (or `resend`), then record it; InputError naming the server on failure.

    `password` is the login's, read from the environment by the caller;
    `now` dates the record; `tls` is the context STARTTLS verifies the server
    with (default: the system's certificate authorities).
    """
    record = Path(root) / SENT_RECORD
    with locked(record.parent):
        sends = read_sent(record)
        before = sends_of(sends, built.week, built.relative or None)
        if before and not resend:
            return Outcome(built, before)
        made: list[dict[str, Any]] = []

        def accepted(refused: dict[str, str]) -> None:
            # The server holds the message (its 250 to DATA): recorded now, before QUIT, so that nothing from
            # here on (QUIT refused or never answered, the run killed) makes a re-run send it again.
            entry = {"week": built.week, "eml": built.relative or email_edition_paths(built.week)[2],
                     "sha256": built.sha256,
                     "message_id": built.message_id, "server": settings.server,
                     "recipients": [a for a in settings.envelope_to if a not in refused],
                     "sent_at": now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
            if refused:
                entry["refused"] = refused
            try:
                write_json(record, {"schema_version": 1, "sent": [*sends, entry]})
            except OSError as exc:
                raise InputError(f"{settings.server} accepted the message of {built.week}, but {record} could not "
                                 f"be written ({exc.strerror or exc}): the week WAS sent and is not recorded; fix the "
                                 f"state folder and do not --send this week again (it would go out twice)") from None
            made.append(entry)

        refused = deliver(settings, password, headed(settings, built.data), tls, accepted)
    entry = made[0]
    if refused:
        shown = "; ".join(f"{a} ({why})" for a, why in refused.items())
        raise InputError(f"{settings.server} accepted the message of {built.week} for "
                         f"{', '.join(entry['recipients'])} but refused {shown}; recorded as sent to the others in "
                         f"{record}. Fix `to` in [mail]; --resend sends it again to every recipient")
    return Outcome(built, before, entry)


def headed(settings: MailSettings, data: bytes) -> bytes:
    """The message with the From and To headers of `settings` before it (encoded by the SMTP policy)."""
    head = EmailMessage(policy=SMTP)
    head["From"] = settings.sender
    head["To"] = ", ".join(settings.to)
    if settings.list_id:
        head["List-Id"] = settings.list_id
    if settings.unsubscribe:
        head["List-Unsubscribe"] = ", ".join(f"<{u}>" for u in settings.unsubscribe)
    return bytes(head).removesuffix(b"\r\n") + data


def deliver(settings: MailSettings, password: str | None, message: bytes, tls: ssl.SSLContext | None = None,
            accepted: Callable[[dict[str, str]], None] | None = None) -> dict[str, str]:
    """Send one message; the recipients refused while the others were accepted (address -> answer).

    `accepted` is called with them the moment the server has accepted the
    message, before QUIT; what QUIT gets back after that does not matter.
    Any failure before it is an InputError naming the server, what it was
    doing and what to fix; the password is masked in every answer.
    """
    if problem := cleartext_problem(settings):
        raise InputError(f"[mail]: {problem}")
    smtp = _Client(timeout=TIMEOUT)
    step = "connecting"
    try:
        code, said = smtp.connect(settings.smtp_host, settings.smtp_port)
        if code != 220:
            raise smtplib.SMTPConnectError(code, said)
        step = "greeting it"
        smtp.ehlo()
        if settings.starttls:
            step = "starting TLS"
            if not smtp.has_extn("starttls"):
                raise InputError(f"{settings.server} does not offer STARTTLS, so nothing was sent (the password "
                                 f"and the mail never go unencrypted over a network); use a server or port that "
                                 f"offers it (587, submission)")
            smtp.starttls(context=tls or ssl.create_default_context())
            smtp.ehlo()
        if settings.username is not None:
            step = f"logging in as {settings.username}"
            smtp.login(settings.username, password or "")
        step = "sending the message"
        refused = smtp.sendmail(settings.envelope_from, list(settings.envelope_to), message)
    except (smtplib.SMTPException, OSError, UnicodeEncodeError) as exc:
        _quit(smtp)
        if step == "connecting" and smtp.connected:
            step = "waiting for its greeting"
        raise InputError(_masked(_failure(settings, step, exc), settings, password)) from None
    except BaseException:
        _quit(smtp)
        raise
    answers = {a: _masked(_answer(code, text), settings, password) for a, (code, text) in refused.items()}
    try:
        if accepted is not None:
            accepted(answers)
    finally:
        _quit(smtp)
    return answers


class _Client(smtplib.SMTP):
    """smtplib's client, knowing whether the TCP connection was made (a server that never greets is not one
    that could not be reached)."""

    connected = False

    def connect(self, host: str = "localhost", port: int = 0, source_address: Any = None) -> tuple[int, bytes]:
        self._host = host  # what STARTTLS checks the certificate against (set by the constructor otherwise)
        return super().connect(host, port, source_address)

    def _get_socket(self, host: str, port: int, timeout: float) -> Any:
        sock = super()._get_socket(host, port, timeout)
        self.connected = True
        return sock


def _quit(smtp: smtplib.SMTP) -> None:
    """Say QUIT, waiting QUIT_TIMEOUT for the answer and ignoring it, then close."""
    try:
        if smtp.sock is not None:
            smtp.sock.settimeout(QUIT_TIMEOUT)
            smtp.docmd("QUIT")
    except (smtplib.SMTPException, OSError):
        pass
    finally:
        smtp.close()


def _masked(text: str, settings: MailSettings, password: str | None) -> str:
    """What a server said, or a message holding it, with the password masked in every form (reporter.masking)."""
    return mask_secret(text, password, PASSWORD_MARK, user=settings.username)


NOTHING = "nothing was recorded as sent"
FAILURES: tuple[tuple[type[BaseException], str], ...] = (
    (smtplib.SMTPAuthenticationError, "{server} refused the login of {username} ({said}); check `username` in "
                                      "[mail] and the password in ${password_env}"),
    (smtplib.SMTPNotSupportedError, "{server} does not support what reporter asked while {step} ({said}); a login "
                                    "needs the server to offer AUTH (remove username and password_env from [mail] "
                                    "if it takes none)"),
    (smtplib.SMTPSenderRefused, "{server} refused the sender {sender} ({said}); check `from` in [mail]; {nothing}"),
    (smtplib.SMTPRecipientsRefused, "{server} refused every recipient: {recipients}; check `to` in [mail]; {nothing}"),
    (smtplib.SMTPServerDisconnected, "{server} closed the connection while {step}, before it accepted the message "
                                     "({said}); {nothing}: run the command again once the server works"),
    (smtplib.SMTPResponseException, "{server} refused while {step}: {said}; {nothing}; what the server says is what "
                                    "to fix"),
    (ssl.SSLCertVerificationError, "{server}: its TLS certificate could not be verified ({said}); it must be valid "
                                   "for {host} and signed by an authority this machine trusts (for a private one, "
                                   "export SSL_CERT_FILE=/path/to/ca.pem); {nothing}"),
    (ssl.SSLError, "{server}: the TLS handshake failed ({said}); check smtp_port in [mail] (port 465 speaks TLS from "
                   "the first byte, which reporter does not: use 587 with starttls = true); {nothing}"),
    (UnicodeEncodeError, "{server}: the username or the password in ${password_env} holds characters that are not "
                         "ASCII, which SMTP AUTH cannot send here; {nothing}"),
    (OSError, "the connection to {server} failed while {step} ({said}); {nothing}: run the command again"),
    (smtplib.SMTPException, "{server}: {said} (while {step}); {nothing}"),
)
"""What each failure says, first match wins: what went wrong, then what to fix."""
CONNECT_FAILED = ("could not connect to {server} ({said}); check smtp_host and smtp_port in [mail] and that the server "
                  "runs")
NO_GREETING = ("{server} accepted the connection but did not greet within {timeout:g} s ({said}); check smtp_port in "
               "[mail] (587 or 25: port 465 speaks TLS first, which reporter does not), or try again once the server "
               "answers; {nothing}")
SILENT = ("{server} did not answer within {timeout:g} s while {step}, before it accepted the message; {nothing}: run "
          "the command again once the server answers")
TEMPORARY = ("{server} is unavailable for now ({said}, while {step}): a 4xx answer is temporary; try again "
             "later; {nothing}")


def _failure(settings: MailSettings, step: str, exc: Exception) -> str:
    """What went wrong while `step`, and what to fix (FAILURES)."""
    if isinstance(exc, smtplib.SMTPResponseException):
        said = _answer(exc.smtp_code, exc.smtp_error)
    else:
        said = getattr(exc, "verify_message", None) or str(exc) or "no answer"
    recipients = getattr(exc, "recipients", {})
    fields = {"server": settings.server, "host": settings.smtp_host, "username": settings.username,
              "password_env": settings.password_env, "step": step, "said": said, "nothing": NOTHING,
              "sender": getattr(exc, "sender", ""), "timeout": TIMEOUT,
              "recipients": "; ".join(f"{a} ({_answer(c, t)})" for a, (c, t) in recipients.items())}
    codes = ([c for c, _ in recipients.values()] if isinstance(exc, smtplib.SMTPRecipientsRefused)
             else [exc.smtp_code] if isinstance(exc, smtplib.SMTPResponseException) else [])
    if codes and all(400 <= c < 500 for c in codes):
        return TEMPORARY.format(**{**fields, "said": fields["recipients"] or said})
    if step == "waiting for its greeting":
        return NO_GREETING.format(**fields)
    if isinstance(exc, OSError) and not isinstance(exc, ssl.SSLError) and step == "connecting":
        return CONNECT_FAILED.format(**fields)
    if isinstance(exc, TimeoutError) or isinstance(exc.__context__, TimeoutError):
        return SILENT.format(**fields)
    return next(text for kind, text in FAILURES if isinstance(exc, kind)).format(**fields)


def _answer(code: int, text: bytes | str) -> str:
    """A server's answer as one line: `550 5.1.1 no such user`."""
    said = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return json.dumps(f"{code} {' '.join(said.split())}", ensure_ascii=False)[1:-1]




def _manifest_entry(site: Path, relative: str) -> str:
    """The sha256 the site's manifest records for a file; InputError when the manifest cannot say (missing,
    unreadable, not the site's, or without the file): an edition nothing vouches for is not sent."""
    try:
        manifest = read_manifest(site)
    except InputError as exc:  # too large, a folder, a FIFO
        raise InputError(f"{exc}; {REBUILD}") from None
    if manifest.problem is not None:
        raise InputError(f"{manifest.path}: {manifest.problem}, so nothing vouches for {relative}; {REBUILD}")
    sha = manifest.sha256(relative)
    if sha is None:
        raise InputError(f"{manifest.path}: records no sha256 for {relative}, so nothing vouches for it; {REBUILD}")
    return sha


__all__ = ["SENT_RECORD", "Built", "Outcome", "built_weeks", "deliver", "find_message", "headed", "plan",
           "read_sent", "send_week", "sends_of"]

"""`reporter mail`: show what a week's e-mail would be, or send it once (`--send`) through the SMTP server of [mail]."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..digest.config import DEFAULT_TOPIC
from ..errors import InputError
from ..plurals import count

if TYPE_CHECKING:  # the workspace loader is imported when the command runs, so `reporter mail --help` is quick
    from ..config import Workspace

MAIL_EPILOG = """\
examples (in the example workspace, after `reporter build`):
  reporter mail --workspace . --latest
  reporter mail --workspace . --latest --json

The first prints what the newest week's e-mail would be and where it would
go; the second the same as one JSON object. With [mail] set up, a line such
as `reporter mail --week 2026-W20 --send` sends the week once, and --resend
sends it again.

Without --send nothing is sent: the command prints the message the site
holds for the week (digest/YYYY-Www.eml: its Subject, size and sha256), who
it would go to (From and To of [mail]), through which server, and whether
the week was sent already. With --send it sends that message, once: a week
recorded in state/mail-sent.json is not sent again unless --resend.

[mail] in reporter.toml (docs/digest.md, "Sending it"):
  smtp_host, smtp_port (587), starttls (true), username, password_env (the
  NAME of the variable holding the password), from, to (a list), list_id
  (the List-Id header) and unsubscribe (a list of mailto: or https: URLs,
  the List-Unsubscribe header), both put before the message as it is sent
An edition built without [site] base_url has relative links: the dry run
warns, and --send refuses it.
The password is read from that variable and never written or printed.
starttls = false is refused unless smtp_host is this machine (127.0.0.1,
::1, localhost).

The week is recorded the moment the server accepts the message (before
QUIT), so a refused or stalled QUIT, or a run killed after it, never sends
it twice. The .eml goes out only if the site's manifest (at the site's
root) records its sha256 (rebuild the site otherwise).

Exit status: 0 sent, or nothing to send (a dry run, or a week already sent);
2 for bad input (no message for the week, a manifest that cannot vouch for
it, a bad [mail]) or a server that refused the message or dropped the
connection before accepting it (the message names host:port and what to fix;
nothing is recorded as sent).
"""


def register(subparsers: Any) -> None:
    """Add the `mail` command."""
    p = subparsers.add_parser(
        "mail", help="send a digest week's e-mail edition through SMTP, once (a dry run without --send)",
        description="Send the built site's e-mail edition of a digest week (digest/YYYY-Www.eml) to the "
                    "recipients of [mail] through its SMTP server, and record it so that a week is sent "
                    "once (docs/digest.md).",
        epilog=MAIL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="folder with reporter.toml (default .): its site, its [mail] table and its state/")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--week", metavar="YYYY-Www", help="the digest week to send")
    which.add_argument("--latest", action="store_true", help="the newest week whose e-mail the site holds")
    p.add_argument("--send", action="store_true", help="send it (without: print what would be sent)")
    p.add_argument("--resend", action="store_true",
                   help="send it even if state/mail-sent.json records it as sent (implies --send)")
    p.add_argument("--topic", metavar="NAME", default=DEFAULT_TOPIC,
                   help=f"a named digest topic's edition ([digest.topics.NAME]), to its recipients (default "
                        f"{DEFAULT_TOPIC!r}: the [digest] table's own, to [mail] to)")
    p.add_argument("--json", action="store_true", help="print what was (or would be) sent as one JSON object")
    p.set_defaults(func=run_mail)


def run_mail(args: argparse.Namespace) -> int:
    """Find the week's message, then print it (dry run) or send it once; the password is read here, at the edge."""
    from ..config import load_workspace
    from ..hashing import canonical_json
    from ..isoweek import parse_week
    from ..mail.send import SENT_RECORD, built_weeks, find_message, plan, send_week

    ws = load_workspace(args.workspace)
    root, ws = _topic(ws, args.topic)
    if args.latest:
        weeks = built_weeks(ws.site, root)
        if not weeks:
            raise InputError(f"{ws.site / 'digest'}: the site holds no e-mail edition yet; build it with a "
                             f"published digest week (reporter build)")
        week = weeks[-1]
    else:
        week = parse_week(args.week)
    built = find_message(ws.site, week, root)
    sending = args.send or args.resend
    if not sending:
        outcome = plan(ws.root, built)
    else:
        if ws.mail is None:
            raise InputError(f"{ws.file}: no [mail] table, so there is nowhere to send {week}; add one (smtp_host, "
                             f"smtp_port, starttls, username, password_env, from, to: docs/digest.md)")
        if built.relative_links:
            raise InputError(f"{built.path}: its links are relative to the site (it was built without [site] "
                             f"base_url), so they lead nowhere in a mailbox; nothing was sent. Give reporter.toml a "
                             f"[site] table with base_url (where the site is published) and build again")
        from ..runs import start_command_run, state_of
        password = _password(ws)
        run = start_command_run(args, state_of(ws.root), os.environ, [password])
        outcome = send_week(ws.root, ws.mail, built, password, resend=args.resend,
                            now=dt.datetime.now(dt.timezone.utc))
        if outcome.sent is not None:
            from ..runs import settings_json
            run.write("mail", "done", inputs=[run.ref("message", built.path)],
                      outputs=[run.ref("sent record", ws.root / SENT_RECORD)], settings=settings_json(ws.mail),
                      counts={"sent": 1, "recipients": len(ws.mail.to), "resend": int(bool(args.resend))})
    report = _report(ws, outcome, sending, ws.root / SENT_RECORD)
    print(canonical_json(report) if args.json else _text(report))
    return 0


def _topic(ws: Workspace, name: str) -> tuple[str, Workspace]:
    """The site folder of the topic's editions, and the workspace with [mail] to set to its recipients (when it
    names any); the default topic's are `digest` and the workspace as it is."""
    if name == DEFAULT_TOPIC:
        return "digest", ws
    if ws.digest is None:
        raise InputError(f"{ws.file}: no [digest] table, so no topic {name!r}")
    from ..site.digest_views import topic_root
    topic = ws.digest.topic(name)  # refuses an unknown name, listing the topics
    recipients = next(t.recipients for t in ws.digest.topics if t.name == name)
    mail = ws.mail if ws.mail is None or not recipients else dataclasses.replace(ws.mail, to=recipients)
    return topic_root(topic.name), dataclasses.replace(ws, mail=mail)


def _password(ws: Workspace) -> str | None:
    """The login's password from the variable [mail] password_env names (None without a login)."""
    mail = ws.mail
    if mail.username is None:
        return None
    password = os.environ.get(mail.password_env, "")
    if not password:
        raise InputError(f"{ws.file}: [mail] password_env names {mail.password_env}, which is not set; export it "
                         f"with the password of {mail.username} (the password itself is never written anywhere)")
    return password


def _report(ws: Workspace, outcome: Any, sending: bool, record: Path) -> dict[str, Any]:
    """What the run did or would do, as the JSON output holds it (the text output is made from it)."""
    built, mail = outcome.built, ws.mail
    if outcome.sent is not None:
        action = "sent"
    elif sending:
        action = "already sent"
    else:
        action = "would send again" if outcome.before else "would send"
    server = None
    if mail is not None:
        server = {"address": mail.server, "starttls": mail.starttls, "username": mail.username,
                  "password_env": mail.password_env,
                  "password_set": bool(os.environ.get(mail.password_env)) if mail.password_env else None}
    return {"week": built.week, "action": action, "relative_links": built.relative_links,
            "list_id": mail.list_id if mail else None, "unsubscribe": list(mail.unsubscribe) if mail else [],
            "eml": str(built.path), "bytes": len(built.data),
            "sha256": built.sha256, "subject": built.subject, "message_id": built.message_id,
            "from": mail.sender if mail else None, "to": list(mail.to) if mail else None, "server": server,
            "sent_before": list(outcome.before), "sent": outcome.sent, "record": str(record)}


def _text(r: dict[str, Any]) -> str:
    """The report for a person."""
    lines = [f"{r['week']}: {r['action']} {r['eml']} ({r['bytes']:,} bytes, sha256 {r['sha256'][:12]})",
             f"  Subject:    {r['subject']}", f"  Message-ID: {r['message_id']}"]
    if r["from"] is None:
        lines.append("  From, To:   not set: add a [mail] table to reporter.toml to send (docs/digest.md)")
    else:
        lines += [f"  From:       {r['from']}", f"  To:         {', '.join(r['to'])}"]
        s = r["server"]
        login = (f", login {s['username']} (password from ${s['password_env']}: "
                 f"{'set' if s['password_set'] else 'not set'})" if s["username"] else ", no login")
        lines.append(f"  server:     {s['address']}, {'STARTTLS' if s['starttls'] else 'unencrypted (loopback)'}"
                     f"{login}")
    if r["list_id"] or r["unsubscribe"]:
        lines.append(f"  List-Id:    {r['list_id'] or 'not set'}; List-Unsubscribe: "
                     f"{', '.join(r['unsubscribe']) or 'not set'}")
    elif r["from"] is not None:
        lines.append("  List-Id, List-Unsubscribe: not set (list_id, unsubscribe in [mail])")
    if r["relative_links"]:
        lines.append("  warning:    its links are relative to the site (built without [site] base_url): they lead "
                     "nowhere in a mailbox, and --send refuses it; set base_url and build again")
    for before in r["sent_before"]:
        changed = "" if before.get("sha256") == r["sha256"] else " (the .eml has changed since)"
        lines.append(f"  sent:       {before.get('sent_at')} to {', '.join(before.get('recipients', []))}"
                     f" through {before.get('server')}{changed}")
    if r["sent"] is not None:
        lines.append(f"  sent now:   to {count(len(r['sent']['recipients']), 'recipient')}; recorded in "
                     f"{r['record']}")
    elif r["action"] == "already sent":
        lines.append("  nothing sent: the week was sent already (--resend sends it again)")
    elif not r["sent_before"]:
        lines.append("  sent:       not yet; --send sends it")
    else:
        lines.append("  --send sends nothing (the week was sent); --resend sends it again")
    return "\n".join(lines)

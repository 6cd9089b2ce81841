"""The digest's e-mail edition: per published week, `digest/YYYY-Www.email.html`, `.email.txt` and `.eml`.

Built from the same `DigestWeek` as the week page (its decisions.json, nothing
else), then rendered by two template environments of env.py: the HTML one
(autoescaped, the pages' `html_finalize`) and the plain-text one (every
value through `one_line`: control characters and bidi controls dropped, no
Markdown escapes). The HTML has inline styles only: no script, no <link>, no
image, no web font. The `.eml` is a multipart/alternative message of the two,
made with the standard `email` package (policy SMTP, so no data can open a
header), whose every byte follows from the week: the boundary and the
Message-ID are taken from the sha256 of its parts, the Date is the Monday
after the week (00:00 UTC), never the clock. It carries no From or To: the
site is public and the recipients are not; `reporter mail` adds both from
`[mail]` as it sends (docs/digest.md, "The e-mail edition").

The three files are archived beside the week page (never rewritten), so they
too show only what the week's folder holds.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from email.message import EmailMessage, MIMEPart
from email.policy import SMTP
from typing import Any

from ..digest.archive import Decision
from ..errors import InternalError
from ..hashing import sha256_text
from ..isoweek import week_start
from ..naming import RELATIVE_LINKS_DOMAIN, email_edition_paths
from ..plurals import count
from .digest_groups import CAUSES
from .digest_pages import DigestWeek, paper_anchor, shown_title, week_dates, week_path
from .env import context, email_html_env, text_env
from .links import href, paper_href
from .models.email import EmailClose, EmailCount, EmailEdition, EmailPaper
from .paper_text import authors_line, cut, flat, snippet

TEMPLATE = "digest_week"
"""templates/email/digest_week.html and .txt."""
REVIEW_SHOWN = 10
"""The REVIEWs the e-mail lists (the first ones, in the order of decisions.json); the rest are counted."""
EMAIL_CLOSE = 3
"""The papers of "close in meaning, missed by the watchlist" the e-mail lists (the most similar)."""
TITLE_CHARS = 200
RATIONALE_CHARS = 300
FOOTER = ("Each paper's key marks it for the digest's editor: \"wanted KEY\" or \"not wanted KEY\" "
          "(reporter feedback) tells the digest what you read. To stop receiving this digest, use your mail "
          "program's unsubscribe link (List-Unsubscribe) or reply to the sender.")
"""The closing line of a week decided with keys (rules `digest.4`)."""
MESSAGE_DOMAIN = RELATIVE_LINKS_DOMAIN
"""The Message-ID's domain without `[site] base_url` (RFC 2606: a name that is never anyone's)."""


def build_email_edition(week: DigestWeek, base_url: str | None = None) -> EmailEdition:
    """One week as an e-mail; links to the week page absolute under `base_url` (`[site] base_url`), else relative."""
    w, ds = week.week, week.archived.decisions.decisions
    html_path = email_edition_paths(w, week.root)[0]

    def entry(anchor: str = "") -> str:
        if base_url:
            return f"{base_url}/{week_path(w, week.root)}.html" + (f"#{anchor}" if anchor else "")
        return href(html_path.removesuffix(".html"), week_path(w, week.root), anchor).html

    def paper(d: Decision, with_snippet: bool = True) -> EmailPaper:
        # Every value flat, on one line: the HTML file is then the message's HTML part exactly (a message's
        # lines end in CRLF whatever the data held).
        link = paper_href((d.id, *d.merged_ids))
        # A week with keys (rules digest.4) says the decisive reason first: the criteria line before the match.
        why = decisive_first(d.rationale) if d.key else d.rationale
        return EmailPaper(id=flat(d.id), title=shown_title(d, TITLE_CHARS), href=link.html if link else None,
                          entry=entry(paper_anchor(d.id)), score=d.score, authors=authors_line(d.authors),
                          snippet=snippet(d.abstract) if with_snippet else "", why=cut(flat(why), RATIONALE_CHARS),
                          key=d.key or "")

    keep = tuple(paper(d) for d in ds if d.decision == "KEEP")
    reviews = [d for d in ds if d.decision == "REVIEW"]
    causes = Counter(d.cause for d in ds if d.decision == "DROP")
    return EmailEdition(
        week=w, dates=week_dates(w), subject=_subject(week, len(keep)),
        keep=keep, review=tuple(paper(d, False) for d in reviews[:REVIEW_SHOWN]), review_total=len(reviews),
        review_more=max(len(reviews) - REVIEW_SHOWN, 0),
        dropped=tuple(EmailCount(label, causes[cause]) for cause, (label, _) in CAUSES.items() if causes[cause]),
        dropped_total=sum(causes.values()), page=entry(), review_page=entry("review"),
        footer=FOOTER if any(d.key for d in ds) else "", **close_part(week, entry))


def close_part(week: DigestWeek, entry: Callable[..., str]) -> dict[str, Any]:
    """The e-mail's "close in meaning" fields: the first EMAIL_CLOSE of the week's list; {} without one."""
    close = week.archived.close
    if close is None:
        return {}
    by_id = {d.id: d for d in week.archived.decisions.decisions}
    rows = tuple(EmailClose(
        id=flat(e.id), title=cut(flat(by_id[e.id].title), TITLE_CHARS), decision=by_id[e.id].decision,
        entry=entry(paper_anchor(e.id)) if by_id[e.id].decision == "REVIEW" else entry("close"),
        similarity=f"{e.similarity:.4f}", concept=flat(e.concept or e.nearest_concept),
        phrase=flat(e.suggested_phrase or "")) for e in close[:EMAIL_CLOSE])
    return {"close": rows, "close_total": len(close), "close_page": entry("close")}


def decisive_first(rationale: str) -> str:
    """A rationale with its `criteria: ` part moved before its `match: ` part: the head says the decisive reason,
    and the concept line it rests on then comes before the phrases that matched, so a cut at RATIONALE_CHARS
    keeps it (docs/digest.md, "Rationales": head; match; criteria; novelty). A rationale not of that shape is
    left as it is."""
    at_match = rationale.find("; match: ")
    at_criteria = rationale.find("; criteria: ", at_match + 1)
    at_novelty = rationale.rfind("; novelty: ")
    if not 0 <= at_match < at_criteria < at_novelty:
        return rationale
    return (rationale[:at_match] + rationale[at_criteria:at_novelty] + rationale[at_match:at_criteria]
            + rationale[at_novelty:])


def render_email(edition: EmailEdition) -> tuple[str, str]:
    """The edition as (HTML, plain text)."""
    variables = context(edition)
    return (email_html_env().get_template(f"{TEMPLATE}.html").render(variables),
            text_env().get_template(f"{TEMPLATE}.txt").render(variables))


def message_domain(base_url: str | None) -> str:
    """The Message-ID's right-hand side from `[site] base_url`'s host (RFC 5322 `id-right`): a name without the
    root's trailing dot, an IP address as a domain literal (`[192.0.2.1]`, `[IPv6:::1]`)."""
    host = (urllib.parse.urlsplit(base_url).hostname or "").rstrip(".") if base_url else ""
    if not host:
        return MESSAGE_DOMAIN
    if ":" in host:
        return f"[IPv6:{host}]"
    if all(part.isdigit() for part in host.split(".")):
        return f"[{host}]"
    return host


def email_message(edition: EmailEdition, html: str, text: str, base_url: str | None = None) -> bytes:
    """The .eml: multipart/alternative of the text and the HTML, every byte from the content (CRLF line ends)."""
    digest = sha256_text("\0".join((edition.subject, text, html)))
    domain = message_domain(base_url)
    msg = EmailMessage(policy=SMTP)
    msg["Subject"] = edition.subject
    msg["Date"] = email.utils.format_datetime(message_date(edition.week))
    msg["Message-ID"] = f"<digest-{edition.week}.{digest[:24]}@{domain}>"
    msg["MIME-Version"] = "1.0"
    msg.make_alternative()
    for body, subtype in ((text, "plain"), (html, "html")):
        part = MIMEPart(policy=SMTP)
        part.set_content(body, subtype=subtype, cte="quoted-printable")
        msg.attach(part)
    # `=_` never occurs in quoted-printable text (an `=` there is followed by hex digits or a line end).
    msg.set_boundary(f"=_digest_{digest[32:64]}")
    data = msg.as_bytes()
    if data.count(b"--=_digest_") != 3:
        raise InternalError(f"{edition.week}: the e-mail's boundary occurs in its content")
    return data


def email_files(week: DigestWeek, base_url: str | None = None) -> list[tuple[str, bytes]]:
    """A week's three e-mail files as (site path, bytes): the HTML, the text and the message of both."""
    edition = build_email_edition(week, base_url)
    html, text = render_email(edition)
    paths = email_edition_paths(week.week, week.root)
    return [(paths[0], html.encode("utf-8")), (paths[1], text.encode("utf-8")),
            (paths[2], email_message(edition, html, text, base_url))]


def email_archive(weeks: Sequence[DigestWeek], base_url: str | None = None) -> tuple[tuple[str, bytes], ...]:
    """The e-mail files of every week, for the site writer to archive beside the week pages."""
    return tuple(f for week in weeks for f in email_files(week, base_url))


def message_date(week: str) -> dt.datetime:
    """The Date of a week's message: the Monday after it, 00:00 UTC (the first moment the week is over)."""
    return dt.datetime.combine(week_start(week) + dt.timedelta(days=7), dt.time(0), tzinfo=dt.timezone.utc)


__all__ = ["EMAIL_CLOSE", "REVIEW_SHOWN", "build_email_edition", "decisive_first", "email_archive", "email_files",
           "email_message", "message_date",
           "render_email"]


def _subject(week: DigestWeek, kept: int) -> str:
    """`Weekly digest 2026-W20: 3 papers kept`; a named topic's title after the week (`TITLE, 3 papers kept`)."""
    topic = week.archived.head.settings.topic
    return f"Weekly digest {week.week}: {'' if topic is None else flat(topic[1]) + ', '}{count(kept, 'paper')} kept"

"""The digest's e-mail edition of one week (templates/email/digest_week.html and .txt)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmailPaper:
    """One KEEP or REVIEW of the week, as the e-mail shows it."""

    id: str
    """The surviving id (scheme-prefixed)."""
    title: str
    """The title on one line (shortened to 200 characters at a word: the week page has it whole)."""
    href: str | None
    """The paper's own page (doi.org, arxiv.org/abs, ...), built from its ids alone; None when none gives one."""
    entry: str
    """Its entry on the week page (absolute with `[site] base_url`, else relative to the e-mail's file)."""
    score: int
    """0-100."""
    authors: str
    """The first three authors (each shortened to 60 characters) and "et al." when there are more; empty when
    the record named none."""
    snippet: str
    """The start of the abstract, cut at a word with an ellipsis; empty for a REVIEW or a paper without one."""
    why: str
    """The decision's rationale (shortened to 300 characters; the week page has it whole)."""
    key: str = ""
    """The paper's short key (`reporter feedback --wanted KEY`); empty for a week decided before keys."""


@dataclass(frozen=True)
class EmailClose:
    """A paper not KEEP close in meaning to the In scope concepts (the week page's list, the first few)."""

    id: str
    """The surviving id."""
    title: str
    """The title on one line (shortened to 200 characters)."""
    entry: str
    """Its entry on the week page when it is a REVIEW, else the week page's list."""
    decision: str
    """REVIEW or DROP, unchanged."""
    similarity: str
    """4 decimals."""
    concept: str
    """The nearest In scope concept, quoted."""
    phrase: str
    """The watchlist phrase it suggests, or empty."""


@dataclass(frozen=True)
class EmailCount:
    """The DROPs of one cause, counted."""

    label: str
    """The cause in words (`Look-alike trap`)."""
    count: int
    """How many papers were dropped for it."""


@dataclass(frozen=True)
class EmailEdition:
    """One published week as an e-mail: every KEEP, the first REVIEWs, the DROPs counted; archived like its page."""

    week: str
    """The ISO week, `YYYY-Www`."""
    dates: str
    """Its Monday to Sunday."""
    subject: str
    """The message's Subject: the week and the kept count."""
    keep: tuple[EmailPaper, ...]
    """Every KEEP, in the order of decisions.json."""
    review: tuple[EmailPaper, ...]
    """The first REVIEWs (at most REVIEW_SHOWN), in the order of decisions.json."""
    review_total: int
    """Every REVIEW of the week."""
    review_more: int
    """The REVIEWs not shown (review_total less those shown)."""
    dropped: tuple[EmailCount, ...]
    """The DROPs counted by cause, in DROP_CAUSES order (only causes with papers)."""
    dropped_total: int
    """Every DROP of the week."""
    page: str
    """The full week page (absolute with `[site] base_url`, else relative to the e-mail's file)."""
    review_page: str
    """The week page's REVIEW section."""
    close: tuple[EmailClose, ...] | None = None
    """The first of "close in meaning, missed by the watchlist" (at most EMAIL_CLOSE); None for a week decided
    without meaning (its e-mail is as it was)."""
    close_total: int = 0
    """The week's list in all (the week page has every one)."""
    close_page: str = ""
    """The week page's list."""
    footer: str = ""
    """The closing line on keys and unsubscribing, for a week whose decisions carry keys (rules `digest.4`); empty
    for a week decided before them, whose archived e-mail stays as it was published."""

"""[mail] of reporter.toml: the SMTP server, its login, the sender and the recipients of the e-mail edition."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from email.policy import SMTP

from ..settings import Table

DEFAULT_PORT = 587
"""The submission port (RFC 6409), where a server offers STARTTLS."""
LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True)
class MailSettings:
    """The [mail] table (docs/digest.md, "Sending it")."""

    smtp_host: str
    """The SMTP server's host name or IP address."""
    sender: str
    """`from`: the From address (`Weekly digest <digest@example.org>` or `digest@example.org`)."""
    to: tuple[str, ...]
    """The recipients, each an address; they all see the To header (one message, as to a team)."""
    smtp_port: int = DEFAULT_PORT
    """The server's port (default 587, submission)."""
    starttls: bool = True
    """Upgrade the connection with STARTTLS before the login and the message (default true); false only for a
    loopback host."""
    username: str | None = None
    """The login name, or None to send without AUTH."""
    password_env: str | None = None
    """The NAME of the environment variable holding the password (read as the command starts, never written)."""
    list_id: str | None = None
    """The List-Id header (RFC 2919: `Weekly digest <digest.example.org>`), put before the message as it is sent;
    None: none."""
    unsubscribe: tuple[str, ...] = ()
    """The List-Unsubscribe header's URLs (RFC 2369: `mailto:` or `https:`), put before the message as it is sent;
    (): none."""

    @property
    def server(self) -> str:
        """`host:port`, as every message about the server names it."""
        host = f"[{self.smtp_host}]" if ":" in self.smtp_host else self.smtp_host
        return f"{host}:{self.smtp_port}"

    @property
    def envelope_from(self) -> str:
        """The sender's bare address (the SMTP envelope's MAIL FROM)."""
        return _addresses(self.sender)[0]

    @property
    def envelope_to(self) -> tuple[str, ...]:
        """The recipients' bare addresses (the envelope's RCPT TO), in order."""
        return tuple(_addresses(a)[0] for a in self.to)


def is_loopback(host: str) -> bool:
    """Whether a host is this machine: `localhost`, 127.0.0.0/8 or ::1 (the one place mail may go unencrypted)."""
    name = host.lower().rstrip(".")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def cleartext_problem(settings: MailSettings) -> str | None:
    """Why the settings would send the password or the mail unencrypted over a network, or None when they would not."""
    if settings.starttls or is_loopback(settings.smtp_host):
        return None
    return (f"starttls = false would send the password and the mail unencrypted to {settings.server}; set "
            f"starttls = true (the server must offer STARTTLS), or send through a loopback host (127.0.0.1, ::1, "
            f"localhost)")


def parse_mail(table: Table | None) -> MailSettings | None:
    """Parse [mail]; None when the workspace sends nothing."""
    if table is None:
        return None
    settings = MailSettings(
        smtp_host=_unbracketed(table.get("smtp_host", str, check=_host)),
        smtp_port=table.get("smtp_port", int, DEFAULT_PORT,
                            check=lambda v: None if 1 <= v <= 65535 else f"must be a port from 1 to 65535, not {v}"),
        starttls=table.get("starttls", bool, True),
        username=table.get("username", str, None, check=_one_line),
        password_env=table.get("password_env", str, None, check=_variable),
        sender=table.get("from", str, check=_one_address),
        to=tuple(table.get("to", list, check=_recipients)),
        list_id=table.get("list_id", str, None, check=_list_id),
        unsubscribe=tuple(table.get("unsubscribe", list, [], check=_unsubscribe)),
    )
    if (settings.username is None) != (settings.password_env is None):
        key = "password_env" if settings.username is not None else "username"
        raise table.error(key, "is missing: username and password_env go together (the login name, and the name "
                               "of the environment variable holding its password)")
    if problem := cleartext_problem(settings):
        raise table.error("starttls", f"is false for a host that is not loopback: {problem}")
    return settings


def _addresses(value: str) -> list[str]:
    """The bare addresses (`a@example.org`) of an address header's value; [] when it does not parse."""
    try:
        header = SMTP.header_factory("To", value)
    except (ValueError, IndexError, TypeError):
        return []
    return [] if header.defects else [a.addr_spec for a in header.addresses]


def _one_address(value: str) -> str | None:
    found = [] if _one_line(value) else _addresses(value)
    if len(found) != 1 or not _plain_address(found[0]):
        return (f"must be one e-mail address in ASCII (`digest@example.org` or `Weekly digest <digest@example.org>`), "
                f"not {value!r:.200}")
    return None


def _plain_address(addr: str) -> bool:
    local, _, domain = addr.rpartition("@")
    return bool(local) and "." in domain.strip(".") and addr.isascii()


def _recipients(value: list) -> str | None:
    if not value:
        return "must list at least one address"
    for item in value:
        if not isinstance(item, str):
            return f"must be a list of addresses (strings), not {item!r:.200}"
        if complaint := _one_address(item):
            return f"holds {item!r:.200}, which {complaint}"
    return None


_LIST_ID = re.compile(r"[ -~]{0,200}<[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+>")
_LIST_URL = re.compile(r"(?:mailto:[^\s<>@,]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?:\?[^\s<>,]*)?|https://[A-Za-z0-9.-]+(?::\d+)?(?:/[^\s<>,]*)?)")


def _list_id(value: str) -> str | None:
    """RFC 2919: an optional phrase, then the list's id as a domain-like label in angle brackets; ASCII."""
    if not _LIST_ID.fullmatch(value) or value.count("<") != 1:
        return (f"must be a name and a list id in angle brackets, e.g. `Weekly digest <digest.example.org>` "
                f"(ASCII, a dotted label), not {value!r:.200}")
    return None


def _unsubscribe(value: list) -> str | None:
    """RFC 2369: each a `mailto:` address or an `https://` URL, without spaces, commas or angle brackets."""
    if not value:
        return "must list at least one `mailto:` or `https://` URL (or leave the key out)"
    for item in value:
        if not isinstance(item, str) or not item.isascii() or not _LIST_URL.fullmatch(item):
            return (f"holds {item!r:.200}, which is not a `mailto:ADDRESS` or an `https://` URL in ASCII without "
                    f"spaces, commas or angle brackets")
    return None


def _one_line(value: str) -> str | None:
    if not value.strip():
        return "must not be empty"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "must be one line without control characters"
    return None


def _host(value: str) -> str | None:
    if _one_line(value) or any(c.isspace() or c in "/@" for c in value):
        return f"must be a host name or an IP address (no scheme, no port), not {value!r:.200}"
    bare = _unbracketed(value)
    if (bare != value or any(c in ":[]" for c in bare)) and not _is_ipv6(bare):
        # `host:port` is not read as a port: smtp_port is the one place a port is given (docs/digest.md).
        return (f"must be a host name or an IP address without a port (brackets only around an IPv6 address), not "
                f"{value!r:.200}; give the port in smtp_port (smtp_host = \"mail.example.org\", smtp_port = 587)")
    return None


def _unbracketed(host: str) -> str:
    """`[::1]` as `::1` (an IPv6 address may be written either way); any other host as it is."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _is_ipv6(host: str) -> bool:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True


def _variable(value: str) -> str | None:
    if not value.replace("_", "a").isalnum() or not value.isascii() or value[0].isdigit():
        return f"must name an environment variable (letters, digits and _), not {value!r:.200}"
    return None


def check_recipients(value: list) -> str | None:
    """What is wrong with a list of recipients (as `[mail] to` is checked), or None: for a digest topic's
    `recipients` too."""
    return _recipients(value)

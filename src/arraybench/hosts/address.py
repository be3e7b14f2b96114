"""Host addresses judged by value: what fio's server would bind to, not how it is spelt.

fio's server protocol has no authentication, so a server must never listen on every
interface. fio resolves ``--server=ip:ADDR`` with the C library, which reads ``0``, ``0.0``,
``0x0`` and ``000.000.000.000`` (inet_aton's legacy forms) as 0.0.0.0, and ``::ffff:0.0.0.0``
is the IPv4 wildcard in IPv6 clothing. So an address is parsed (``ipaddress``, then inet_aton
for the legacy IPv4 forms) and a name is resolved (``getaddrinfo``); any spelling of the
unspecified address is refused. Legacy IPv4 forms of other addresses are refused too: fio
names the logs it receives after the address as given, so one address must have one spelling.

A name must be a DNS name in ASCII (labels of at most 63 letters, digits, ``-`` or ``_``, at
most 253 characters): checked here so that a long label is one line, not a UnicodeError from
Python's idna codec. Nothing may start with ``-`` (ssh and ``ss`` would read an option).
"""

from __future__ import annotations

import ipaddress
import re
import socket

from arraybench.errors import ArraybenchError

_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?$")
MAX_LABEL = 63
MAX_NAME = 253
WILDCARD_HINT = (
    "give the host's own address on the storage or management network: fio's server has no "
    "authentication and must not listen on every interface"
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressError(ArraybenchError):
    """A host address (or SSH host/user) a plan gives is unusable or unsafe (exit 2)."""


def is_wildcard(ip: IPAddress) -> bool:
    """The unspecified address in any family, IPv4-mapped IPv6 included."""
    if ip.is_unspecified:
        return True
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return mapped is not None and mapped.is_unspecified


def legacy_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """The address inet_aton reads from a legacy spelling (``0``, ``0x7f.1``, ``010.0.0.1``)."""
    if not re.fullmatch(r"[0-9A-Fa-fXx.]+", text):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def _refuse_wildcard(text: str, what: str, resolved: str | None = None) -> None:
    via = f" (it resolves to {resolved})" if resolved else ""
    raise AddressError(
        f"{what}: address {text!r}{via} would bind fio's server to every interface",
        WILDCARD_HINT,
    )


def _refuse(text: str, what: str, why: str, hint: str) -> None:
    raise AddressError(f"{what}: address {text!r} {why}", hint)


def check_name(text: str, what: str) -> None:
    """AddressError unless `text` is an ASCII DNS name (trailing dot allowed)."""
    name = text[:-1] if text.endswith(".") else text
    hint = "give an IP address or a DNS name (letters, digits, '-', labels up to 63 characters)"
    if not name or len(name) > MAX_NAME:
        _refuse(text, what, f"is not a host name (1 to {MAX_NAME} characters)", hint)
    for label in name.split("."):
        if len(label) > MAX_LABEL:
            _refuse(text, what, f"has a label of {len(label)} characters (at most 63)", hint)
        if not _LABEL.match(label):
            _refuse(text, what, "is neither an IP address nor a host name", hint)


def resolved_wildcard(name: str) -> str | None:
    """The wildcard address `name` resolves to, if any (None also when it does not resolve:
    reaching the host is checked, and reported, later)."""
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]
        try:
            ip = ipaddress.ip_address(text)
        except ValueError:
            continue
        if is_wildcard(ip):
            return text
    return None


def check_address(text: str, what: str, *, resolve: bool = True) -> str:
    """`text` when it is one host's address (IP or DNS name); AddressError otherwise.

    ``what`` names the value for the user (``host h1``). Names are resolved when ``resolve``."""
    if not text or text != text.strip() or any(ord(c) < 33 or ord(c) == 127 for c in text):
        _refuse(text, what, "is empty or contains blanks or control characters",
                "give an IP address or a DNS name")  # fmt: skip
    if text.startswith("-"):
        _refuse(text, what, "starts with '-', which ssh would read as an option",
                "give an IP address or a DNS name")  # fmt: skip
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ip: IPAddress | None = ipaddress.ip_address(bare)
    except ValueError:
        ip = None
    legacy = legacy_ipv4(bare) if ip is None else None
    if (ip is not None and is_wildcard(ip)) or (legacy is not None and legacy.is_unspecified):
        _refuse_wildcard(text, what)
    if legacy is not None:
        _refuse(text, what, f"is a legacy spelling of {legacy}", f"write it as {legacy}")
    if bare != text:
        _refuse(text, what, "is in brackets", f"write it without them: {bare}")
    if ip is None:
        check_name(text, what)
        found = resolved_wildcard(text) if resolve else None
        if found:
            _refuse_wildcard(text, what, found)
    return text


def check_ssh_user(user: str, what: str) -> str:
    """An SSH login name that cannot be read as an option or change the destination."""
    if not user or user.startswith("-") or not re.fullmatch(r"[A-Za-z0-9._][A-Za-z0-9._-]*", user):
        raise AddressError(
            f"{what}: ssh user {user!r} is not a login name",
            "use letters, digits, '.', '_' or '-' (not first)",
        )
    return user

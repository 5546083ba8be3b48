"""Host lists: ``[user@]host[:port]`` from the command line or a hosts file (one a line, ``#`` comments).

Host names are validated here, once, because they end up in argv lists (ssh, srun) and in file names: a name that
starts with ``-`` would read as an option, so it is refused rather than quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, List, Optional

from gpuvet.errors import InputError

# RFC 1123 labels (plus '_' which ~/.ssh/config aliases and some clusters use); IPv6 only inside brackets.
_HOSTNAME = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
_IPV6 = re.compile(r"^[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?$")
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$")
_HINT = "write one host a line as [user@]host[:port], e.g. ubuntu@node01:2222 or [fe80::1]:22"


@dataclass(frozen=True)
class HostSpec:
    """One host to probe. ``name`` is how the user wrote it and how every report names it."""

    name: str
    host: str
    user: Optional[str] = None
    port: Optional[int] = None


def parse_host(text: str, where: str = "host") -> HostSpec:
    """Parse ``[user@]host[:port]`` (``[v6addr]:port`` for IPv6); InputError with one clear line otherwise."""
    original = text.strip()
    if not original:
        raise InputError(f"{where}: empty host name", hint=_HINT)
    user: Optional[str] = None
    rest = original
    if "@" in rest:
        user, _, rest = rest.rpartition("@")
        if not _USER.match(user):
            raise InputError(f"{where}: {original!r} has an invalid user name {user!r}", hint=_HINT)
    port: Optional[int] = None
    if rest.startswith("["):
        host, bracket, tail = rest[1:].partition("]")
        if not bracket or not _IPV6.match(host):
            raise InputError(f"{where}: {original!r} is not a valid [IPv6]:port address", hint=_HINT)
        if tail:
            if not tail.startswith(":"):
                raise InputError(f"{where}: {original!r} has text after the ']'", hint=_HINT)
            port = _parse_port(tail[1:], original, where)
    elif rest.count(":") > 1:
        raise InputError(f"{where}: {original!r}: put an IPv6 address in brackets, e.g. [{rest}]:22", hint=_HINT)
    else:
        host, colon, port_text = rest.partition(":")
        if colon:
            port = _parse_port(port_text, original, where)
        if not _HOSTNAME.match(host):
            raise InputError(f"{where}: {original!r} is not a valid host name", hint=_HINT)
    return HostSpec(name=original, host=host, user=user, port=port)


def _parse_port(text: str, original: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InputError(f"{where}: {original!r} has an invalid port {text!r} (1-65535)", hint=_HINT)
    return int(text)


def parse_hosts_text(text: str, name: str = "hosts file") -> List[HostSpec]:
    """Every host of a hosts file, in order. Blank lines and ``#`` comments (whole-line or trailing) are skipped."""
    hosts: List[HostSpec] = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        if len(content.split()) > 1:
            raise InputError(f"{name}:{number}: one host a line, got {content!r}", hint=_HINT)
        hosts.append(parse_host(content, where=f"{name}:{number}"))
    return hosts


def read_hosts_file(path: str) -> List[HostSpec]:
    from gpuvet.userfiles import read_text

    # A hosts list of 100,000 lines is 4 MB: /dev/zero is refused, not read until memory runs out.
    text = read_text(path, "hosts file", hint=_HINT)
    return parse_hosts_text(text, name=path)


def gather_hosts(arguments: Iterable[str], hosts_file: Optional[str]) -> List[HostSpec]:
    """Hosts from the file first, then the arguments, in the order given; the same name twice is probed once."""
    specs = read_hosts_file(hosts_file) if hosts_file else []
    specs += [parse_host(text, where="host argument") for text in arguments]
    seen = set()
    unique = []
    for spec in specs:
        if spec.name not in seen:
            seen.add(spec.name)
            unique.append(spec)
    return unique


def safe_file_name(name: str) -> str:
    """A file name for a host's snapshot that cannot escape the output folder or hide itself."""
    cleaned = re.sub(r"[^A-Za-z0-9@._-]", "_", name)
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    return cleaned or "host"

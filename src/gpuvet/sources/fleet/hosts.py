"""Host lists: ``[user@]host[:port]`` from the command line or a hosts file (one a line, ``#`` comments).

Host names are validated here, once, because they end up in argv lists (ssh, srun) and in file names: a name that
starts with ``-`` would read as an option, so it is refused rather than quoted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional

from gpuvet.errors import InputError
from gpuvet.models import Message

# RFC 1123 labels (plus '_' which ~/.ssh/config aliases and some clusters use); IPv6 only inside brackets.
_HOSTNAME = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
_IPV6 = re.compile(r"^[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?$")
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$")
# Every refusal of a host says how to write one: errors.host_*.hint in the catalog; read_text gets it as a Message.
_HINT = Message("errors.host_empty.hint")


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
        raise InputError.said("errors.host_empty", where=_where(where))
    user: Optional[str] = None
    rest = original
    if "@" in rest:
        user, _, rest = rest.rpartition("@")
        if not _USER.match(user):
            raise InputError.said("errors.host_user", where=_where(where), host=repr(original), user=repr(user))
    port: Optional[int] = None
    if rest.startswith("["):
        host, bracket, tail = rest[1:].partition("]")
        if not bracket or not _IPV6.match(host):
            raise InputError.said("errors.host_ipv6", where=_where(where), host=repr(original))
        if tail:
            if not tail.startswith(":"):
                raise InputError.said("errors.host_after_bracket", where=_where(where), host=repr(original))
            port = _parse_port(tail[1:], original, where)
    elif rest.count(":") > 1:
        raise InputError.said("errors.host_brackets", where=_where(where), host=repr(original), address=rest)
    else:
        host, colon, port_text = rest.partition(":")
        if colon:
            port = _parse_port(port_text, original, where)
        if not _HOSTNAME.match(host):
            raise InputError.said("errors.host_name", where=_where(where), host=repr(original))
    return HostSpec(name=original, host=host, user=user, port=port)


def _where(where: str) -> Any:
    """Where a host was written: a place of the command line ("host", "host argument") as the catalog says it, a
    hosts file's NAME:LINE as is."""
    key = "errors.host_where." + where.replace(" ", "_")
    return Message(key) if where in ("host", "host argument") else where


def _parse_port(text: str, original: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InputError.said("errors.host_port", where=_where(where), host=repr(original), port=repr(text))
    return int(text)


def parse_hosts_text(text: str, name: str = "hosts file") -> List[HostSpec]:
    """Every host of a hosts file, in order. Blank lines and ``#`` comments (whole-line or trailing) are skipped."""
    hosts: List[HostSpec] = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        if len(content.split()) > 1:
            raise InputError.said("errors.host_one_a_line", where=f"{name}:{number}", line=repr(content))
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

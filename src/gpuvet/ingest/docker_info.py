"""``docker info`` (whole, or the ``| grep -i runtime`` lines people paste): how the Docker daemon runs containers.

What decides whether a GPU container starts: the runtimes the daemon has registered (``Runtimes: ... nvidia runc``,
which ``nvidia-ctk runtime configure --runtime=docker`` adds), the default one, the daemon's version (``--gpus``
exists from Docker 19.03), and the cgroup driver (with ``systemd``, a ``systemctl daemon-reload`` can take the GPUs
away from running containers). Older daemons print the keys at column 0, newer ones indent them under ``Server:``;
both are read. The host lines (kernel, OS, architecture, memory) become host facts.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "docker-info"

_KEY = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z ()]*?):[ \t]*(?P<value>.*?)\s*$")
_DEFAULT_RUNTIME = re.compile(r"^[ \t]*Default Runtime:[ \t]*\S+", re.MULTILINE)
_RUNTIMES = re.compile(r"^[ \t]*Runtimes:[ \t]*\S+", re.MULTILINE)
# `docker info | grep Runtimes` alone: every Docker daemon registers runc (as runc or io.containerd.runc.v2)
_RUNTIMES_WITH_RUNC = re.compile(r"^[ \t]*Runtimes:(?:[ \t]+[\w.-]+)*?[ \t]+(?:runc|io\.containerd\.runc\.v2)(?:[ \t]+[\w.-]+)*[ \t]*$", re.MULTILINE)
_SERVER_VERSION = re.compile(r"^[ \t]*Server Version:[ \t]*\d", re.MULTILINE)
_STORAGE = re.compile(r"^[ \t]*(?:Storage Driver|Docker Root Dir|Cgroup Driver):[ \t]*\S+", re.MULTILINE)
# The keys docker info prints that a block of it is made of (to find its extent inside an issue text)
_BLOCK_KEYS = ("Client", "Server", "Containers", "Running", "Paused", "Stopped", "Images", "Server Version",
               "Storage Driver", "Backing Filesystem", "Supports d_type", "Using metacopy", "Native Overlay Diff",
               "userxattr", "Logging Driver", "Cgroup Driver", "Cgroup Version", "Plugins", "Volume", "Network", "Log",
               "Swarm", "Runtimes", "Default Runtime", "Init Binary", "containerd version", "runc version",
               "init version", "Security Options", "Profile", "Kernel Version", "Operating System", "OSType",
               "Architecture", "CPUs", "Total Memory", "Name", "ID", "Docker Root Dir", "Debug Mode",
               "Debug Mode (client)", "Debug Mode (server)", "Registry", "Labels", "Experimental",
               "Insecure Registries", "Live Restore Enabled", "Product License", "Version", "Context",
               "Registry Mirrors", "HTTP Proxy", "HTTPS Proxy", "No Proxy", "Default Address Pools", "Username")
_MEMORY_UNITS = {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1024 * 1024}


def looks_like(text: str) -> bool:
    """``Default Runtime:`` is docker info's alone; ``Runtimes:`` needs runc among them or a second docker info key."""
    if _DEFAULT_RUNTIME.search(text) or _RUNTIMES_WITH_RUNC.search(text):
        return True
    return bool(_RUNTIMES.search(text) and (_SERVER_VERSION.search(text) or _STORAGE.search(text)))


def _fields(text: str) -> Dict[str, str]:
    """The first value of each ``Key: value`` line (docker info prints each key once, Client before Server)."""
    fields: Dict[str, str] = {}
    for line in text.split("\n"):
        match = _KEY.match(line)
        if match and match.group("key") not in fields:
            fields[match.group("key")] = match.group("value")
    return fields


def _security_options(text: str) -> List[str]:
    """The names under ``Security Options:`` (apparmor, seccomp, rootless, cgroupns ...): the lines at the first
    indent below it; deeper lines (``Profile: builtin``) belong to the name above them."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if re.match(r"^\s*Security Options:\s*$", line):
            depth = len(line) - len(line.lstrip())
            names: List[str] = []
            names_indent = None
            for item in lines[number + 1:]:
                indent = len(item) - len(item.lstrip())
                if not item.strip() or indent <= depth:
                    break
                names_indent = indent if names_indent is None else names_indent
                if indent == names_indent and ":" not in item:
                    names.append(item.strip())
            return names
    return []


def _memory_mib(value: Optional[str]) -> Optional[int]:
    match = re.match(r"^(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|TiB)$", value or "")
    return int(float(match.group(1)) * _MEMORY_UNITS[match.group(2)]) if match else None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    if not looks_like(text):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    fields = _fields(text)
    runtimes = fields.get("Runtimes", "").split() or None
    options = _security_options(text)
    cgroup_version = fields.get("Cgroup Version") or None
    engine: Dict[str, Any] = {
        "engine": "docker",
        "server_version": fields.get("Server Version") or None,
        "runtimes": runtimes,
        "default_runtime": fields.get("Default Runtime") or None,
        "cgroup_driver": fields.get("Cgroup Driver") or None,
        "cgroup_version": cgroup_version,
        "rootless": ("rootless" in options) if options else None,
        "root_dir": fields.get("Docker Root Dir") or None,
    }
    set_fact(snapshot, "container_engine", engine, source)
    if fields.get("Kernel Version"):
        set_fact(snapshot, "host.kernel", fields["Kernel Version"], source)
    architecture = fields.get("Architecture")
    if architecture in ("x86_64", "aarch64"):
        set_fact(snapshot, "host.machine", architecture, source)
    memory = _memory_mib(fields.get("Total Memory"))
    if memory:
        set_fact(snapshot, "host.memory_mib", memory, source)
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    """docker info inside an issue text: the run of its ``Key: value`` lines around ``Runtimes``/``Default Runtime``."""
    anchors = [i for i, line in enumerate(lines) if re.match(r"^\s*(?:Default Runtime|Runtimes):\s*\S", line)]
    if not anchors:
        return []

    def is_docker_line(line: str) -> bool:
        match = _KEY.match(line)
        return bool(match and match.group("key") in _BLOCK_KEYS) or (line.startswith(" ") and bool(line.strip())
                                                                      and ":" not in line and len(line) < 80)

    start = anchors[0]
    while start > 0 and is_docker_line(lines[start - 1]):
        start -= 1
    end = anchors[-1] + 1
    while end < len(lines) and is_docker_line(lines[end]):
        end += 1
    block = "\n".join(lines[start:end])
    return [block] if looks_like(block) else []

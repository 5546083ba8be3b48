"""``disk_full`` before the install: will a named target's download and unpacked files fit (pure)?

Reads the ``disks`` fact (gpuvet.probe.disks) and the install sizes of ``kb/data/install_sizes.toml``. What each
mount must hold: the unpacked install where site-packages is; the download where pip's cache is and where its
temporary folder is (counted once when they share a mount). A finding names the mount that has room, if any.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from gpuvet.findings import make
from gpuvet.kb.mirrors import install_size
from gpuvet.models import Finding, msg
from gpuvet.snapshot import SnapshotView

GB = 1e9
PIP_CACHE_DOCS = "https://pip.pypa.io/en/stable/topics/caching/"
_INSTALL_ROLES = ("site_packages",)
_DOWNLOAD_ROLES = ("pip_cache", "tmp")


def _gb(value: float) -> str:
    return "%.1f" % (value / GB)


def _build_of(target: Any) -> str:
    return "cpu" if (getattr(target, "local", None) or "").startswith("cpu") else "cuda"


def _already_installed(view: SnapshotView, target: Any) -> bool:
    version = view.package_version(target.name)
    if not version:
        return False
    return target.pinned is None or version.split("+")[0] == target.pinned


def _needs(locations: Sequence[Mapping[str, Any]], download: float, installed: float) -> Dict[str, Dict[str, Any]]:
    """mount -> {"need", "free", "roles"} for the mounts this install writes to."""
    needs: Dict[str, Dict[str, Any]] = {}
    for entry in locations:
        role, mount, free = entry.get("role"), entry.get("mount"), entry.get("free_bytes")
        if role not in _INSTALL_ROLES + _DOWNLOAD_ROLES or not isinstance(mount, str) or not isinstance(free, int):
            continue
        slot = needs.setdefault(mount, {"need": 0.0, "free": free, "roles": [], "download": False})
        slot["roles"].append(str(role))
        if role in _INSTALL_ROLES:
            slot["need"] += installed
        elif not slot["download"]:
            slot["need"] += download
            slot["download"] = True
    return needs


def _room(mounts: Sequence[Mapping[str, Any]], locations: Sequence[Mapping[str, Any]], need: float,
          exclude: str) -> Optional[Mapping[str, Any]]:
    candidates: List[Mapping[str, Any]] = []
    for entry in list(mounts) + list(locations):
        free, mount = entry.get("free_bytes"), entry.get("mount")
        if isinstance(free, int) and isinstance(mount, str) and mount != exclude and free >= need:
            candidates.append(entry)
    return max(candidates, key=lambda e: e["free_bytes"]) if candidates else None


def shm_findings(view: SnapshotView) -> List[Finding]:
    """``shm_too_small``: /dev/shm below the health threshold on a machine with GPUs (a container's 64 MB default)."""
    from gpuvet.kb.thresholds import load_thresholds

    disks = view.value("disks")
    shm = disks.get("shm") if isinstance(disks, dict) else None
    total = shm.get("total_bytes") if isinstance(shm, dict) else None
    rules = load_thresholds().health
    minimum = float(rules.get("shm_min_bytes", 1 << 30))
    if not isinstance(total, (int, float)) or total >= minimum or not view.gpus:
        return []
    sources = tuple(s.strip() for s in str(rules.get("shm_source", "")).split(";") if s.strip())
    return [make("checks.shm_small", size="%d MiB" % (total // (1 << 20)), minimum="%d MiB" % (minimum // (1 << 20)),
                 expected=">= %d MiB" % (minimum // (1 << 20)), actual="%d MiB" % (total // (1 << 20)),
                 commands=("docker run --shm-size=16g ... (or --ipc=host)", "df -h /dev/shm"), sources=sources)]


def disk_findings(view: SnapshotView, targets: Sequence[Any]) -> List[Finding]:
    """A ``disk_full`` finding per named target whose install will not fit where pip would write it."""
    disks = view.value("disks") or {}
    if not isinstance(disks, Mapping):
        return []
    locations = [e for e in disks.get("locations") or () if isinstance(e, Mapping)]
    mounts = [e for e in disks.get("mounts") or () if isinstance(e, Mapping)]
    findings: List[Finding] = []
    for target in targets:
        size = install_size(target.name, _build_of(target))
        if size is None or _already_installed(view, target):
            continue
        download, installed = size.download_gb * GB, size.installed_gb * GB
        for mount, slot in _needs(locations, download, installed).items():
            if slot["free"] >= slot["need"]:
                continue
            installs_here = "site_packages" in slot["roles"]
            # Room for the whole install (a new environment and its cache) when site-packages lacks it;
            # room for the download alone when only the cache or the temporary folder does.
            wanted = installed + download if installs_here else download
            room = _room(mounts, locations, wanted, mount)
            facts = dict(target=target.text, mount=mount, need=_gb(slot["need"]), free=_gb(slot["free"]),
                         roles=", ".join(slot["roles"]), download=_gb(download), installed=_gb(installed))
            commands: Tuple[str, ...]
            if room is not None:
                where = str(room["mount"]).rstrip("/") or ""
                facts.update(room=room["mount"], room_free=_gb(room["free_bytes"]))
                if installs_here:
                    commands = ("python3 -m venv %s/venv" % where,
                                "%s/venv/bin/pip install --cache-dir %s/pip-cache '%s'" % (where, where, target.text))
                else:
                    commands = ("mkdir -p %s/pip-cache %s/tmp" % (where, where),
                                "export PIP_CACHE_DIR=%s/pip-cache TMPDIR=%s/tmp" % (where, where))
                fix = "checks.disk_no_room.fix_room" if installs_here else "checks.disk_cache_no_room.fix_room"
            else:
                commands = ("pip cache purge", "df -h", "du -xsh ~/.cache/* 2>/dev/null | sort -h | tail")
                fix = "checks.disk_no_room.fix_clean"
            key = "checks.disk_no_room" if installs_here else "checks.disk_cache_no_room"
            findings.append(make(key, fix=fix, commands=commands, expected=msg("checks.disk.expected_free", need=facts["need"], mount=mount),
                                 actual=msg("checks.disk.actual_free", free=facts["free"]), sources=(size.source, PIP_CACHE_DOCS), **facts))
    return findings

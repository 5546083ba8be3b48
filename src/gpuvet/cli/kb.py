"""``gpuvet kb [list|show NAME|sources|harvest REQ...|update [DIST...]|status] [--format text|json]``: what the
knowledge base holds and where it comes from; ``harvest`` / ``update`` read real wheels into the user's overlay (the
only place they write), ``status`` shows the shipped version and what the overlay adds."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from gpuvet.errors import ExitCode, InputError
from gpuvet.i18n import text
from gpuvet.kb import load, loader
from gpuvet.report.envelope import dumps, envelope
from gpuvet.report.kb import (
    render_harvest,
    render_kb_file,
    render_kb_framework,
    render_kb_list,
    render_kb_sources,
    render_status,
    render_update,
)


def run(args, output) -> int:
    lang = getattr(args, "lang", None) or "en"
    fmt = getattr(args, "format", "text")
    action = getattr(args, "action", None) or "list"
    if action in ("harvest", "update", "status"):
        return {"harvest": _harvest, "update": _update, "status": _status}[action](args, output, fmt)
    kb = load()
    files = loader.data_files()
    names = getattr(args, "name", None)
    names = list(names) if isinstance(names, list) else ([names] if names else [])
    if action == "show":
        if not names:
            raise InputError(text(lang, "kb.show_needs_name"), hint=text(lang, "kb.unknown_file_hint", names=", ".join(files)))
        output.write(_show(names[0], files, fmt, lang, versions=names[1:]))
    elif action == "sources":
        output.write(_sources(kb, fmt, lang, names, files))
    else:
        output.write(_list(kb, files, fmt, lang))
    return int(ExitCode.OK)


def _records(path) -> List[Dict[str, Any]]:
    return [{"id": rid, "record": record} for rid, record in loader.records(loader.raw(path))]


def _list(kb, files, fmt: str, lang: str) -> str:
    rows = [{"name": name, "path": _relative(path), "records": len(_records(path))} for name, path in files.items()]
    if fmt == "json":
        return dumps(envelope(kb=kb.describe(), files=rows))
    return render_kb_list(kb.version, kb.updated, rows, lang)


def _file_named(name: str, files, lang: str):
    key = loader.normalize_name(name)
    path = next((p for n, p in files.items() if loader.normalize_name(n) == key), None)
    if path is None:
        framework = load().framework(name)  # a distribution name (paddlepaddle-gpu) names its framework's file
        path = next((p for p in loader.framework_paths().values()
                     if framework is not None and loader.raw(p).get("framework", {}).get("name") == framework.name), None)
    if path is None:
        raise InputError(text(lang, "kb.unknown_file", name=name), hint=text(lang, "kb.unknown_file_hint", names=", ".join(files)))
    return path


def _show(name: str, files, fmt: str, lang: str, versions: Sequence[str] = ()) -> str:
    path = _file_named(name, files, lang)
    records = _records(path)
    if fmt == "json":
        return dumps(envelope(file={"name": path.stem, "path": _relative(path)}, document=loader.raw(path)))
    if path.parent == loader.FRAMEWORK_DIR:
        return _show_framework(path, lang, versions)
    return render_kb_file(path.stem, _relative(path), records, lang)


def _show_framework(path, lang: str, versions: Sequence[str]) -> str:
    """A framework as a person reads it (report.kb.render_kb_framework): its releases, VERSION ... picking some."""
    framework = loader.framework_from(path)
    releases = [r for r in framework.releases if not versions or any(r.version == v for v in versions)]
    if versions and not releases:
        raise InputError(text(lang, "kb.unknown_release", name=framework.display, versions=", ".join(versions)),
                         hint=text(lang, "kb.known_releases", oldest=framework.releases[-1].version,
                                   newest=framework.newest.version))
    return render_kb_framework(framework, releases, _relative(path), lang)


def _sources(kb, fmt: str, lang: str, names: Sequence[str] = (), files=None) -> str:
    """Every source the knowledge base cites, with the records citing it; NAME ... keeps those of some files."""
    stems = {_file_named(name, files, lang).stem for name in names} if names else None
    cited: Dict[str, List[str]] = {}
    for record_id, source in kb.sources():
        if stems is None or record_id.split(":", 1)[0] in stems:
            cited.setdefault(source, []).append(record_id)
    if fmt == "json":
        return dumps(envelope(kb=kb.describe(),
                              sources=[{"source": s, "records": ids} for s, ids in cited.items()]))
    return render_kb_sources(cited, lang)


def _relative(path) -> str:
    return str(path.relative_to(loader.DATA_DIR.parent.parent)) if loader.DATA_DIR.parent.parent in path.parents else str(path)


# ------------------------------------------------------------------------------ harvest, update, status (the overlay)

def _overlay_dir(args):
    from pathlib import Path

    from gpuvet.kb import overlay

    chosen = getattr(args, "overlay", None)
    folder = Path(chosen).expanduser() if chosen else overlay.default_dir()
    if folder is None:
        raise InputError.said("errors.overlay_off")
    return folder


def _progress(message: str) -> None:
    import sys

    if sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)


def _harvest_one(requirement: str, args, folder, timeout: float):
    """(records of one release, overlay file, changed): one wheel per --platform; scratch space inside the overlay."""
    import shutil
    import tempfile

    from gpuvet.sources import harvest

    folder.mkdir(parents=True, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".work-", dir=str(folder))
    try:
        records = [harvest.harvest(requirement, index_url=getattr(args, "index_url", None), platform=platform,
                                   timeout=timeout, work=work)
                   for platform in (getattr(args, "platform", None) or ["x86_64"])]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    path, changed = harvest.write_release(folder, records)
    return records, path, changed


def _harvest_row(record, path, changed) -> Dict[str, Any]:
    return dict(record, overlay_file=str(path), changed=changed)


def _harvest(args, output, fmt: str) -> int:
    requirements = list(getattr(args, "name", None) or [])
    if not requirements:
        raise InputError.said("errors.harvest_nothing_named")
    from gpuvet.sources import harvest

    for requirement in requirements:  # every name checked before anything is fetched or written
        harvest.parse_requirement(requirement)
    folder = _overlay_dir(args)
    timeout = getattr(args, "timeout", None) or 600.0
    rows = []
    for requirement in requirements:
        _progress(f"harvesting {requirement} ...")
        records, path, changed = _harvest_one(requirement, args, folder, timeout)
        rows += [_harvest_row(r, path, changed) for r in records]
    if fmt == "json":
        output.write(dumps(envelope(overlay=str(folder), harvested=rows)))
    else:
        output.write(render_harvest(rows))
    return int(ExitCode.OK)


def _shipped_index():
    """(framework, version, platform) -> the shipped builds read from real wheels (kb/data/harvested/*.toml)."""
    index: Dict[Any, List[Dict[str, Any]]] = {}
    for path in sorted((loader.DATA_DIR / "harvested").glob("*.toml")):
        for build in loader.raw(path).get("build", ()):
            index.setdefault((build["framework"], str(build["version"]), build.get("platform", "x86_64")), []).append(build)
    return index


def _update(args, output, fmt: str) -> int:
    import time

    from gpuvet.kb import overlay
    from gpuvet.sources import harvest

    folder = _overlay_dir(args)
    deadline = time.monotonic() + (getattr(args, "timeout", None) or 3600.0)
    limit = max(0, int(getattr(args, "limit", 5)))
    platforms = getattr(args, "platform", None) or ["x86_64"]
    shipped = _shipped_index()
    known = {(loader.normalize_name(b["distribution"]), str(b["version"]), b.get("platform", "x86_64"))
             for builds in shipped.values() for b in builds}
    oldest_shipped: Dict[Any, str] = {}
    newest_shipped: Dict[Any, str] = {}
    for distribution, version, platform in known:
        have = oldest_shipped.get((distribution, platform))
        if have is None or _order(version) < _order(have):
            oldest_shipped[(distribution, platform)] = version
        have = newest_shipped.get((distribution, platform))
        if have is None or _order(version) > _order(have):
            newest_shipped[(distribution, platform)] = version
    builds, _ = overlay.read(folder)
    known |= {(loader.normalize_name(b.get("distribution", b["framework"])), str(b["version"]),
               b.get("platform", "x86_64")) for b in builds}
    named = [loader.normalize_name(n) for n in (getattr(args, "name", None) or [])]
    covered = sorted({d for d, _, _ in known}) if not named else named
    rows: List[Dict[str, Any]] = []
    failed: List[str] = []
    # Every index listing first, then the harvests, newest first: the releases newer than the newest the shipped
    # knowledge base has (what a user's new install is most likely to be), round by round over the distributions,
    # before the older gaps between the shipped releases (issue 30: alphabetical gap-filling spent the budget on
    # old releases and never reached the new ones). Older releases than the shipped data covers are left out.
    newer: List[List[Any]] = []
    gaps: List[List[Any]] = []
    for platform in platforms:
        for distribution in covered:
            if time.monotonic() >= deadline:
                break
            oldest = oldest_shipped.get((distribution, platform))
            newest = newest_shipped.get((distribution, platform))
            try:
                listed = harvest.index_versions(distribution, platform, getattr(args, "index_url", None),
                                                timeout=min(120.0, max(1.0, deadline - time.monotonic())))
            except InputError as exc:
                failed.append(f"{distribution}: {exc.message}")
                continue
            missing = sorted((v for v in listed if (distribution, v, platform) not in known
                              and (oldest is None or _order(v) >= _order(oldest))), key=_order, reverse=True)
            newer.append([(distribution, v, platform, "newer") for v in missing
                          if newest is None or _order(v) > _order(newest)])
            gaps.append([(distribution, v, platform, "gap") for v in missing
                         if newest is not None and _order(v) <= _order(newest)])
    queue = _round_robin(newer) + _round_robin(gaps)
    added: List[Dict[str, Any]] = []
    for todo, (distribution, version, platform, why) in enumerate(queue[:limit], 1):
        if time.monotonic() >= deadline:
            break
        requirement = f"{distribution}=={version}"
        _progress(f"[{todo}/{min(limit, len(queue))}] harvesting {requirement} ({platform}) ...")
        one = argparse_copy(args, platform=[platform])
        try:
            records, path, changed = _harvest_one(requirement, one, folder,
                                                  max(1.0, min(600.0, deadline - time.monotonic())))
        except InputError as exc:
            failed.append(f"{requirement} ({platform}): {exc.message}")
            continue
        rows += [_harvest_row(r, path, changed) for r in records]
        added.append({"distribution": distribution, "version": version, "platform": platform, "why": why,
                      "newest_shipped": newest_shipped.get((distribution, platform)), "overlay_file": str(path)})
    left = len(queue) - min(limit, len(queue))
    if fmt == "json":
        output.write(dumps(envelope(overlay=str(folder), added=added, harvested=rows, failed=failed,
                                    not_harvested=[{"distribution": d, "version": v, "platform": p, "why": w}
                                                   for d, v, p, w in queue[limit:]])))
    else:
        output.write(render_update(added, left, rows, failed))
    if failed and not rows:
        raise InputError.said("errors.update_nothing", first=failed[0])
    return int(ExitCode.OK)


def _round_robin(lists: List[List[Any]]) -> List[Any]:
    """The first of every list, then the second of every list, ...: each distribution's newest before any one's
    second newest."""
    out: List[Any] = []
    for rank in range(max((len(items) for items in lists), default=0)):
        out += [items[rank] for items in lists if rank < len(items)]
    return out


def _order(version: str):
    from gpuvet.kb import versions

    parsed = versions.parse(version)
    return (parsed is not None, parsed if parsed is not None else versions.Version("0"))


def argparse_copy(args, **changes):
    import argparse

    return argparse.Namespace(**dict(vars(args), **changes))


def _status(args, output, fmt: str) -> int:
    from gpuvet.kb import overlay

    kb = load()
    folder = _overlay_dir(args)
    shipped = _shipped_index()
    builds, problems = overlay.read(folder)
    rows = overlay.compare(shipped, builds)
    for row in rows:
        row["usable"] = _usable(row)
    exists = folder.is_dir()
    if fmt == "json":
        output.write(dumps(envelope(
            kb=dict(kb.describe(), shipped_builds=sum(len(v) for v in shipped.values())),
            overlay={"path": str(folder), "exists": exists, "builds": rows, "problems": problems})))
        return int(ExitCode.OK)
    lang = getattr(args, "lang", None) or "en"
    output.write(render_status(kb.version, kb.updated, sum(len(v) for v in shipped.values()), str(folder), exists,
                               rows, problems, lang))
    return int(ExitCode.OK)


def _has_release(framework: str, version: str) -> bool:
    path = loader.find_framework_path(framework)
    if path is None:
        path = next((p for p in loader.framework_paths().values()
                     if str(loader.raw(p).get("framework", {}).get("name")) == framework), None)
    if path is None:
        return False
    return any(str(r.get("version")) == version for r in loader.raw(path).get("release", ()))


def _usable(row) -> bool:
    """Whether check uses this overlay build: it adds arch lists to a shipped release, or it makes a release the
    shipped data lacks (when the wheel tells its CUDA: see gpuvet.kb.loader._overlay_releases)."""
    if row["status"] != "adds":
        return False
    from gpuvet.kb import overlay

    code = any(overlay.archs_of(row))
    if _has_release(row["framework"], str(row["version"])):
        return code or row.get("platform") == "aarch64"
    return (loader.find_framework_path(row["framework"]) is not None and row.get("platform", "x86_64") == "x86_64"
            and code
            and loader.overlay_variant(row["framework"], str(row["version"]), row) is not None)

"""Regenerate the shipped knowledge base from a checkout: one command, the same bytes for the same artifacts.

    python tools/regenerate.py [--check] [--only FRAMEWORK ...] [--wheel GLOB ...] [--limit N] [--offline]
                               [--index-url URL] [--pci-ids PCI_IDS_FILE] [--timeout SECONDS] [--data DIR]

1. The hand-curated files (NVIDIA's driver tables, architectures, GPU models, cuDNN / NCCL, library floors, the
   framework files and every other data file) are validated and never rewritten: they parse, every record cites a
   source, the NVIDIA files' records have their required fields in the right shape (CURATED below), every framework
   file loads through gpuvet's own loader. Facts nobody can read from an artifact are kept as sourced data, not made.
2. Every ``[[build]]`` of ``harvested/<framework>.toml`` names one artifact by its wheel file name and sha256. The
   command downloads that very file through pip's configuration (``pip config``, ``PIP_*``, or ``--index-url``;
   pip's target options are the wheel's own tags, so pip cannot pick another file), checks its sha256 (a changed or
   tampered artifact is an error and the record stays as it was), reads it again with the reader of ``gpuvet kb
   harvest`` (``gpuvet.sources.harvest.read_wheel``) and rebuilds the record from what it read: the facts (SASS, PTX,
   partial archs, CUDA / cuDNN / NCCL) are the reading's, the identity and provenance (wheel, sha256, the date it
   was first read, the source line) are the record's, so no clock enters the output. A build anyone adds with
   ``tools/import_overlay.py`` is covered by the next run.
   A vLLM [[release]] that ``tools/import_overlay.py --releases`` made from a wheel's METADATA is made again, with
   the same code, from that wheel when the run re-reads it.
3. The harvested files are written with the one renderer of ``tools/import_harvest.py`` (sorted, stable); with
   ``--pci-ids`` pci_ids.toml is rebuilt from that pci.ids file at the commit the shipped file names.
4. The JSON twins are refreshed (``tools/compile_data.py``).

``--check`` writes nothing and exits 1 when the output would differ from the checkout (naming the records and
fields); ``--offline`` re-reads no artifact (validation, rendering and twins only); ``--only`` / ``--wheel`` /
``--limit`` bound a run (builds not re-read are kept as they are and counted). Exit 2: a usage or input error (one
line each on stderr: invalid data, an unreachable index, a missing or changed artifact).
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tools"))

import compile_data  # noqa: E402  (tools/ is not a package)
import import_overlay  # noqa: E402
import pci_ids  # noqa: E402
from import_harvest import FACT_KEYS, IDENTITY, KEYS, PROVENANCE, render  # noqa: E402
from import_overlay import PROFILES, release_block, says_archs  # noqa: E402
from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

from gpuvet.errors import GpuvetError  # noqa: E402
from gpuvet.kb import loader  # noqa: E402
from gpuvet.sources import harvest  # noqa: E402

DATA = REPO / "src" / "gpuvet" / "kb" / "data"

# The NVIDIA files: {file: {array of tables: {field: shape}}}; a field ending in "?" may be absent.
CURATED = {
    "cuda_driver.toml": {
        "toolkit": {"cuda": "version", "label": "text", "linux?": "driver", "windows?": "driver"},
        "family": {"major": "int", "minor_compat": "bool", "linux_min?": "driver", "windows_min?": "driver"},
        "branch": {"branch": "int", "cuda": "version", "first_driver?": "driver"},
        "compat_branches": {"cuda": "version", "branches": "ints", "tesla_clauses": "text"},
    },
    "cuda_arch.toml": {
        "toolkit": {"cuda": "version", "sm": "sm_list"},
        "arch": {"sm": "sm", "compute_capability": "cc", "architecture": "text"},
    },
    "gpus.toml": {"gpu": {"name": "text", "architecture": "text", "compute_capability": "cc", "segment": "segment",
                          "aliases?": "texts", "memory_gib?": "number"}},
    "gpu_driver.toml": {
        "floor": {"architecture": "text", "compute_capability": "cc_list", "linux": "driver", "branch": "int",
                  "models?": "text_list"},
        "ceiling": {"architecture": "text_list", "compute_capability": "cc_list", "last_branch": "int"},
    },
    "cudnn.toml": {"release": {"version": "version", "cuda": "text_list", "compute_capability?": "cc_list"},
                   "pypi": {"distribution": "text", "cuda": "text_list", "first": "version"}},
    "nccl.toml": {"release": {"version": "version", "cuda": "text_list"},
                  "pypi": {"distribution": "text", "cuda": "text_list", "first": "version"},
                  "gencode": {"cuda": "specifier", "sass": "sm_list"},
                  "native_sass": {"sass": "sm", "first": "version", "cuda": "version"}},
    "library_floor.toml": {"floor": {"library": "text", "versions": "specifier", "min_cc": "cc"}},
}
UNIQUE = {("gpus.toml", "gpu"): "name", ("cuda_driver.toml", "toolkit"): "cuda", ("cuda_arch.toml", "toolkit"): "cuda",
          ("cuda_arch.toml", "arch"): "sm", ("cuda_driver.toml", "branch"): "branch",
          ("cuda_driver.toml", "compat_branches"): "cuda"}
SEGMENTS = ("datacenter", "workstation", "consumer", "embedded")


class DataError(Exception):
    """One line: what in which file is wrong."""


def _shape_ok(value, shape: str) -> bool:
    if shape == "text":
        return isinstance(value, str) and bool(value.strip())
    if shape == "text_list":
        return isinstance(value, list) and bool(value) and all(_shape_ok(v, "text") for v in value)
    if shape == "texts":  # a list, maybe empty
        return isinstance(value, list) and all(_shape_ok(v, "text") for v in value)
    if shape == "ints":  # a list of ints, maybe empty
        return isinstance(value, list) and all(_shape_ok(v, "int") for v in value)
    if shape == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if shape == "bool":
        return isinstance(value, bool)
    if shape == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if shape == "version":
        try:
            return isinstance(value, str) and Version(value) is not None
        except InvalidVersion:
            return False
    if shape == "specifier":
        try:
            return isinstance(value, str) and SpecifierSet(value) is not None
        except InvalidSpecifier:
            return False
    if shape == "driver":
        return isinstance(value, str) and re.match(r"^\d{3}(\.\d+){1,2}$", value) is not None
    if shape == "cc":
        return isinstance(value, str) and re.match(r"^\d+\.\d+$", value) is not None
    if shape == "cc_list":
        return isinstance(value, list) and bool(value) and all(_shape_ok(v, "cc") for v in value)
    if shape == "sm":
        return isinstance(value, str) and re.match(r"^sm_\d+[af]?$", value) is not None
    if shape == "sm_list":
        return isinstance(value, list) and bool(value) and all(_shape_ok(v, "sm") for v in value)
    if shape == "segment":
        return value in SEGMENTS
    raise ValueError(shape)


def validate_curated(data: Path) -> list:
    """Every problem of the hand-curated files, one line each (empty: valid)."""
    problems = []
    for path in sorted(data.glob("*.toml")) + sorted((data / "frameworks").glob("*.toml")):
        where = path.relative_to(data)
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{where}: not readable TOML ({exc})")
            continue
        problems += [f"{where}: record {rid.split(':', 1)[1]} has no source"
                     for rid in loader.missing_sources(path.stem, document)]
        for array, fields in CURATED.get(path.name, {}).items():
            rows = document.get(array)
            if not isinstance(rows, list) or not rows:
                problems.append(f"{where}: no [[{array}]] records")
                continue
            for number, row in enumerate(rows, 1):
                for field, shape in fields.items():
                    name = field.rstrip("?")
                    if name not in row:
                        if not field.endswith("?"):
                            problems.append(f"{where}: [[{array}]] #{number} lacks {name}")
                    elif not _shape_ok(row[name], shape):
                        problems.append(f"{where}: [[{array}]] #{number} {name} = {row[name]!r} is not a {shape}")
            key = UNIQUE.get((path.name, array))
            if key:
                seen = [row.get(key) for row in rows]
                twice = sorted({str(v) for v in seen if seen.count(v) > 1})
                if twice:
                    problems.append(f"{where}: [[{array}]] {key} given twice: {', '.join(twice)}")
        if path.parent.name == "frameworks":
            try:
                len(loader.framework_from(path).releases)  # every release made (and so checked): they are made as asked
            except GpuvetError as exc:
                problems.append(f"{where}: {exc}")
    return problems


def validate_build(build: dict, framework: str) -> list:
    """Problems of one shipped [[build]] (its identity and provenance must name one artifact)."""
    wheel = str(build.get("wheel", ""))
    label = f"harvested/{framework}.toml: {build.get('distribution')} {build.get('version')} {wheel}"
    problems = [f"{label}: lacks {k}" for k in IDENTITY + PROVENANCE if not build.get(k)]
    if problems:
        return problems
    if build["framework"] != framework:
        problems.append(f"{label}: framework {build['framework']!r} in the file of {framework}")
    if set(build) - set(KEYS):
        problems.append(f"{label}: fields the renderer does not know: {sorted(set(build) - set(KEYS))}")
    if not re.match(r"^[0-9a-f]{64}$", build["sha256"]):
        problems.append(f"{label}: sha256 is not 64 hex digits")
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", build["read_on"]):
        problems.append(f"{label}: read_on is not a date (YYYY-MM-DD)")
    parts = wheel.split("-")
    if not wheel.endswith(".whl") or len(parts) < 5 or (
            loader.normalize_name(parts[0]), loader.normalize_name(parts[1])) != (
            loader.normalize_name(build["distribution"]), loader.normalize_name(build["version"])):
        problems.append(f"{label}: the wheel file name is not {build['distribution']} {build['version']}'s")
    if build["platform"] not in harvest.PLATFORM_TAGS:
        problems.append(f"{label}: unknown platform {build['platform']!r}")
    cited = f"wheel {wheel} (sha256 {build['sha256'][:16]}...)"
    if cited not in build["source"] or f": {build['distribution']} {build['version']}, " not in build["source"]:
        problems.append(f"{label}: the source line does not name this wheel and sha256")
    if not says_archs(build):
        problems.append(f"{label}: no library with CUDA code (a wheel without CUDA code is not a shipped build)")
    return problems


def reread(build: dict, index_url, timeout: float) -> tuple:
    """(the record rebuilt from the artifact itself, the artifact's size in bytes, the whole reading): its facts
    read again, its identity and provenance kept."""
    work = tempfile.mkdtemp(prefix="gpuvet-regenerate-")
    try:
        path = harvest.fetch_wheel(build["wheel"], build["sha256"], work, index_url=index_url, timeout=timeout)
        size = Path(path).stat().st_size
        fresh = harvest.read_wheel(path, build["distribution"], build["version"], build["platform"], work=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    row = {k: build[k] for k in IDENTITY}
    row.update({k: fresh[k] for k in FACT_KEYS if fresh.get(k) not in (None, "", [])})
    row.update({k: build[k] for k in PROVENANCE})
    if not says_archs(row):
        raise DataError(f"{build['wheel']}: no CUDA code found in it now")
    return row, size, fresh


def _differences(old: dict, new: dict) -> str:
    return "; ".join(f"{k}: {old.get(k)} -> {new.get(k)}" for k in KEYS if old.get(k) != new.get(k))


def regenerate(data: Path, only=(), limit=None, offline=False, index_url=None, timeout=harvest.DEFAULT_TIMEOUT,
               out=print, patterns=()) -> tuple:
    """({relative path: new text} of the files whose text changes, [error lines], counts)."""
    errors = validate_curated(data)
    changed: dict = {}
    counts = {"builds": 0, "reread": 0, "same": 0, "differ": 0, "failed": 0}
    budget = limit
    readings: dict = {}  # wheel file name -> what reading it gave (METADATA included)
    for path in sorted((data / "harvested").glob("*.toml")):
        framework = path.stem
        text = path.read_text(encoding="utf-8")
        builds = tomllib.loads(text).get("build", [])
        problems = [p for b in builds for p in validate_build(b, framework)]
        wheels = [b.get("wheel") for b in builds]
        problems += [f"harvested/{framework}.toml: {w} recorded twice" for w in sorted({w for w in wheels if wheels.count(w) > 1})]
        if problems:
            errors += problems
            continue
        counts["builds"] += len(builds)
        rows = []
        started, before = time.monotonic(), counts["reread"] + counts["failed"]
        for build in builds:
            if offline or (only and framework not in only) or (budget is not None and budget <= 0) or (
                    patterns and not any(fnmatch.fnmatchcase(build["wheel"], pattern) for pattern in patterns)):
                rows.append(build)
                continue
            if budget is not None:
                budget -= 1
            one = time.monotonic()
            try:
                row, size, readings[build["wheel"]] = reread(build, index_url, timeout)
            except (GpuvetError, DataError) as exc:
                counts["failed"] += 1
                errors.append(f"{framework} {build['version']} {build['platform']}: {exc}")
                rows.append(build)
                continue
            counts["reread"] += 1
            same = row == {k: build[k] for k in KEYS if k in build}
            counts["same" if same else "differ"] += 1
            out(f"  {'same  ' if same else 'DIFFERS'} {build['wheel']} ({size / 1e6:.0f} MB, "
                f"{time.monotonic() - one:.1f} s)" + ("" if same else f": {_differences(build, row)}"))
            rows.append(row)
        if counts["reread"] + counts["failed"] > before:
            out(f"{framework}: {counts['reread'] + counts['failed'] - before} of {len(builds)} builds re-read in "
                f"{time.monotonic() - started:.0f} s")
        new = render(framework, rows)
        if new != text:
            changed[f"harvested/{path.name}"] = new
    for framework in sorted(PROFILES):
        path = data / "frameworks" / f"{framework}.toml"
        if readings and path.is_file():
            new = _releases_again(path, framework, readings, out, counts, errors)
            if new is not None:
                changed[f"frameworks/{path.name}"] = new
    return changed, errors, counts


_FROM_METADATA = re.compile(r"^source = \"(?P<index>[^:\"]+): \S+ \S+ \(Requires-Python, Requires-Dist; wheel (?P<wheel>\S+) "
                            r"METADATA, read with gpuvet kb harvest on (?P<date>\d{4}-\d{2}-\d{2})\)\"$", re.M)


def _releases_again(path: Path, framework: str, readings: dict, out, counts: dict, errors: list):
    """The framework file with each [[release]] that tools/import_overlay.py made from a wheel's METADATA made again
    from the same wheel read now (its date and index name kept); None when nothing changes."""
    import_overlay.DATA = path.parent.parent  # the pinned torch's CUDA comes from this tree's torch file
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n[[release]]\n")
    blocks = ["[[release]]\n" + b.strip("\n") + "\n" for b in body.split("\n[[release]]\n")] if body else []
    again_count = 0
    for number, block in enumerate(blocks):
        made = _FROM_METADATA.search(block)
        if not made or made.group("wheel") not in readings:
            continue
        again_count += 1
        build = dict(readings[made.group("wheel")], read_on=made.group("date"), framework=framework)
        try:
            again = release_block(build, made.group("index"))
        except LookupError as exc:
            errors.append(f"frameworks/{path.name}: {exc}")
            continue
        if again != block:
            counts["differ"] += 1
            out(f"  DIFFERS {framework} release record of {made.group('wheel')} (its METADATA read again)")
            blocks[number] = again
    if again_count:
        out(f"{framework}: {again_count} release records made again from their wheels' METADATA")
    new = head.rstrip("\n") + "\n\n" + "\n".join(blocks)
    return None if new == text else new


def rebuilt_pci_ids(data: Path, pci_ids_file: Path) -> str:
    shipped = tomllib.loads((data / "pci_ids.toml").read_text(encoding="utf-8"))["pci"]
    commit = re.search(r"/blob/([0-9a-f]{7,40})/pci\.ids", shipped["source"])
    version, devices = pci_ids.nvidia_devices(pci_ids_file.read_text(encoding="utf-8", errors="replace"))
    if not devices:
        raise DataError(f"{pci_ids_file}: no NVIDIA (10de) devices")
    return pci_ids.render(version, devices, commit.group(1) if commit else None)


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the output would differ")
    parser.add_argument("--only", action="append", default=[], metavar="FRAMEWORK",
                        help="re-read the builds of this framework only (repeatable)")
    parser.add_argument("--wheel", action="append", default=[], metavar="GLOB",
                        help="re-read only the builds whose wheel file name matches (repeatable)")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="re-read at most N builds in all")
    parser.add_argument("--offline", action="store_true", help="re-read no artifact: validate, render, compile")
    parser.add_argument("--index-url", default=None, help="the index to read from (default: pip's configuration)")
    parser.add_argument("--pci-ids", type=Path, default=None, help="a pci.ids file at the commit pci_ids.toml names")
    parser.add_argument("--timeout", type=float, default=harvest.DEFAULT_TIMEOUT, help="seconds per artifact")
    parser.add_argument("--data", type=Path, default=DATA, help="the knowledge-base data folder (default: the checkout's)")
    args = parser.parse_args(argv)
    data = args.data
    if not (data / "harvested").is_dir():
        print(f"error: {data} is not a knowledge-base data folder (no harvested/)", file=sys.stderr)
        return 2
    known = {p.stem for p in (data / "harvested").glob("*.toml")}
    if set(args.only) - known:
        print(f"error: no harvested builds of {', '.join(sorted(set(args.only) - known))} "
              f"(known: {', '.join(sorted(known))})", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 0:
        print("error: --limit must be 0 or more", file=sys.stderr)
        return 2
    started = time.monotonic()
    changed, errors, counts = regenerate(data, set(args.only), args.limit, args.offline, args.index_url, args.timeout,
                                         patterns=args.wheel)
    if args.pci_ids is not None:
        try:
            text = rebuilt_pci_ids(data, args.pci_ids)
        except (OSError, DataError) as exc:
            errors.append(str(exc))
        else:
            if text != (data / "pci_ids.toml").read_text(encoding="utf-8"):
                changed["pci_ids.toml"] = text
    for line in errors:
        print(f"error: {line}", file=sys.stderr)
    sys.stderr.flush()
    if args.check:
        stale = list(changed)
        if not stale:
            stale = [str(t.relative_to(data)) for t in compile_data.refresh(_compiled_sources(data), check=True)
                     + compile_data.refresh_heads(data / "frameworks", check=True)]
        if stale:
            print("differs from the checkout (run python tools/regenerate.py): " + ", ".join(stale))
    else:
        for relative, text in changed.items():
            (data / relative).write_text(text, encoding="utf-8")
        stale = compile_data.refresh(_compiled_sources(data)) + compile_data.refresh_heads(data / "frameworks")
        if changed or stale:
            print(f"rewrote {len(changed)} data files and {len(stale)} compiled twins")
    print(f"{counts['builds']} builds: {counts['reread']} re-read ({counts['same']} same, {counts['differ']} "
          f"differ), {counts['failed']} failed, {counts['builds'] - counts['reread'] - counts['failed']} not re-read; "
          f"{time.monotonic() - started:.0f} s")
    if errors:
        return 2
    return 1 if args.check and stale else 0


def _compiled_sources(data: Path) -> list:
    return [p for folder in (data, data / "frameworks", data / "harvested") for p in sorted(folder.glob("*.toml"))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

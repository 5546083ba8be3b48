"""Write the dated listing of every release PyPI published in a window, per distribution, that
tests/kb/test_release_coverage.py holds the knowledge base to.

    python tools/release_listing.py                       # the distributions of issue 30, 2024-01-01 .. 2026-12-31
    python tools/release_listing.py --out FILE --since 2024-01-01 --until 2026-12-31 NAME ...

It reads PyPI's JSON index API (PEP 691, API version 1.1, which gives each file's upload time) at the index pip
itself uses by default (pip's own ``PyPI.simple_url``, so no host name is written here). A release is a version with
at least one file that is not yanked; its date is its first file's upload time; pre-releases and dev releases are
left out (nobody pins them in a lockfile they ship). The file records the date it was read and says "PyPI".
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import urllib.request
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

from packaging.version import InvalidVersion, Version

# The distributions issue 30's "Done when" names (jax's CUDA plugin beside jax itself).
DISTRIBUTIONS = (
    "torch", "torchvision", "torchaudio", "triton", "vllm", "xformers", "flash-attn", "bitsandbytes", "deepspeed",
    "tensorflow", "jax", "jax-cuda12-plugin", "paddlepaddle-gpu", "mindspore", "onnxruntime-gpu", "tensorrt", "sglang",
)
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "tests" / "kb" / "pypi_releases.toml"
ACCEPT = "application/vnd.pypi.simple.v1+json"


def _index_url() -> str:
    from pip._internal.models.index import PyPI  # pip's default index, the one `pip install` reads

    return PyPI.simple_url.rstrip("/")


def fetch_project(name: str, timeout: float = 60.0) -> dict:
    request = urllib.request.Request(f"{_index_url()}/{name}/", headers={"Accept": ACCEPT})
    with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 (an https URL from pip)
        return json.load(answer)


def releases_in_window(project: dict, since: datetime.date, until: datetime.date) -> List[Tuple[str, str]]:
    """(version, first upload date) of each final release whose first non-yanked file was uploaded in the window,
    newest first. Pure: takes the PEP 691 document."""
    first: Dict[str, str] = {}
    for entry in project.get("files", ()):
        if entry.get("yanked") or not entry.get("upload-time"):
            continue
        version = _version_of(entry["filename"], project.get("versions", ()))
        if version is None:
            continue
        day = entry["upload-time"][:10]
        first[version] = min(first.get(version, day), day)
    chosen = []
    for version, day in first.items():
        parsed = Version(version)
        if parsed.is_prerelease or parsed.is_devrelease:
            continue
        if since.isoformat() <= day <= until.isoformat():
            chosen.append((version, day))
    return sorted(chosen, key=lambda pair: Version(pair[0]), reverse=True)


def _version_of(filename: str, versions: Iterable[str]) -> "str | None":
    """The project version a file belongs to: wheels name it as their second dash field; sdists end with it."""
    if filename.endswith(".whl"):
        candidate = filename.split("-")[1]
    else:
        stem = filename
        for suffix in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        candidate = stem.rsplit("-", 1)[-1]
    try:
        wanted = Version(candidate)
    except InvalidVersion:
        return None
    for version in versions:
        try:
            if Version(version) == wanted:
                return version
        except InvalidVersion:
            continue
    return None


def render(listing: Dict[str, List[Tuple[str, str]]], read_on: str, since: str, until: str) -> str:
    lines = [
        "# Every final release (not pre-release, not yanked) each distribution published on PyPI between",
        f"# {since} and {until}, with the date of its first file. Written by tools/release_listing.py from PyPI's",
        "# JSON index API (PEP 691 v1.1 upload times); tests/kb/test_release_coverage.py counts how many the",
        "# knowledge base knows. Do not edit by hand: run the tool again.",
        "",
        f'read_on = "{read_on}"',
        f'source = "PyPI: JSON index API (PEP 691), release files and upload times, read {read_on}"',
        f'window = ["{since}", "{until}"]',
    ]
    for name in sorted(listing):
        lines += ["", f'["{name}"]', "releases = ["]
        lines += [f'  ["{version}", "{day}"],' for version, day in listing[name]]
        lines.append("]")
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", default=list(DISTRIBUTIONS))
    parser.add_argument("--since", default="2024-01-01")
    parser.add_argument("--until", default="2026-12-31")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    since, until = datetime.date.fromisoformat(args.since), datetime.date.fromisoformat(args.until)
    listing = {}
    for name in args.names:
        listing[name] = releases_in_window(fetch_project(name), since, until)
        print(f"{name}: {len(listing[name])} releases", file=sys.stderr)
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    args.out.write_text(render(listing, today, args.since, args.until), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

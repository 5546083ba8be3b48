"""Fold builds read by ``gpuvet kb harvest`` (an overlay folder) into the shipped knowledge base.

    python tools/import_overlay.py OVERLAY_DIR --index-name PyPI [--releases vllm] [--data DIR]

1. Every ``[[build]]`` of ``OVERLAY_DIR/harvested/*.toml`` is added to ``src/gpuvet/kb/data/harvested/<framework>.toml``
   (a build already there, same wheel, is kept as it is). The overlay's own source line names the index URLs pip
   was configured with, which may be a private mirror or a local folder; the shipped line names the index by the
   public name the maintainer gives (``--index-name``), after checking the wheel's sha256 is what was read.
2. With ``--releases vllm``: a release the framework file lacks gets a ``[[release]]`` record made from its wheel's
   METADATA alone (Requires-Python, the torch and xformers pins); its CUDA is that of the pinned torch's PyPI default
   build as the shipped torch file states it. A release whose torch pin the torch file does not know is listed and
   left out. vLLM is the framework whose releases are fully described by that metadata (one wheel per release).

The output is sorted and stable: a rerun on the same overlay changes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from import_harvest import KEYS, render  # noqa: E402  (tools/ is not a package)

from gpuvet.kb import loader, versions  # noqa: E402
from gpuvet.kb.records import variant_key  # noqa: E402

IMPORTED_KEYS = KEYS
DATA = REPO / "src" / "gpuvet" / "kb" / "data"  # --data: another copy (the tests import into a temporary one)


def _shipped_builds(framework: str) -> list:
    path = DATA / "harvested" / f"{framework}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")).get("build", []) if path.is_file() else []


def import_builds(overlay: Path, index_name: str) -> dict:
    """{framework: [builds added]}; rewrites the harvested files of the frameworks that gained builds."""
    added: dict = {}
    for path in sorted((overlay / "harvested").glob("*.toml")):
        for build in tomllib.loads(path.read_text(encoding="utf-8")).get("build", []):
            if not (build.get("sass") or build.get("ptx") or build.get("platform") == "aarch64"):
                continue  # a wheel without CUDA code says nothing about archs (an Arm CPU build excepted)
            row = {k: build[k] for k in IMPORTED_KEYS if build.get(k) not in (None, "", [])}
            row["source"] = (f"{index_name}: {build['distribution']} {build['version']}, wheel {build['wheel']} "
                             f"(sha256 {build['sha256'][:16]}...), read with gpuvet kb harvest on {build['read_on']}")
            added.setdefault(build["framework"], []).append(row)
    for framework, rows in sorted(added.items()):
        shipped = _shipped_builds(framework)
        have = {(b["distribution"], b["version"], b.get("platform"), b.get("wheel")) for b in shipped}
        fresh = [r for r in rows if (r["distribution"], r["version"], r.get("platform"), r.get("wheel")) not in have]
        added[framework] = fresh
        if fresh:
            (DATA / "harvested" / f"{framework}.toml").write_text(render(framework, shipped + fresh), encoding="utf-8")
    return added


def _torch_default(version: str):
    torch = loader.framework_from(DATA / "frameworks" / "torch.toml")
    release = torch.release(version)
    return release.default if release is not None else None


def _pin(requires: list, name: str):
    for requirement in requires:
        match = re.match(r"^%s==([^;,\s]+)$" % re.escape(name), requirement.strip())
        if match:
            return match.group(1)
    return None


def release_block(build: dict, index_name: str) -> str:
    """The [[release]] record of one vLLM release, from its wheel's METADATA (see the module docstring)."""
    version, torch_pin = build["version"], build.get("requires_torch")
    plain = _torch_default(torch_pin) if torch_pin else None
    if plain is None or not plain.cuda:
        raise LookupError(f"vllm {version}: pins torch=={torch_pin}, which the shipped torch file does not describe")
    requires = {"torch": f"=={torch_pin}"}
    xformers = _pin(build.get("requires", []), "xformers")
    if xformers:
        requires["xformers"] = f"=={xformers}"
    name = variant_key(plain.cuda)
    read = f"wheel {build['wheel']} METADATA, read with gpuvet kb harvest on {build['read_on']}"
    torch_source = plain.source.split(" ; ")[0]
    lines = [
        "[[release]]",
        f"version = {json.dumps(version)}",
    ]
    if build.get("requires_python"):
        lines.append(f"python = {json.dumps(build['requires_python'])}")
    lines += [
        f"default_variant = {json.dumps(name)}",
        "requires = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in requires.items()) + " }",
        "companions = {}",
        'os = ["linux"]',
        f"notes = {json.dumps(f'installing vllm replaces torch with torch=={torch_pin} from {index_name} (CUDA {plain.cuda} build)')}",
        f"source = {json.dumps(f'{index_name}: vllm {version} (Requires-Python, Requires-Dist; {read})')}",
        "  [[release.variant]]",
        f"  name = {json.dumps(name)}",
        f"  cuda = {json.dumps(plain.cuda)}",
        '  cuda_from = "torch"',
        f"  install = {json.dumps(f'pip install vllm=={version}')}",
        f"  source = {json.dumps(f'{index_name}: vllm {version} (torch=={torch_pin}) ; {torch_source}')}",
    ]
    return "\n".join(lines) + "\n"


def import_releases(overlay: Path, framework: str, index_name: str) -> tuple:
    """(added versions, skipped lines): new [[release]] blocks merged into the framework file, newest first."""
    path = DATA / "frameworks" / f"{framework}.toml"
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n[[release]]\n")
    blocks = ["[[release]]\n" + b.strip("\n") + "\n" for b in body.split("\n[[release]]\n")] if body else []
    known = {re.search(r'^version = "([^"]+)"', b, re.M).group(1) for b in blocks}  # type: ignore[union-attr]
    added, skipped = [], []
    for source in sorted((overlay / "harvested").glob(f"{framework}-*.toml")):
        for build in tomllib.loads(source.read_text(encoding="utf-8")).get("build", []):
            if build.get("framework") != framework or build.get("platform", "x86_64") != "x86_64":
                continue
            if build["version"] in known or build["version"] in added:
                continue
            try:
                blocks.append(release_block(build, index_name))
            except LookupError as exc:
                skipped.append(str(exc))
                continue
            added.append(build["version"])
    blocks.sort(key=lambda b: versions.parse(re.search(r'^version = "([^"]+)"', b, re.M).group(1)), reverse=True)  # type: ignore[union-attr, arg-type, return-value]
    path.write_text(head.rstrip("\n") + "\n\n" + "\n".join(blocks), encoding="utf-8")
    return added, skipped


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("overlay", type=Path)
    parser.add_argument("--index-name", required=True, help="the public name of the index the wheels came from")
    parser.add_argument("--releases", action="append", default=[], choices=["vllm"])
    parser.add_argument("--data", type=Path, default=None, help="the knowledge-base data folder to write")
    args = parser.parse_args(argv)
    global DATA
    if args.data is not None:
        DATA = args.data
    added = import_builds(args.overlay, args.index_name)
    for framework, rows in sorted(added.items()):
        print(f"{framework}: {len(rows)} builds added")
    for framework in args.releases:
        new, skipped = import_releases(args.overlay, framework, args.index_name)
        print(f"{framework}: {len(new)} releases added ({', '.join(new) or '-'})")
        for line in skipped:
            print(f"  skipped: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

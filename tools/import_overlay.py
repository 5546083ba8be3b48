"""Fold builds read by ``gpuvet kb harvest`` (an overlay folder) into the shipped knowledge base.

    python tools/import_overlay.py OVERLAY_DIR --index-name PyPI [--releases vllm] [--releases sglang] [--data DIR]

1. Every ``[[build]]`` of ``OVERLAY_DIR/harvested/*.toml`` is added to ``src/gpuvet/kb/data/harvested/<framework>.toml``
   (a build already there, same wheel, is kept as it is). The overlay's own source line names the index URLs pip
   was configured with, which may be a private mirror or a local folder; the shipped line names the index by the
   public name the maintainer gives (``--index-name``), after checking the wheel's sha256 is what was read.
2. With ``--releases vllm`` / ``--releases sglang``: a release the framework file lacks gets a ``[[release]]`` record
   made from its wheel's METADATA alone (Requires-Python, the exact pins of PROFILES); its CUDA is that of the pinned
   torch's PyPI default build as the shipped torch file states it. A release without an exact torch pin, or whose
   torch the torch file does not know, is listed and left out: its CUDA cannot be told.

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




def says_archs(build: dict) -> bool:
    """A wheel without CUDA code says nothing about archs (an Arm CPU build excepted: PyPI's torch for Arm)."""
    return bool(build.get("library") or build.get("platform") == "aarch64")


def shipped_row(build: dict, index_name: str) -> dict:
    """The shipped [[build]] of one harvested build, its index named publicly."""
    row = {k: build[k] for k in IMPORTED_KEYS if build.get(k) not in (None, "", [])}
    row["source"] = (f"{index_name}: {build['distribution']} {build['version']}, wheel {build['wheel']} "
                     f"(sha256 {build['sha256'][:16]}...), read with gpuvet kb harvest on {build['read_on']}")
    return row


def import_builds(overlay: Path, index_name: str) -> dict:
    """{framework: [builds added]}; rewrites the harvested files of the frameworks that gained builds."""
    added: dict = {}
    for path in sorted((overlay / "harvested").glob("*.toml")):
        for build in tomllib.loads(path.read_text(encoding="utf-8")).get("build", []):
            if says_archs(build):
                added.setdefault(build["framework"], []).append(shipped_row(build, index_name))
    for framework, rows in sorted(added.items()):
        shipped = _shipped_builds(framework)
        have = {(b["distribution"], b["version"], b.get("platform"), b.get("wheel")) for b in shipped}
        fresh = [r for r in rows if (r["distribution"], r["version"], r.get("platform"), r.get("wheel")) not in have]
        added[framework] = fresh
        if fresh:
            (DATA / "harvested" / f"{framework}.toml").write_text(render(framework, shipped + fresh), encoding="utf-8")
    return added


# Frameworks whose release is fully described by its wheel's METADATA: it pins one torch, whose PyPI default build
# fixes the CUDA of the stack. pins: the Requires-Dist pins a record keeps; extras: the extras a pin may sit in (the
# install then names it); own_kernels: False for a pure-Python wheel whose kernels are its pins' (SGLang).
PROFILES = {
    "vllm": {"pins": ("torch", "xformers"), "extras": (), "own_kernels": True},
    "sglang": {"pins": ("torch", "flashinfer-python", "sgl-kernel", "sglang-kernel"), "extras": ("srt",),
               "own_kernels": False},
}


def _pins(requires: list, names: tuple, extras: tuple) -> tuple:
    """({normalised name: version}, the extra the torch pin sits in or None), from harvest's `requires` lines."""
    pins: dict = {}
    torch_extra = None
    for line in requires:
        requirement, _, marker = line.partition(";")
        extra = re.search(r'extra\s*==\s*"([^"]+)"', marker)
        if extra and extra.group(1) not in extras:
            continue  # a pin of another extra (sglang[blackwell]) is not what a plain install gets
        name, _, version = requirement.strip().partition("==")
        name = re.sub(r"[-_.]+", "-", name).lower()
        if name in names and version and name not in pins:
            pins[name] = version
            if name == "torch" and extra:
                torch_extra = extra.group(1)
    return pins, torch_extra


def _vllm_range(requires: list, extras: tuple) -> tuple:
    """(the vLLM specifier a plain install of the extras gets, the extra it sits in), from harvest's `requires` lines;
    (None, None) when there is none."""
    for line in requires:
        requirement, _, marker = line.partition(";")
        extra = re.search(r'extra\s*==\s*"([^"]+)"', marker)
        if extra and extra.group(1) not in extras:
            continue
        found = re.match(r"^\s*vllm\s*([<>=!~].*)$", requirement.strip(), re.I)
        if found:
            return found.group(1).strip(), extra.group(1) if extra else None
    return None, None


def release_block(build: dict, index_name: str) -> str:
    """The [[release]] record of one release, from its wheel's METADATA (see the module docstring)."""
    framework, version = build["framework"], build["version"]
    profile = PROFILES[framework]
    pins, extra = _pins(build.get("requires", []), profile["pins"], profile["extras"])
    torch_pin = pins.get("torch")
    requires = {name: f"=={pins[name]}" for name in profile["pins"] if name in pins}
    vllm_range, vllm_extra = _vllm_range(build.get("requires", []), profile["extras"]) if framework == "sglang" else (None, None)
    if torch_pin:
        plain = loader.pinned_torch_build(torch_pin, DATA / "frameworks" / "torch.toml")
        if plain is None:
            raise LookupError(f"{framework} {version}: pins torch=={torch_pin}, which the shipped torch file does not describe")
        cuda, torch_source = plain
        pin_text = f"torch=={torch_pin}"
    elif vllm_range:
        # No torch pin, but a vLLM range: pip installs one vLLM release of it, whose torch pin decides the CUDA
        derived = loader.pinned_vllm_range_cuda(vllm_range, DATA / "frameworks" / "vllm.toml",
                                                DATA / "frameworks" / "torch.toml")
        if derived is None:
            raise LookupError(f"{framework} {version}: pins vllm{vllm_range}, whose releases do not agree on one CUDA "
                              "(or reach past the vLLM releases the knowledge base records), so its CUDA cannot be told")
        cuda, torch_source = derived
        requires["vllm"] = vllm_range
        extra = extra or vllm_extra
        pin_text = f"vllm{vllm_range}"
    else:
        raise LookupError(f"{framework} {version}: no exact torch pin in its METADATA, so its CUDA cannot be told")
    name = variant_key(cuda)
    spec = f"{framework}[{extra}]=={version}" if extra else f"{framework}=={version}"
    read = f"wheel {build['wheel']} METADATA, read with gpuvet kb harvest on {build['read_on']}"
    if framework == "vllm":
        note = f"installing vllm replaces torch with torch=={torch_pin} from {index_name} (CUDA {cuda} build)"
    elif torch_pin:
        note = f"installing {spec} makes pip install torch=={torch_pin}"
    else:
        note = (f"installing {spec} makes pip install a vLLM release of vllm{vllm_range}; every one pins a torch whose "
                f"{index_name} default build is CUDA {cuda}; sglang pins no torch itself")
    lines = ["[[release]]", f"version = {json.dumps(version)}"]
    if build.get("requires_python"):
        lines.append(f"python = {json.dumps(build['requires_python'])}")
    lines += [
        f"default_variant = {json.dumps(name)}",
        "requires = { " + ", ".join(f"{_key(k)} = {json.dumps(v)}" for k, v in requires.items()) + " }",
        "companions = {}",
    ]
    if framework == "vllm":
        lines.append('os = ["linux"]')
    lines += [
        f"notes = {json.dumps(note)}",
        f"source = {json.dumps(f'{index_name}: {framework} {version} (Requires-Python, Requires-Dist; {read})')}",
        "  [[release.variant]]",
        f"  name = {json.dumps(name)}",
    ]
    if not profile["own_kernels"]:
        lines.append("  own_kernels = false")
    lines += [
        f"  cuda = {json.dumps(cuda)}",
        '  cuda_from = "torch"',
        f"  install = {json.dumps(f'pip install {json.dumps(spec)}' if extra else f'pip install {spec}')}",
        f"  source = {json.dumps(f'{index_name}: {framework} {version} ({pin_text}) ; {torch_source}')}",
    ]
    return "\n".join(lines) + "\n"


def _key(name: str) -> str:
    return name if re.match(r"^[A-Za-z0-9_]+$", name) else json.dumps(name)


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
    parser.add_argument("--releases", action="append", default=[], choices=sorted(PROFILES))
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

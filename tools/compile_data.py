"""Compile the shipped TOML data files to JSON, which loads about ten times faster (gpuvet.tomlfile.load_toml).

    python tools/compile_data.py          # rewrite every __compiled__/<name>.json beside its TOML
    python tools/compile_data.py --check  # exit 1 if any is missing or stale (tests/test_compiled_data.py does this)

Each JSON holds the sha256 of the TOML bytes it was made from; the loader uses it only when that hash matches the
TOML file read now, so a stale JSON is never used, only slower. Files whose values JSON cannot hold (TOML dates) are
left uncompiled.

It also writes diagnose's prepared signature index (gpuvet.diagnose.signatures.index_text): every error signature
validated, each pattern's literals and line mode worked out once here instead of at every run.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "gpuvet"
FOLDERS = ["kb/data", "kb/data/frameworks", "kb/data/harvested", "i18n/en", "i18n/zh", "diagnose/data", "smoke/data",
           "ingest/data"]

sys.path.insert(0, str(ROOT.parent))
from gpuvet.tomlfile import COMPILED_DIR, refresh_twin  # noqa: E402


def sources():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).glob("*.toml"))


def refresh(paths, check=False):
    """The compiled twins of PATHS that were stale or missing: rewritten, or (check) only listed
    (gpuvet.tomlfile.refresh_twin, which the overlay's writer uses too)."""
    return [Path(target) for target in (refresh_twin(path, check) for path in paths) if target is not None]


def refresh_signature_index(check=False):
    """The prepared diagnose index, when stale or missing: rewritten (atomically), or (check) only listed."""
    from gpuvet.diagnose.signatures import DATA_DIR, index_path, index_text

    target = index_path(DATA_DIR)
    text = index_text(DATA_DIR)
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return []
    if not check:
        target.parent.mkdir(exist_ok=True)
        partial = target.with_suffix(".tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(target)
    return [target]


def refresh_heads(frameworks=ROOT / "kb" / "data" / "frameworks", check=False):
    """The framework files' heads index (gpuvet.kb.places.heads_text) in FRAMEWORKS/__compiled__/heads.json, made
    current: [its path] when it was stale or missing (rewritten, or with check only named), else []."""
    from gpuvet.kb import loader

    target = Path(frameworks) / COMPILED_DIR / "heads.json"
    text = loader.heads_text([str(p) for p in sorted(Path(frameworks).glob("*.toml"))])
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return []
    if not check:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return [target]


def main(argv):
    check = "--check" in argv
    stale = refresh(sources(), check) + refresh_heads(check=check)
    stale += refresh_signature_index(check)
    if check and stale:
        print("stale or missing compiled data (run python tools/compile_data.py): "
              + ", ".join(str(t.relative_to(ROOT)) for t in stale))
        return 1
    print("compiled data in %s folders is current" % COMPILED_DIR if check else "compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Compile the shipped TOML data files to JSON, which loads about ten times faster (gpuvet.tomlfile.load_toml).

    python tools/compile_data.py          # rewrite every __compiled__/<name>.json beside its TOML
    python tools/compile_data.py --check  # exit 1 if any is missing or stale (tests/test_compiled_data.py does this)

Each JSON holds the sha256 of the TOML bytes it was made from; the loader uses it only when that hash matches the
TOML file read now, so a stale JSON is never used, only slower. Files whose values JSON cannot hold (TOML dates) are
left uncompiled.
"""

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "gpuvet"
FOLDERS = ["kb/data", "kb/data/frameworks", "kb/data/harvested", "i18n/en", "i18n/zh", "diagnose/data", "smoke/data"]

sys.path.insert(0, str(ROOT.parent))
from gpuvet.tomlfile import COMPILED_DIR, compiled_path, parse_toml_bytes  # noqa: E402


def sources():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).glob("*.toml"))


def compiled(path: Path):
    data = path.read_bytes()
    document = parse_toml_bytes(data)
    try:
        text = json.dumps({"sha256": hashlib.sha256(data).hexdigest(), "document": document}, ensure_ascii=False,
                          sort_keys=True, separators=(",", ":"))
    except TypeError:
        return None  # a TOML date or time: JSON cannot hold it, the loader parses the TOML
    return text + "\n"


def refresh(paths, check=False):
    """The compiled twins of PATHS that were stale or missing: rewritten, or (check) only listed."""
    stale = []
    for path in paths:
        text = compiled(path)
        target = compiled_path(path)
        if text is None:
            continue
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target)
        if not check:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return stale


def main(argv):
    check = "--check" in argv
    stale = refresh(sources(), check)
    if check and stale:
        print("stale or missing compiled data (run python tools/compile_data.py): "
              + ", ".join(str(t.relative_to(ROOT)) for t in stale))
        return 1
    print("compiled data in %s folders is current" % COMPILED_DIR if check else "compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Which cases of a diagnose corpus have text new to the repository: none of their pasted lines occurs in any other
file the repository tracks.

    python bench/corpus_novelty.py tests/diagnose/corpus/blackwell-arch-floors-runtime-libraries.toml [--list]

A case whose lines already appear elsewhere (in a signature, a test, another corpus) may be matched because that text
was seen; only the cases with no such line say whether diagnose generalizes (bench/RESULTS.md reports both figures).
A line counts when it holds at least MIN_CHARS characters after whitespace is collapsed; the comparison is on that
collapsed, lower-cased form, so re-wrapped or re-indented copies are still found.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Set

ROOT = Path(__file__).resolve().parent.parent
MIN_CHARS = 24
_SPACE = re.compile(r"\s+")


def normalized(line: str) -> str:
    return _SPACE.sub(" ", line).strip().lower()


def case_lines(log: str) -> Set[str]:
    return {n for n in (normalized(line) for line in log.splitlines()) if len(n) >= MIN_CHARS}


def repository_text(exclude: Path) -> str:
    """Every tracked text file except the corpus itself and compiled twins (which repeat their TOML), collapsed."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    parts: List[str] = []
    for name in filter(None, names):
        path = ROOT / name.decode()
        if path.resolve() == exclude.resolve() or "__compiled__" in path.parts or not path.is_file():
            continue
        try:
            parts.append(normalized(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    return "\n".join(parts)


def novel_cases(cases: Iterable[Dict[str, str]], corpus: Path) -> List[bool]:
    """For each case, True when none of its lines occurs in the rest of the repository."""
    text = repository_text(corpus)
    return [not any(line in text for line in case_lines(case["log"])) for case in cases]


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--list", action="store_true", help="print each case's URL with new/seen")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from gpuvet.tomlfile import load_toml

    cases = list(load_toml(args.corpus).get("case", []))
    flags = novel_cases(cases, args.corpus)
    if args.list:
        for case, new in zip(cases, flags):
            print("%-5s %s" % ("new" if new else "seen", case["url"]))
    print("%d of %d cases have text new to the repository" % (sum(flags), len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

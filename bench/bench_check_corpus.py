"""Score `gpuvet check` on real pasted environments whose true verdict a public thread established.

    .venv/bin/python bench/bench_check_corpus.py [--verbose]

Each case of tests/checks/corpus/check_cases.toml is what a user pasted (collect_env, nvidia-smi, pip list ...) and
the framework they tried; the paste goes through the same path as `gpuvet check --from FILE TARGET`. A case counts
as right when the verdict matches (pass = pass or warn) and, for a failure, the expected cause is among the failing
codes. A paste gpuvet cannot read counts as wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "checks" / "corpus" / "check_cases.toml"


def judge_case(case: Dict[str, str]) -> Tuple[str, List[str]]:
    """(verdict, failing codes) of `gpuvet check` on the paste; ("unreadable", [why]) when it cannot be read."""
    from gpuvet.checks import run_checks
    from gpuvet.errors import GpuvetError
    from gpuvet.ingest import detect_kind, parse, parse_embedded

    text = case["paste"]
    try:
        kind = detect_kind(text)
        snapshot = parse(kind, text, "paste") if kind else parse_embedded(text)
        report = run_checks(snapshot, [case["target"]])
    except GpuvetError as exc:
        return "unreadable", [exc.message]
    target = report.targets[0]
    failing = [f.code for f in target.findings if f.severity.value == "fail"]
    failing += [f.code for f in report.machine if f.severity.value == "fail"]
    verdict = target.verdict.value
    return ("pass" if verdict == "warn" else verdict), failing


def score(cases: List[Dict[str, str]], verbose: bool = False) -> float:
    right = 0
    for case in cases:
        verdict, failing = judge_case(case)
        ok = verdict == case["expect"] and (case["expect"] != "fail" or case.get("cause") in failing)
        right += ok
        if verbose and not ok:
            print("  miss: want %-5s %-22s got %-10s %-40s %s" % (case["expect"], case.get("cause", ""), verdict,
                                                                   ",".join(failing)[:40], case["url"]))
    return right / len(cases)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from gpuvet.tomlfile import load_toml

    cases = load_toml(CORPUS)["case"]
    print("check corpus: %d real pasted environments" % len(cases))
    print("  verdict right: %.3f" % score(cases, args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())

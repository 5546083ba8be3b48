"""ARCHITECTURE.md's recipes, followed as written: each walk reads its recipe from ARCHITECTURE.md, takes the files,
names and snippets the recipe gives, applies them to a copy of the package (``src/gpuvet`` copied with
shutil.copytree, run with PYTHONPATH pointing at the copy, so nothing in the repository changes) and runs the
result: a new input kind read by ``gpuvet check --from``, a new finding rendered in English and Chinese, a new
command run as ``gpuvet NAME``.

A walk relies on the recipe's text, not on knowing the code: when a recipe's text stops matching (a file, a name or
a snippet it gives is gone), the walk fails and says which step; change the recipe and the walk follows it. The
fourth recipe, "Add a framework", is walked with data alone in tests/kb/test_add_framework_from_data.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "gpuvet"
ARCHITECTURE = REPO / "ARCHITECTURE.md"


def recipe(title: str) -> str:
    """The paragraph of ARCHITECTURE.md that starts ``**<title>.**``, its lines joined."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index(f"**{title}.**")
    end = text.find("\n\n", start)
    return " ".join(text[start:end if end != -1 else None].split())


def step(pattern: str, text: str, what: str) -> Tuple[str, ...]:
    """The groups of the recipe's sentence that gives ``what``; a clear failure when the recipe no longer says it."""
    found = re.search(pattern, text)
    assert found, f"the recipe no longer says {what} in the form this walk reads: {text}"
    return found.groups()


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A copy of the package to follow the recipes in; what the walk writes goes here and nowhere else."""
    shutil.copytree(SRC, tmp_path / "gpuvet", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def gpuvet(tree: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree), GPUVET_KB_OVERLAY="")
    return subprocess.run([sys.executable, "-m", "gpuvet", *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=str(tree))


def python(tree: Path, code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree), GPUVET_KB_OVERLAY="")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def insert_before_first(path: Path, after: str, pattern: str, new_line: str) -> None:
    """Put ``new_line`` before the first line matching ``pattern`` below the first line that starts with
    ``after`` (stripped), at that line's indentation."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(after))
    at = next(i for i in range(start + 1, len(lines)) if re.search(pattern, lines[i]))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, indent + new_line)
    path.write_text("\n".join(lines), encoding="utf-8")


def append_entries(path: Path, entries: Dict[str, str]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n" + "".join(f"{json.dumps(key)} = {json.dumps(value, ensure_ascii=False)}\n"
                                    for key, value in entries.items()))


# ------------------------------------------------------------------------------------------------ an input kind
KIND = "pyversion"
MODULE = '''"""``python --version``: the interpreter a job runs."""

from __future__ import annotations

import re
from typing import Any, Dict

from gpuvet.ingest.common import input_error, pasted_source, set_python, shell

KIND = "pyversion"
_LINE = re.compile(r"^Python (\\d+\\.\\d+\\.\\d+\\S*)$")


def looks_like(text: str) -> bool:
    return _LINE.match(text.strip()) is not None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    match = _LINE.match(text.strip())
    if match is None:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    snapshot = shell(KIND, name)
    set_python(snapshot, match.group(1), pasted_source(KIND))
    return snapshot
'''


def test_add_an_input_kind(tree):
    text = recipe("Add an input kind")
    (module_path,) = step(r"Write `(ingest/<kind>\.py)` with a `looks_like\(text\)` detector and a "
                          r"`parse\(text, name\)`", text, "the module and its two functions")
    registry, table, entry = step(r"add one entry to `([\w/]+\.py):(\w+)`, `(_kind\([^`]*\))`", text,
                                  "the registry entry")
    (import_list,) = step(r"with `<kind>` in that module's `(from [\w.]+ import) \(\.\.\.\)` list", text,
                          "the import of the module")
    label, english, chinese = step(r'its display name `"([\w.]+<kind>)"` in both `([\w/]+\.toml)` and '
                                   r'`([\w/]+\.toml)`', text, "the display name")

    package = tree / "gpuvet"
    (package / module_path.replace("<kind>", KIND)).write_text(MODULE, encoding="utf-8")
    # most specific first: the new kind goes at the head of the list, before any detector that might take it
    insert_before_first(package / registry, table, r"\S", entry.replace("<kind>", KIND) + ",")
    insert_before_first(package / registry, import_list, r"\S", KIND + ",")
    append_entries(package / english, {label.replace("<kind>", KIND): "python --version"})
    append_entries(package / chinese, {label.replace("<kind>", KIND): "python --version 输出"})

    # A real captured sample: what this test's own interpreter prints.
    sample = subprocess.run([sys.executable, "--version"], capture_output=True, text=True, check=True).stdout
    (tree / "sample.txt").write_text(sample, encoding="utf-8")
    version = sample.split()[1]

    run = gpuvet(tree, "check", "--from", "sample.txt", "--format", "json", "--no-network", "--lang", "en")
    assert run.returncode in (0, 1, 3), run.stderr
    snapshot = json.loads(run.stdout)["snapshot"]
    assert snapshot["python"]["value"]["version"] == version
    assert snapshot["python"]["source"] == f"pasted:{KIND}"
    forced = gpuvet(tree, "check", "--from", f"{KIND}:sample.txt", "--no-network", "--lang", "zh")
    assert forced.returncode in (0, 1, 3) and "Traceback" not in forced.stderr, forced.stderr


# --------------------------------------------------------------------------------------------------- a finding
def test_add_a_finding(tree):
    text = recipe("Add a finding")
    (table,) = step(r"Add a row to `(findings\.KINDS)` \(catalog key → code, layer, severity", text, "the KINDS row")
    english, chinese = step(r"sentences in both catalogs \(`(i18n/en/<area>\.toml)` and `(i18n/zh/<area>\.toml)`",
                            text, "the catalogs")
    (call,) = step(r"raise it with `(make\(\"checks\.my_key\", \*\*facts\))`", text, "how to raise it")

    package = tree / "gpuvet"
    module, _, name = table.rpartition(".")
    key = "checks.recipe_walk"
    insert_before_first(package / f"{module}.py", name, r"^\s+\"", f'"{key}": ("health_problem", "host", WARN),')
    area = key.split(".")[0]
    append_entries(package / english.replace("<area>", area), {
        f"{key}.title": "{disk} is nearly full", f"{key}.detail": "{disk} has {free} free.",
        f"{key}.fix": "Free space on {disk}."})
    append_entries(package / chinese.replace("<area>", area), {
        f"{key}.title": "{disk} 快满了", f"{key}.detail": "{disk} 只剩 {free}。", f"{key}.fix": "清理 {disk} 上的空间。"})

    raised = call.replace("checks.my_key", key).replace("**facts", 'disk="/data", free="1 GiB"')
    code = (f"from gpuvet.findings import {call.split('(')[0]}\n"
            "from gpuvet.i18n import render\n"
            f"finding = {raised}\n"
            "print(finding.code, finding.layer, finding.severity.value)\n"
            "for lang in ('en', 'zh'):\n"
            "    print(render(finding.title, lang), '|', render(finding.detail, lang), '|',"
            " render(finding.fix.summary, lang))\n")
    run = python(tree, code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "health_problem host warn",
        "/data is nearly full | /data has 1 GiB free. | Free space on /data.",
        "/data 快满了 | /data 只剩 1 GiB。 | 清理 /data 上的空间。",
    ]


# --------------------------------------------------------------------------------------------------- a command
CHECKS_MODULE = '''"""How many GPUs a snapshot names: the logic of ``gpuvet gpucount`` (pure)."""

from __future__ import annotations

from typing import Any, Mapping


def gpu_count(snapshot: Mapping[str, Any]) -> int:
    gpus = (snapshot.get("gpus") or {}).get("value") or []
    return len(gpus)
'''
REPORT_MODULE = '''"""The text of ``gpuvet gpucount``."""

from __future__ import annotations


def render(count: int) -> str:
    return f"GPUs: {count}\\n"
'''
CLI_MODULE = '''"""``gpuvet gpucount --from FILE``: how many GPUs a pasted tool output names."""

from __future__ import annotations

import argparse
from typing import Any

from gpuvet.checks.gpucount import gpu_count
from gpuvet.ingest import read_input
from gpuvet.report.gpucount import render


def run(args: argparse.Namespace, output: Any) -> int:
    output.write(render(gpu_count(read_input(args.source))))
    return 0
'''


def test_add_a_command(tree):
    text = recipe("Add a command")
    member, enum_file, enum_class = step(r"Add a member `(<NAME> = \"<name>\")` to `([\w/_.]+):(\w+)`", text,
                                         "the command's member")
    parser_file, parser_function, parser_snippet = step(
        r"its parser in\s+`([\w/_.]+):(\w+)` \(`(p = sub\.add_parser\(\"<name>\", help=\"\.\.\.\"\))`", text,
        "where the parser goes")
    branch_file, branch_function, *branch = step(
        r"its branch in `([\w/_.]+):(\w+)` \(`(if command is Command\.<NAME>:)`\s+/ `(from gpuvet\.cli import <name>)`"
        r" / `(return <name>\.run)`", text, "the command's branch")
    module_path, signature = step(r"write `(cli/<name>\.py)` with\s+`(run\(args, output\) -> int)`", text,
                                  "the command's module and function")
    (write_call,) = step(r"it writes with\s+`(output\.write\(text\))`", text, "how a command writes")
    assert "`report/<name>.py` renderer" in text and "logic in a checks-stage module" in text

    name = "gpucount"
    words = {"<name>": name, "<NAME>": name.upper()}

    def filled(snippet: str) -> str:
        for placeholder, word in words.items():
            snippet = snippet.replace(placeholder, word)
        return snippet

    package = tree / "gpuvet"
    assert signature.startswith("run(") and write_call.startswith("output.write(")
    (package / "checks" / f"{name}.py").write_text(CHECKS_MODULE, encoding="utf-8")
    (package / "report" / f"{name}.py").write_text(REPORT_MODULE, encoding="utf-8")
    (package / module_path.replace("<name>", name)).write_text(CLI_MODULE, encoding="utf-8")
    insert_before_first(package / enum_file, f"class {enum_class}(", r'^    [A-Z_]+ = "', filled(member))
    parser_line = filled(parser_snippet).replace('"..."', '"how many GPUs a pasted output names"')
    insert_before_first(package / parser_file, f"def {parser_function}(", r"\bsub\.add_parser\(",
                        parser_line + '; p.add_argument("--from", dest="source", required=True)')
    insert_before_first(package / branch_file, f"def {branch_function}(", r"^    if command is Command\.",
                        "%s\n        %s\n        %s" % tuple(filled(line) for line in branch))

    smi = REPO / "tests" / "fixtures" / "nvidia-smi" / "h100-80gb-hbm3-sxm-8gpu_drv565.57.01.txt"
    run = gpuvet(tree, name, "--from", str(smi))
    assert (run.returncode, run.stdout, run.stderr) == (0, "GPUs: 8\n", "")
    usage = gpuvet(tree, name)  # its parser is the real one: a missing option is a usage error
    assert usage.returncode == 2 and "--from" in usage.stderr and "Traceback" not in usage.stderr
    listed = gpuvet(tree, "--help")
    assert name in listed.stdout


def test_the_walks_changed_nothing_in_the_repository():
    """The walks wrote only into their copies (a module the recipes would add is absent here)."""
    assert not (SRC / "ingest" / f"{KIND}.py").exists()
    assert not (SRC / "cli" / "gpucount.py").exists()
    assert "checks.recipe_walk" not in (SRC / "findings.py").read_text(encoding="utf-8")

"""The command line stops at ``gpuvet/cli/``: below it, functions take typed options (``CheckOptions``,
``SnapshotInputs``, ``PlanOptions``, ``DistributedOptions``), never argparse's Namespace, so a library caller builds
the same inputs the command does. Read from the source with ``ast`` (the imports of test_layers.py)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List

from tests.architecture.test_layers import SRC, all_modules, imported_modules, module_name

# Programs of their own, started by ``python -m`` in a child process (ARCHITECTURE.md, "Exceptions, on purpose"): the
# smoke workers and the utilization sampler parse their own few arguments.
CHILD_PROGRAMS = {
    "gpuvet.sources.smoke.sampler",
    "gpuvet.sources.smoke.torch_worker",
    "gpuvet.sources.smoke.dist_worker",
    "gpuvet.sources.smoke.other_workers",
}


def _held_to_it(module: str) -> bool:
    """A module the rule holds: outside the command line, and not a child program."""
    return not (module == "gpuvet.cli" or module.startswith("gpuvet.cli.") or module == "gpuvet.__main__"
                or module in CHILD_PROGRAMS)


def argparse_imports(path: Path, module: str) -> List[int]:
    """The lines where ``module`` (the file at ``path``) imports argparse, if the rule holds it."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    return [line for line, target in imported_modules(path, package) if target.split(".")[0] == "argparse"] \
        if _held_to_it(module) else []


def test_no_module_outside_cli_imports_argparse() -> None:
    found = [f"{path.relative_to(SRC.parent)}:{line}" for path in all_modules()
             for line in argparse_imports(path, module_name(path))]
    assert found == []


def test_the_child_programs_are_programs() -> None:
    """The exceptions stay exceptions: each is run as a program, not imported for its functions."""
    for name in CHILD_PROGRAMS:
        path = SRC.parent / (name.replace(".", "/") + ".py")
        assert 'if __name__ == "__main__":' in path.read_text(encoding="utf-8"), name


def test_no_namespace_is_named_outside_cli() -> None:
    """Not even under TYPE_CHECKING or in an annotation string: a Namespace parameter is a command-line leak."""
    leaks = []
    for path in all_modules():
        if not _held_to_it(module_name(path)):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "Namespace":
                leaks.append(f"{path.relative_to(SRC.parent)}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "argparse.Namespace" in node.value:
                leaks.append(f"{path.relative_to(SRC.parent)}:{node.lineno}")
    assert leaks == []


def test_the_rule_can_fail(tmp_path: Path) -> None:
    planted = tmp_path / "gpuvet" / "checks" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("import json\nimport argparse\n\ndef run(args: argparse.Namespace) -> None: ...\n",
                       encoding="utf-8")
    assert argparse_imports(planted, "gpuvet.checks.planted") == [2]
    assert argparse_imports(planted, "gpuvet.cli.planted") == []

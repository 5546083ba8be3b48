"""The stages of gpuvet and what each may import: data flows one way, from the probe to the command line.

The same order is written in ARCHITECTURE.md. A module may import its own stage or an earlier one, never a later
one; the test reads every module's imports (top-level and inside functions) from the source with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuvet"

# stage number -> the top-level names of gpuvet that make it up, earliest first.
STAGES: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("probe", ("probe",)),  # stdlib only, Python 3.6+: what ships to remote hosts
    ("core", ("__init__", "errors", "tomlfile", "userfiles", "models", "findings", "snapshot", "i18n")),
    ("knowledge", ("kb",)),
    ("inputs", ("ingest", "sources")),
    ("checks", ("checks", "diagnose", "recommend")),
    ("report", ("report",)),
    ("commands", ("cli", "__main__")),
)
STAGE_OF: Dict[str, int] = {name: index for index, (_, names) in enumerate(STAGES) for name in names}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def top_level(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path, package: str = "") -> Iterator[Tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not package:
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            yield node.lineno, name
            for alias in node.names:  # `from gpuvet import kb` imports the kb stage
                if name == "gpuvet":
                    yield node.lineno, "gpuvet." + alias.name


def all_modules() -> List[Path]:
    return sorted(SRC.rglob("*.py"))


def test_every_package_has_a_stage() -> None:
    names = {top_level(module_name(path)) for path in all_modules()}
    assert names - set(STAGE_OF) == set(), "add the new package to STAGES here and in ARCHITECTURE.md"


def violations() -> List[str]:
    found = []
    for path in all_modules():
        module = module_name(path)
        stage = STAGE_OF[top_level(module)]
        for line, target in imported_modules(path):
            if target != "gpuvet" and not target.startswith("gpuvet."):
                continue
            target_stage = STAGE_OF.get(top_level(target))
            if target == "gpuvet":
                target_stage = STAGE_OF["__init__"]
            if target_stage is not None and target_stage > stage:
                found.append(
                    f"{path.relative_to(SRC.parent)}:{line}: {module} ({STAGES[stage][0]}) imports "
                    f"{target} ({STAGES[target_stage][0]})"
                )
    return found


def test_no_module_imports_a_later_stage() -> None:
    assert violations() == []


def test_the_probe_imports_only_the_standard_library_and_itself() -> None:
    import sys

    stdlib: Set[str] = set(getattr(sys, "stdlib_module_names", ()))
    if not stdlib:
        pytest.skip("sys.stdlib_module_names needs Python 3.10+ (the Python 3.6 test covers older ones)")
    allowed_optional = {"pynvml"}  # NVIDIA's binding, used only when importable (guarded import)
    bad = []
    for path in (SRC / "probe").rglob("*.py"):
        for line, target in imported_modules(path):
            root = target.split(".")[0]
            if target.startswith("gpuvet.probe") or root == "__future__" or root in stdlib or root in allowed_optional:
                continue
            bad.append(f"{path.name}:{line}: {target}")
    assert bad == []


def test_the_checker_notices_a_backward_import(tmp_path: Path) -> None:
    """The rule itself can fail: a kb module importing the report stage is caught."""
    module = tmp_path / "gpuvet" / "kb" / "planted.py"
    module.parent.mkdir(parents=True)
    module.write_text("from gpuvet.report.envelope import dumps\n", encoding="utf-8")
    imports = list(imported_modules(module, package="gpuvet.kb"))
    assert imports == [(1, "gpuvet.report.envelope")]
    assert STAGE_OF[top_level("gpuvet.report.envelope")] > STAGE_OF["kb"]

"""No two gpuvet modules import each other, however long the loop: the import graph of ``src/gpuvet`` is acyclic.

test_layers.py keeps the stages in order; inside one stage nothing else did, and ``kb/loader.py`` and
``kb/overlay.py`` came to import each other (issue 36). A loop means neither module can be read, tested or moved
without the other, and one that runs at import time breaks depending on which is imported first.

Read from the source with ``ast``: imports at module level and inside functions (a lazy import is still a
dependency); an import under ``if TYPE_CHECKING:`` is not, since it never runs (the documented way to name
``KnowledgeBase`` in a signature, ARCHITECTURE.md "Habits"). ``from gpuvet.kb import loader`` is an edge to the
module ``gpuvet.kb.loader``; ``from gpuvet.kb import KnowledgeBase`` to the package ``gpuvet.kb``. The implicit
import of a parent package by its submodule is not an edge (every submodule would loop with its ``__init__``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuvet"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> Dict[str, Path]:
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_time_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` except the bodies of ``if TYPE_CHECKING:`` (their ``else`` still runs)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _run_time_nodes(other)
            continue
        yield child
        yield from _run_time_nodes(child)


def imports_of(name: str, path: Path, modules: Dict[str, Path]) -> Set[str]:
    """The gpuvet modules ``name`` (read from ``path``) imports at run time, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: Set[str] = set()
    for node in _run_time_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # a name that is a submodule is an import of that module; any other name comes from `origin` itself
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import gpuvet.kb.compat.x`: the longest module it names
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> Dict[str, Set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    found: List[List[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_loop_of_any_length_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []
    assert sorted(cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}})) == [["a", "b"], ["c", "d"]]


def test_the_graph_reads_lazy_imports_and_skips_type_checking_ones():
    graph = import_graph()
    assert "gpuvet.kb.overlay" in graph["gpuvet.kb.loader"]  # inside a function
    assert "gpuvet.kb.places" in graph["gpuvet.kb.overlay"]  # at module level
    assert "gpuvet.kb" not in graph["gpuvet.checks.features"]  # KnowledgeBase, named under TYPE_CHECKING only


def test_no_gpuvet_modules_import_each_other():
    loops = cycles(import_graph())
    assert loops == [], "modules that import each other (break the loop: move the shared part below both):\n" + \
        "\n".join(" <-> ".join(loop) for loop in loops)

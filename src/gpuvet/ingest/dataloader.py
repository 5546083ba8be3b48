"""DataLoader workers that would use CUDA once they fork: on Windows they are spawned, on Linux (Python 3.13 and
older) they fork. Read from the project's Python with ``ast``; pure (file name -> source in, lint entries out).

PyTorch: "On Unix, fork() is the default multiprocessing start method ... On Windows or MacOS, spawn() is the
default" (https://pytorch.org/docs/stable/data.html#platform-specific-behaviors), and "The CUDA runtime does not
support the fork start method; either the spawn or forkserver start method are required to use CUDA in
subprocesses" (https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing). Python 3.14
made forkserver the default on Linux (https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional

_DATASET_METHODS = ("__init__", "__getitem__", "__getitems__", "__iter__")


def _string(node: Any) -> Optional[str]:
    import ast

    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _cuda_touch(node: Any) -> Optional[str]:
    """What in a call puts data on the GPU: ``x.cuda()``, ``x.to("cuda")`` / ``x.to(torch.device("cuda:0"))``, or
    ``device="cuda"``; None for anything else (a device held in a variable is not guessed)."""
    import ast

    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "cuda":
        return ".cuda()"

    def cuda_value(value: Any) -> bool:
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Attribute, ast.Name)) and value.args:
            name = value.func.attr if isinstance(value.func, ast.Attribute) else value.func.id
            if name == "device":
                value = value.args[0]
        return (_string(value) or "").startswith("cuda")

    if isinstance(func, ast.Attribute) and func.attr == "to" and node.args and cuda_value(node.args[0]):
        return '.to("cuda")'
    for keyword in node.keywords:
        if keyword.arg == "device" and cuda_value(keyword.value):
            return 'device="cuda"' if not isinstance(func, ast.Attribute) or func.attr != "to" else '.to("cuda")'
    return None


def _call_name(node: Any) -> Optional[str]:
    import ast

    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id
        if isinstance(node.func, ast.Attribute):
            return node.func.attr
    return None


def _source_of(node: Any) -> str:
    """An expression as written (``ast.unparse``, Python 3.9+), or its name or value on 3.8."""
    import ast

    if hasattr(ast, "unparse"):
        return str(ast.unparse(node))
    return str(node.id if isinstance(node, ast.Name) else getattr(node, "value", "..."))


def dataloader_fork_risks(sources: Mapping[str, str], python: Optional[str] = None,
                          limit: int = 20) -> List[Dict[str, str]]:
    """DataLoaders whose workers would touch CUDA in a forked process on Linux: ``num_workers`` above 0 (or set
    from a variable) and no ``multiprocessing_context``, over a dataset class of the project whose ``__init__``
    or ``__getitem__`` puts data on the GPU. On Windows the workers were spawned and this ran; on Linux with
    Python 3.13 or older they fork, and the first CUDA call there raises "Cannot re-initialize CUDA in forked
    subprocess". A ``set_start_method("spawn"/"forkserver")`` anywhere in the project is taken as the fix made.
    Read with Python's ``ast`` (``sources``: file name -> source); files that do not parse are left alone."""
    import ast

    if python:
        parts = [int(p) for p in re.findall(r"\d+", python)[:2]]
        if len(parts) == 2 and tuple(parts) >= (3, 14):
            return []  # forkserver by default on Linux
    trees: Dict[str, Any] = {}
    from gpuvet.userfiles import parse_python

    for name, source in sources.items():
        tree = parse_python(source, name)  # bounded: a 100,000-term expression is left alone, not recursed into
        if tree is not None:
            trees[name] = tree
    touching: Dict[str, str] = {}  # dataset class -> "calls .cuda() in __getitem__ (data.py:17)"
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) == "set_start_method":
                chosen = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "method"), None)
                if _string(chosen) in ("spawn", "forkserver"):
                    return []
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if not isinstance(method, ast.FunctionDef) or method.name not in _DATASET_METHODS:
                    continue
                touch = next(((_cuda_touch(n), getattr(n, "lineno", 0)) for n in ast.walk(method) if _cuda_touch(n)), None)
                if touch and node.name not in touching:
                    touching[node.name] = "%s in %s (%s:%d)" % (touch[0], method.name, name, touch[1])
    classes = [node for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    grown = True
    while grown:  # a subclass inherits its base's __init__/__getitem__ (a base named in the project)
        grown = False
        for node in classes:
            bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases]
            inherited = next((touching[b] for b in bases if b in touching), None)
            if inherited and node.name not in touching:
                touching[node.name], grown = inherited, True
    found: List[Dict[str, str]] = []
    for name, tree in trees.items():
        assigned: Dict[str, str] = {}  # variable -> the class it was made from
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _call_name(node.value):
                for target in node.targets:
                    key = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
                    if key:
                        assigned[key] = str(_call_name(node.value))
        guarded = any(isinstance(n, ast.If) and "__name__" in ast.dump(n.test) for n in tree.body)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or _call_name(node) != "DataLoader" or len(found) >= limit:
                continue
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            workers = keywords.get("num_workers")
            if workers is None and len(node.args) >= 6:  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)
                workers = node.args[5]
            if workers is None or isinstance(workers, ast.Constant) and not (isinstance(workers.value, int) and workers.value > 0):
                continue
            context = keywords.get("multiprocessing_context")
            if context is not None and _string(context) != "fork":
                continue
            dataset = keywords.get("dataset") or (node.args[0] if node.args else None)
            made_from = _call_name(dataset) if isinstance(dataset, ast.Call) else \
                assigned.get(dataset.id if isinstance(dataset, ast.Name) else dataset.attr) if \
                isinstance(dataset, (ast.Name, ast.Attribute)) else None
            if made_from not in touching:
                continue
            line = "%d: DataLoader(num_workers=%s) over %s, which puts data on the GPU: %s" % (
                node.lineno, _source_of(workers), made_from, touching[str(made_from)])
            if not guarded:
                line += '; no if __name__ == "__main__": guard in this file'
            found.append({"file": name, "line": line, "problem": "dataloader_fork"})
    return found

"""Which of a build's libraries are the framework's own kernels, and which serve one feature: data, not code.

A framework file says it in its ``[libraries]`` table (docs/KB.md)::

    [libraries]
    kernels = ["torch/lib/libtorch_cuda.so", "torch/lib/libcaffe2_gpu.so"]
    features = [{ files = "torch/lib/libcusparseLt*", feature = "2:4 sparse matmul (cuSPARSELt)" }]
    by_gpu = ["vllm/vllm_flash_attn/_vllm_fa2_C*.so"]   # kernels used only on the GPUs they are built for

Some packages carry one library per CUDA version and load the one of the CUDA they run on (bitsandbytes picks
``libbitsandbytes_cuda124.so`` for a torch built with CUDA 12.4; MindSpore its ``libmindspore_gpu.so.11.6``): code the
runtime never loads does not count, so the table can say which::

    select = [{ family = "bitsandbytes/libbitsandbytes_cuda*", loads = "bitsandbytes/libbitsandbytes_cuda{cuda}.so" }]

(``{cuda}`` is the CUDA the build runs on as digits, ``124``; ``{cuda_mm}`` as ``12.4``; ``{cuda_major}`` as ``12``).

Patterns are ``fnmatch`` patterns on the path inside the wheel (``torch/lib/libtorch_cuda.so``); an installed file
(``/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so``) matches by its tail. A framework file without the
table treats every library as its own kernels (nothing passes on a library nobody classified); with the table, a
library it does not name is a feature of its own (named by its file): it can warn, never pass or fail the framework.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple

from gpuvet.kb import compat


def _matches(path: str, pattern: str) -> bool:
    path = path.replace("\\", "/")
    if "/" not in path:  # a capture keeps a library by its file name alone: match the pattern's last part
        pattern = pattern.rsplit("/", 1)[-1]
    # the pattern's literal head must be in the path: most pairs end here, before fnmatch compiles a regex
    if _head(pattern) not in path:
        return False
    return fnmatchcase(path, pattern) or fnmatchcase(path, "*/" + pattern)


def _head(pattern: str) -> str:
    for index, char in enumerate(pattern):
        if char in "*?[":
            return pattern[:index]
    return pattern


# (id of a [libraries] table, path) -> (role, feature): a check loads every release of a framework, whose builds name
# the same few library files again and again (torch: 155 lookups of about 15 names). The tables live as long as the
# process (the loader caches them), so their id is a stable key.
_ROLES: Dict[Tuple[int, str], Tuple[str, Optional[str]]] = {}


def role_of(spec: Optional[Mapping[str, Any]], path: str) -> Tuple[str, Optional[str]]:
    """(role, feature) of one library file under a framework's ``[libraries]`` table: a feature pattern first, then the
    kernels; a file neither names serves a feature of its own."""
    key = (id(spec), path)
    found = _ROLES.get(key)
    if found is None:
        found = _ROLES[key] = _role_of(spec, path)
    return found


def _role_of(spec: Optional[Mapping[str, Any]], path: str) -> Tuple[str, Optional[str]]:
    if not spec:
        return compat.KERNELS, None
    for item in spec.get("features", ()):  # the narrower patterns: a feature inside a kernels folder stays a feature
        if _matches(path, str(item.get("files", ""))):
            return compat.FEATURE, str(item.get("feature") or path.rsplit("/", 1)[-1])
    if any(_matches(path, pattern) for pattern in spec.get("kernels", ())):
        return compat.KERNELS, None
    return compat.FEATURE, path.rsplit("/", 1)[-1]


def with_roles(spec: Optional[Mapping[str, Any]], libraries: Iterable[compat.Library]) -> Tuple[compat.Library, ...]:
    """The libraries with the roles the framework file gives them, kernel libraries first."""
    out = []
    for library in libraries:
        role, feature = role_of(spec, library.file)
        by_gpu = bool(spec and spec.get("by_gpu")) and any(_matches(library.file, p) for p in spec["by_gpu"])  # type: ignore[index]
        out.append(library._replace(role=role, feature=feature, by_gpu=by_gpu))
    return tuple(sorted(out, key=lambda lib: (lib.role != compat.KERNELS, lib.file)))


def from_records(spec: Optional[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]) -> Tuple[compat.Library, ...]:
    """Libraries from harvested ``[[build.library]]`` records or the probe's binary entries (``units``), with roles.
    An entry that has only arch lists (an old overlay record, a capture) is one unit carrying them."""
    libraries = []
    for record in records:
        if record.get("units"):
            libraries.append(compat.library_from_record(record))
        else:
            libraries.append(compat.library_from_lists(str(record.get("file") or record.get("path") or ""),
                                                       tuple(record.get("sass") or ()), tuple(record.get("ptx") or ())))
    return with_roles(spec, libraries)


def loaded(spec: Optional[Mapping[str, Any]], libraries: Sequence[compat.Library],
           cuda: Optional[str]) -> Tuple[compat.Library, ...]:
    """The libraries the runtime loads for a build running on CUDA ``cuda``: of each ``select`` family, only the
    library its ``loads`` pattern names. When none of a family matches (no library for that CUDA), the family is
    kept whole: nothing is passed or failed on a guess of which one would load."""
    from gpuvet.kb import versions

    parsed = versions.cuda_major_minor(cuda) if cuda else None
    if not spec or not spec.get("select") or parsed is None:
        return tuple(libraries)
    fill = {"cuda": "%d%d" % parsed, "cuda_mm": "%d.%d" % parsed, "cuda_major": "%d" % parsed[0]}
    kept = list(libraries)
    for rule in spec["select"]:
        family = [lib for lib in kept if _matches(lib.file, str(rule.get("family", "")))]
        wanted = str(rule.get("loads", "")).format(**fill)
        chosen = [lib for lib in family if _matches(lib.file, wanted)]
        if chosen:
            kept = [lib for lib in kept if lib not in family or lib in chosen]
    return tuple(kept)

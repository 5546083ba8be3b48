"""Which of a build's libraries are the framework's own kernels, and which serve one feature: data, not code.

A framework file says it in its ``[libraries]`` table (docs/KB.md)::

    [libraries]
    kernels = ["torch/lib/libtorch_cuda.so", "torch/lib/libcaffe2_gpu.so"]
    features = [{ files = "torch/lib/libcusparseLt*", feature = "2:4 sparse matmul (cuSPARSELt)" }]

Patterns are ``fnmatch`` patterns on the path inside the wheel (``torch/lib/libtorch_cuda.so``); an installed file
(``/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so``) matches by its tail. A framework file without the
table treats every library as its own kernels (nothing passes on a library nobody classified); with the table, a
library it does not name is a feature of its own (named by its file): it can warn, never pass or fail the framework.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple

from gpuvet.kb import compat


def _matches(path: str, pattern: str) -> bool:
    path = path.replace("\\", "/")
    return fnmatchcase(path, pattern) or fnmatchcase(path, "*/" + pattern)


def role_of(spec: Optional[Mapping[str, Any]], path: str) -> Tuple[str, Optional[str]]:
    """(role, feature) of one library file under a framework's ``[libraries]`` table."""
    if not spec:
        return compat.KERNELS, None
    if any(_matches(path, pattern) for pattern in spec.get("kernels", ())):
        return compat.KERNELS, None
    for item in spec.get("features", ()):
        if _matches(path, str(item.get("files", ""))):
            return compat.FEATURE, str(item.get("feature") or path.rsplit("/", 1)[-1])
    return compat.FEATURE, path.rsplit("/", 1)[-1]


def with_roles(spec: Optional[Mapping[str, Any]], libraries: Iterable[compat.Library]) -> Tuple[compat.Library, ...]:
    """The libraries with the roles the framework file gives them, kernel libraries first."""
    out = []
    for library in libraries:
        role, feature = role_of(spec, library.file)
        out.append(library._replace(role=role, feature=feature))
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

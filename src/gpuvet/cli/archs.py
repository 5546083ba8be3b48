"""``gpuvet archs PATH... [--format text|json]``: the SASS and PTX archs compiled into CUDA binaries.

Each PATH is a file (shared library, executable, object, standalone fatbin) or a folder, scanned recursively.
Files without CUDA code are left out; a file that cannot be read is listed with ``error``.

Per file, each arch comes with its coverage over the file's code units (one fatbin container, one compiled
module: the driver loads a kernel from its own unit only, so ``sm_90a`` in 1 unit of 340 is one module's code),
and each PTX arch with its PTX ISA version and the CUDA release that writes it (the oldest driver that can JIT-compile
it). Relocatable device code (``__nv_relfatbin``, ``nvcc -rdc``) is shown apart: the runtime never loads it.

Exit codes (docs/CONTRACT.md §1-2): 0 when the files could be read (whether or not they hold CUDA code; some unreadable
files among readable ones are listed with their error and do not change the code); 2 when a PATH does not exist
(one line on stderr, nothing else), or when every file examined was unreadable (the result is still printed, so a
script sees which and why). Inside folders, 32-bit and big-endian ELF files are skipped (they cannot carry CUDA
code gpuvet reads); named explicitly, they are reported as unreadable.

Standard library only at import time.
"""

import os

from gpuvet.errors import ExitCode, InputError, printable
from gpuvet.probe.binaries import archs_of_kind, coverage, ptx_isa, scan_file

_SKIP_DIRS = {"__pycache__", ".git"}


def run(args, output):
    lang = getattr(args, "lang", None) or "en"
    paths = list(args.paths)
    for path in paths:
        if not os.path.lexists(path):
            from gpuvet.i18n import text

            raise InputError(
                text(lang, "binary.archs.path_missing", path=printable(path)),
                hint=text(lang, "binary.archs.path_missing_hint"),
            )
    results, examined, unreadable = collect(paths)
    if getattr(args, "format", "text") == "json":
        from gpuvet.report.envelope import dumps, envelope

        output.write(dumps(envelope(files=results)))
    else:
        from gpuvet.report.archs import render_archs_text

        cuda_of = _cuda_for_isa() if any(item.get("ptx_isa") for item in results) else {}
        output.write(render_archs_text(results, paths, lang, cuda_of))
    if examined and unreadable == examined:
        from gpuvet.i18n import text

        # The result above says which files and why; the error line (and exit code 2) tells a script.
        raise InputError(text(lang, "binary.archs.nothing_readable"))
    return int(ExitCode.OK)


def collect(paths):
    """``(files, examined, unreadable)``: the JSON ``files`` list in argument order (folders sorted within)."""
    files = []
    examined = unreadable = 0
    seen = set()
    for path in paths:
        explicit = not os.path.isdir(path)
        for candidate in [path] if explicit else _walk(path):
            real = os.path.realpath(candidate)
            if real in seen:
                continue
            seen.add(real)
            result = scan_file(candidate)
            if result.unsupported and not explicit:
                continue
            # The exit code depends on what was read, not on how the file was named: a folder whose only CUDA
            # binary cannot be read exits 2 like that file named alone (files without CUDA code do not count).
            if result.entries or result.relocatable or result.error:
                examined += 1
                unreadable += bool(result.error)
                files.append(describe(result))
    return files, examined, unreadable


def describe(result):
    """One file of the JSON ``files`` list: the scan's dict with ``units``, ``coverage`` and ``ptx_isa`` always
    there (empty for a file with no loadable code), and ``relocatable`` when it has ``__nv_relfatbin`` code."""
    found = result.as_dict()
    groups = found.setdefault("units", [])
    found["coverage"] = coverage(groups)
    found["ptx_isa"] = ptx_isa(groups)
    if result.relocatable:
        found["relocatable"] = {"sass": archs_of_kind(result.relocatable, "sass"),
                                "ptx": archs_of_kind(result.relocatable, "ptx")}
    return found


# `archs FOLDER` is asked for explicitly: deeper and wider bounds than the probe's own walk, still bounded.
WALK_MAX_DEPTH = 4096
WALK_MAX_ENTRIES = 2000000


def _walk(folder):
    """Regular files (or links to them) under ``folder``, sorted: iterative (a 1,000-level tree is no
    RecursionError), no symlinked folders, sockets, FIFOs or broken links."""
    from gpuvet.probe.files import walk_files

    return walk_files(folder, max_depth=WALK_MAX_DEPTH, max_entries=WALK_MAX_ENTRIES,
                      keep_dir=lambda parent, name: name not in _SKIP_DIRS)


def _cuda_for_isa():
    """``{"8.7": "12.8"}``: the knowledge base's PTX ISA table (kb/data/ptx_isa.toml, the one
    ``KnowledgeBase.cuda_for_ptx_isa`` reads), loaded alone: importing gpuvet.kb costs more than a whole scan."""
    from gpuvet.tomlfile import load_toml

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    table = load_toml(os.path.join(here, "kb", "data", "ptx_isa.toml"))
    return dict((str(row["version"]), str(row["cuda"])) for row in table.get("isa", ()))

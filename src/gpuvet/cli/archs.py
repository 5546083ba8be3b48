"""``gpuvet archs PATH... [--format text|json]``: the SASS and PTX archs compiled into CUDA binaries.

Each PATH is a file (shared library, executable, object, standalone fatbin) or a folder, scanned recursively.
Files without CUDA code are left out; a file that cannot be read is listed with ``error``.

Exit codes (DESIGN.md §3): 0 when the files could be read (whether or not they hold CUDA code; some unreadable
files among readable ones are listed with their error and do not change the code); 2 when a PATH does not exist
(one line on stderr, nothing else), or when every file examined was unreadable (the result is still printed, so a
script sees which and why). Inside folders, 32-bit and big-endian ELF files are skipped (they cannot carry CUDA
code gpuvet reads); named explicitly, they are reported as unreadable.

Standard library only at import time.
"""

import os

from gpuvet.cli.output import printable
from gpuvet.errors import ExitCode, InputError
from gpuvet.probe.binaries import scan_file

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
        output.write(render_text(results, paths, lang))
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
            if result.entries or result.error:
                examined += 1
                unreadable += bool(result.error)
                files.append(result.as_dict())
    return files, examined, unreadable


# `archs FOLDER` is asked for explicitly: deeper and wider bounds than the probe's own walk, still bounded.
WALK_MAX_DEPTH = 4096
WALK_MAX_ENTRIES = 2000000


def _walk(folder):
    """Regular files (or links to them) under ``folder``, sorted: iterative (a 1,000-level tree is no
    RecursionError), no symlinked folders, sockets, FIFOs or broken links."""
    from gpuvet.probe.files import walk_files

    return walk_files(folder, max_depth=WALK_MAX_DEPTH, max_entries=WALK_MAX_ENTRIES,
                      keep_dir=lambda parent, name: name not in _SKIP_DIRS)


def render_text(results, paths, lang):
    from gpuvet.i18n import text

    if not results:
        return text(lang, "binary.archs.no_cuda", paths=", ".join(printable(p) for p in paths))
    lines = []
    none = text(lang, "binary.archs.none")
    for item in results:
        lines.append(printable(item["path"]))
        if item["sass"] or item["ptx"] or not item["error"]:
            lines.append("  %-5s %s" % (text(lang, "binary.archs.sass") + ":", " ".join(item["sass"]) or none))
            lines.append("  %-5s %s" % (text(lang, "binary.archs.ptx") + ":", " ".join(item["ptx"]) or none))
        if item["error"]:
            why = item["error"][len("unreadable: ") :] if item["error"].startswith("unreadable: ") else item["error"]
            lines.append("  " + text(lang, "binary.archs.unreadable", why=printable(why)))
    return "\n".join(lines)

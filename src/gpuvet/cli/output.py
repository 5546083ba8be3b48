"""One writer for every file gpuvet writes (``-o FILE``, ``fleet --out-dir``): atomic, and polite to what is there.

- A regular file (or a new path) is replaced atomically: a temporary file in the same folder, then ``os.replace``,
  so a reader (a collector, a web server) never sees half a report. The temporary file never outlives an error.
- The replaced file keeps its permission bits; a new file gets ``0o666`` less the umask, like any tool's output,
  so a report meant for sharing can be read by a colleague or served.
- A character device, FIFO or socket (``/dev/stdout``, ``/dev/null``, a named pipe) is written to, never replaced.
- A symbolic link is followed: the file it points to is replaced, the link stays.
- A directory is refused with one line.

Every byte written here has been through the one redaction pass (:func:`gpuvet.probe.redact.redact`): whatever a
renderer produced, no token, password or URL credential reaches stdout or a file.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Optional, TextIO

from gpuvet.errors import GpuvetError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _redacted(text: str, state: Any = None) -> str:
    from gpuvet.probe.redact import redact

    return redact(text, state=state, free=False)


def write_file(path: str, text: str, state: Any = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` as the module docstring says; GpuvetError with one line when it cannot."""
    text = _redacted(text, state)
    target = os.path.realpath(path)  # through a symlink: replace the file it names, keep the link
    try:
        info: Optional[os.stat_result] = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise GpuvetError.said("errors.write", path=path, reason=exc.strerror or exc) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise GpuvetError.said("errors.write_directory", path=path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        try:  # a device or a pipe: its reader is waiting for the bytes, not for a new file in its place
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise GpuvetError.said("errors.write_device", path=path, reason=exc.strerror or exc) from None
        return
    import tempfile  # only when writing a file: keeps start-up light

    folder = os.path.dirname(target) or "."
    mode = stat.S_IMODE(info.st_mode) if info is not None else (0o666 & ~_umask())
    try:
        fd, tmp = tempfile.mkstemp(prefix=".gpuvet-", dir=folder)
    except OSError as exc:
        raise GpuvetError.said("errors.write", path=path, reason=exc.strerror or exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:  # a full disk or an interrupt: leave no temporary file behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise GpuvetError.said("errors.write", path=path, reason=exc.strerror or exc) from None
        raise


class Output:
    """Where results go: stdout, or ``--output FILE`` through :func:`write_file`."""

    def __init__(self, path: Optional[str], stdout: TextIO, redact_host: bool = False) -> None:
        from gpuvet.probe.redact import Redaction

        self.path = path if path not in (None, "-") else None
        self.stdout = stdout
        # The redaction state of this command: render_document (cli/formats.py) and diagnose switch on host
        # identity for --redact-host and teach it the host names and serials their document holds.
        self.redaction = Redaction(redact_host)

    @property
    def is_terminal(self) -> bool:
        return self.path is None and hasattr(self.stdout, "isatty") and self.stdout.isatty()

    def write(self, text: str) -> None:
        if not text.endswith("\n"):
            text += "\n"
        if self.path is None:
            from gpuvet.report.console import console_encoding, for_console

            self.stdout.write(for_console(_redacted(text, self.redaction), console_encoding(self.stdout)))
            self.stdout.flush()
            return
        write_file(self.path, text, self.redaction)


def printable(text: Any) -> str:
    """``text`` safe to echo on one line (every error line, every path `archs` prints): control characters (a newline that would forge a second ``error:`` line,
    ANSI escapes that would recolour or clear the terminal) are shown as escapes (\\n, \\x1b)."""
    text = str(text)
    if all(" " <= c != "\x7f" and not ("\x80" <= c <= "\x9f" or "\ud800" <= c <= "\udfff") for c in text) \
            and "\\" not in text:
        return text
    out = []
    for c in text:
        if c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c < " " or c == "\x7f" or "\x80" <= c <= "\x9f":
            out.append("\\x%02x" % ord(c))
        elif "\udc80" <= c <= "\udcff":  # a byte of a file name that is not UTF-8 (surrogateescape)
            out.append("\\x%02x" % (ord(c) - 0xdc00))
        elif "\ud800" <= c <= "\udfff":
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return "".join(out)

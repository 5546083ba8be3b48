"""One writer for every file gpuvet writes (``-o FILE``, ``fleet --out-dir``): atomic, and polite to what is there.

- A regular file (or a new path) is replaced atomically: a temporary file in the same folder, then ``os.replace``,
  so a reader (a collector, a web server) never sees half a report. The temporary file never outlives an error.
- The replaced file keeps its permission bits; a new file gets ``0o666`` less the umask, like any tool's output,
  so a report meant for sharing can be read by a colleague or served.
- A character device, FIFO or socket (``/dev/stdout``, ``/dev/null``, a named pipe, ``/dev/fd/N`` of a process
  substitution) is written to as a stream, never replaced (no temporary file); a FIFO nobody opens for reading
  within 10 s is refused instead of waited on forever.
- A symbolic link is followed: the file it points to is replaced, the link stays.
- :func:`write_in_folder` (``replay --emit DIR``) writes only regular files inside DIR, never through a link, and
  replaces an existing file only when asked.
- A directory is refused with one line.

Every byte written here has been through the one redaction pass (:func:`gpuvet.probe.redact.redact`): whatever a
renderer produced, no token, password or URL credential reaches stdout or a file.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Dict, List, Optional, TextIO

from gpuvet.errors import GpuvetError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _redacted(text: str, state: Any = None) -> str:
    from gpuvet.probe.redact import redact

    return redact(text, state=state, free=False)


FIFO_READER_WAIT_S = 10.0  # how long -o waits for a named pipe's reader to open it


def _write_stream(path: str, text: str) -> None:
    """Write to a device or a pipe as it is: opened without creating or truncating anything; a FIFO is given
    FIFO_READER_WAIT_S for its reader to open it, then refused, instead of blocking the open forever."""
    import time

    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            fd = os.open(path, flags)
            break
        except OSError as exc:
            if exc.errno != 6:
                raise GpuvetError.said("errors.write_device", path=path, reason=exc.strerror or exc) from None
            if time.monotonic() > deadline:  # ENXIO: a FIFO nobody has opened for reading
                raise GpuvetError.said("errors.write_fifo_unread", path=path,
                                       seconds=f"{FIFO_READER_WAIT_S:g}") from None
            time.sleep(0.05)
    try:
        os.set_blocking(fd, True)  # the reader is there: wait for it to take each piece
        data = text.encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        raise GpuvetError.said("errors.write_device", path=path, reason=exc.strerror or exc) from None
    finally:
        os.close(fd)


def write_file(path: str, text: str, state: Any = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` as the module docstring says; GpuvetError with one line when it cannot."""
    text = _redacted(text, state)
    try:  # what the path names, links followed (/dev/stdout -> /proc/self/fd/1 -> a pipe or a terminal)
        info: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise GpuvetError.said("errors.write", path=path, reason=exc.strerror or exc) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise GpuvetError.said("errors.write_directory", path=path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        _write_stream(path, text)  # a device or a pipe: its reader is waiting for the bytes, not for a new file
        return
    _replace(os.path.realpath(path), path, text, info)  # through a symlink: replace the file it names, keep the link


def _replace(target: str, path: str, text: str, info: Optional[os.stat_result]) -> None:
    """Write ``target`` atomically: a temporary file beside it, renamed over it."""
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


def write_in_folder(folder: str, files: Dict[str, str], force: bool = False, state: Any = None) -> List[str]:
    """Write each ``name -> text`` of ``files`` inside ``folder`` (created when missing) and return their paths:
    regular files only, never through a symbolic link (one planted in the folder would carry the write outside it),
    an existing file replaced only with ``force``. Every name is checked before any is written, so a refusal leaves
    the folder as it was. Atomic like :func:`write_file`; the rename replaces the name itself, so a link swapped in
    meanwhile is what gets replaced, not what it points to."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise GpuvetError.said("errors.write_folder", folder=folder, reason=exc.strerror or str(exc)) from None
    if not os.path.isdir(folder):
        raise GpuvetError.said("errors.write_not_folder", folder=folder)
    planned = []
    for name in files:
        if os.sep in name or name in ("", ".", ".."):
            raise GpuvetError.said("errors.write_file_name", name=repr(name))
        path = os.path.join(folder, name)
        try:
            info: Optional[os.stat_result] = os.lstat(path)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise GpuvetError.said("errors.write_device", path=path, reason=exc.strerror or str(exc)) from None
        if info is not None:
            if stat.S_ISLNK(info.st_mode):
                raise GpuvetError.said("errors.write_in_folder_link", path=path)
            if not stat.S_ISREG(info.st_mode):
                raise GpuvetError.said("errors.write_in_folder_special", path=path)
            if not force:
                raise GpuvetError.said("errors.write_in_folder_exists", path=path)
        planned.append((path, info, files[name]))
    for path, info, text in planned:
        _replace(path, path, _redacted(text, state), info)
    return [path for path, _, _ in planned]


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

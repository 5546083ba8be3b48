"""Files a user names on the command line (``--from``, ``--snapshot``, a log, ``diff`` snapshots, ``--hosts``).

One way to read them: a regular file or stdin (``-``), at most ``limit`` bytes, or one clear InputError. A FIFO
would block forever and /dev/zero never ends, so anything but a regular file is refused (the probe's careful
reader, gpuvet.probe.files, does the opening), and a file larger than ``limit`` is refused instead of ground
through.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Optional

from gpuvet.errors import InputError
from gpuvet.probe.files import ReadError, read_bytes

DEFAULT_LIMIT = 64 * 1024 * 1024


def _read(path: str, limit: int, what: str, hint: str) -> bytes:
    try:
        return read_bytes(path, limit)
    except ReadError as exc:
        message = str(exc)
        if "No such file" in message:
            message = f"{path} does not exist"
        raise InputError(f"cannot read {what} {message}" if not message.startswith(path + " does") else message,
                         hint=hint) from None


def read_user_bytes(path: str, limit: int = DEFAULT_LIMIT, what: str = "file", hint: str = "",
                    stdin: Optional[Any] = None) -> bytes:
    """The bytes of ``path`` (``-`` = stdin); InputError naming the file when it is missing, special or too big."""
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        buffer = getattr(stream, "buffer", None)
        data = buffer.read(limit + 1) if buffer is not None else stream.read(limit + 1).encode("utf-8")
    else:
        data = _read(path, limit + 1, what, hint)
    if len(data) > limit:
        raise _too_big(what, path, limit, hint)
    return data


def _too_big(what: str, path: str, limit: int, hint: str) -> InputError:
    return InputError(f"{what} {path if path != '-' else 'on stdin'} is larger than {limit // (1024 * 1024)} MiB, "
                      "far more than any real tool output or log excerpt", hint=hint or "pass the relevant part")


def user_byte_pieces(path: str, limit: int, piece: int, what: str = "file", hint: str = "",
                     stdin: Optional[Any] = None) -> Iterator[bytes]:
    """The bytes of ``path`` (``-`` = stdin) in pieces of at most ``piece`` bytes, for a reader that never holds the
    whole file: the same checks and InputErrors as read_user_bytes (missing, special, larger than ``limit``)."""
    import os

    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        buffer = getattr(stream, "buffer", None)
        read = buffer.read if buffer is not None else (lambda n: stream.read(n).encode("utf-8"))
        handle = None
    else:
        import stat

        _read(path, 0, what, hint)  # read_bytes' open and fstat checks, with their messages
        try:  # opened as read_bytes opens (a FIFO put there since must not block) and checked again on the descriptor
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}", hint=hint) from None
        handle = os.fdopen(fd, "rb")
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            handle.close()
            raise InputError(f"cannot read {what} {path}: not a regular file (a pipe or device), not read", hint=hint)
        if info.st_size > limit:  # said before reading any of it
            handle.close()
            raise _too_big(what, path, limit, hint)
        read = handle.read
    total = 0
    try:
        while True:
            data = read(piece)
            if not data:
                return
            total += len(data)
            if total > limit:
                raise _too_big(what, path, limit, hint)
            yield data
    finally:
        if handle is not None:
            handle.close()


def read_user_text(path: str, limit: int = DEFAULT_LIMIT, what: str = "file", hint: str = "") -> str:
    data = read_user_bytes(path, limit, what, hint)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what} {path} is not UTF-8 text", hint=hint) from None

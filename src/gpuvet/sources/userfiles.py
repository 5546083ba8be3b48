"""Files a user names on the command line (``--from``, ``--snapshot``, a log, ``diff`` snapshots, ``--hosts``).

One way to read them: a regular file or stdin (``-``), at most ``limit`` bytes, or one clear InputError. A FIFO
would block forever and /dev/zero never ends, so anything but a regular file is refused (the probe's careful
reader, gpuvet.probe.files, does the opening), and a file larger than ``limit`` is refused instead of ground
through.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from gpuvet.errors import InputError
from gpuvet.probe.files import ReadError, read_bytes

DEFAULT_LIMIT = 64 * 1024 * 1024


def read_user_bytes(path: str, limit: int = DEFAULT_LIMIT, what: str = "file", hint: str = "",
                    stdin: Optional[Any] = None) -> bytes:
    """The bytes of ``path`` (``-`` = stdin); InputError naming the file when it is missing, special or too big."""
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        buffer = getattr(stream, "buffer", None)
        data = buffer.read(limit + 1) if buffer is not None else stream.read(limit + 1).encode("utf-8")
    else:
        try:
            data = read_bytes(path, limit + 1)
        except ReadError as exc:
            message = str(exc)
            if "No such file" in message:
                message = f"{path} does not exist"
            raise InputError(f"cannot read {what} {message}" if not message.startswith(path + " does") else message,
                             hint=hint) from None
    if len(data) > limit:
        raise InputError(f"{what} {path if path != '-' else 'on stdin'} is larger than {limit // (1024 * 1024)} MiB, "
                         "far more than any real tool output or log excerpt", hint=hint or "pass the relevant part")
    return data


def read_user_text(path: str, limit: int = DEFAULT_LIMIT, what: str = "file", hint: str = "") -> str:
    data = read_user_bytes(path, limit, what, hint)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what} {path} is not UTF-8 text", hint=hint) from None

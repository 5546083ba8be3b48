"""Careful file reading for the probe: regular files only, bounded size, never raises.

A FIFO opened for reading blocks forever and /proc or a broken mount can hold other surprises, so every read the
probe does goes through :func:`read_text`, which refuses anything that is not a regular file.
"""

import os
import stat

DEFAULT_LIMIT = 1 << 20  # 1 MiB: more than any version or metadata file the probe reads


class ReadError(Exception):
    """Why a file could not be read, in one line."""


def read_text(path, limit=DEFAULT_LIMIT, allow_special=False):
    """The text of ``path`` (UTF-8, undecodable bytes replaced); ReadError with the reason otherwise.

    ``allow_special`` admits /proc and /sys files, which are not regular files in every kernel's eyes but never block.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ReadError("%s: %s" % (path, exc.strerror or exc))
    if stat.S_ISDIR(info.st_mode):
        raise ReadError("%s: is a directory, not a file" % path)
    if not stat.S_ISREG(info.st_mode) and not allow_special:
        raise ReadError("%s: not a regular file (a pipe or device), not read" % path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit)
    except OSError as exc:
        raise ReadError("%s: %s" % (path, exc.strerror or exc))
    return data.decode("utf-8", "replace")


def try_read(path, limit=DEFAULT_LIMIT, allow_special=False):
    """The text of ``path``, or None when it cannot be read."""
    try:
        return read_text(path, limit, allow_special)
    except ReadError:
        return None


def list_dir(path):
    """Sorted entries of a directory; an empty list when it cannot be listed."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def is_dir(path):
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False

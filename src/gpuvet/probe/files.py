"""Careful file reading for the probe: regular files only, bounded size, never raises.

A FIFO opened for reading blocks forever and /proc or a broken mount can hold other surprises, so every read the
probe does goes through :func:`read_text`, which refuses anything that is not a regular file.
"""

import os
import stat

DEFAULT_LIMIT = 1 << 20  # 1 MiB: more than any version or metadata file the probe reads


class ReadError(Exception):
    """Why a file could not be read, in one line."""


def read_bytes(path, limit=DEFAULT_LIMIT, allow_special=False):
    """At most ``limit`` bytes of ``path``; ReadError with the reason otherwise.

    The file is opened non-blocking and checked with fstat on the open descriptor, so a FIFO (which would block
    the open or the read forever) or a device (/dev/zero, endless) put where a file should be is refused, even if
    it replaced a regular file between a check and the open. ``allow_special`` admits /proc and /sys files, which
    are not regular files in every kernel's eyes but never block; their read is still bounded by ``limit``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if getattr(exc, "errno", None) == 21:  # EISDIR
            raise ReadError("%s: is a directory, not a file" % path)
        raise ReadError("%s: %s" % (path, exc.strerror or exc))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReadError("%s: is a directory, not a file" % path)
        if not stat.S_ISREG(info.st_mode) and not (allow_special and _special_ok(path, info)):
            raise ReadError("%s: not a regular file (a pipe or device), not read" % path)
        chunks = []
        left = limit
        # A regular file is read whole in one buffer of its size (each os.read allocates what it is asked for: a
        # 1 MiB buffer for every 3 kB METADATA, and torch's 1.5 MB RECORD in two pieces joined, cost page faults on
        # every probe); a short read of a regular file is its end. /proc and /sys files say size 0: 16 KiB pieces.
        regular = stat.S_ISREG(info.st_mode)
        piece = min(max(info.st_size + 1, 1 << 14), 1 << 26) if regular else 1 << 20
        while left > 0:
            asked = min(left, piece)
            try:
                chunk = os.read(fd, asked)
            except BlockingIOError:  # a special file with nothing to say now: never wait for it
                break
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            if regular and len(chunk) < asked and info.st_size:
                break
        return b"".join(chunks)
    except OSError as exc:
        raise ReadError("%s: %s" % (path, exc.strerror or exc))
    finally:
        os.close(fd)


def _special_ok(path, info):
    """/proc and /sys pseudo-files (and character devices under them) may be read; never a FIFO or a socket."""
    if stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
        return False
    return os.path.abspath(path).startswith(("/proc/", "/sys/"))


def read_text(path, limit=DEFAULT_LIMIT, allow_special=False):
    """The text of ``path`` (UTF-8, undecodable bytes replaced, at most ``limit`` bytes); ReadError with the reason
    otherwise. Regular files only (see :func:`read_bytes`)."""
    return read_bytes(path, limit, allow_special).decode("utf-8", "replace")


def try_read(path, limit=DEFAULT_LIMIT, allow_special=False):
    """The text of ``path``, or None when it cannot be read."""
    try:
        return read_text(path, limit, allow_special)
    except ReadError:
        return None


# Bounds of every directory walk the probe makes (binaries in site dirs): a dataset folder or a 1,000-level tree on
# sys.path must cost milliseconds, not minutes.
WALK_MAX_DEPTH = 32
WALK_MAX_ENTRIES = 200000


class WalkStats(object):
    """What a bounded walk left out: ``truncated`` holds one line per bound that was hit."""

    def __init__(self):
        self.entries = 0
        self.truncated = []

    def note(self, text):
        if text not in self.truncated and len(self.truncated) < 20:
            self.truncated.append(text)


def walk_files(top, max_depth=WALK_MAX_DEPTH, max_entries=WALK_MAX_ENTRIES, keep_dir=None, stats=None):
    """Yield the paths of the regular files (or links to them) under ``top``, sorted within each folder, depth
    first. Iterative (no recursion limit), never follows symbolic links to folders, enters at most ``max_depth``
    levels and looks at most at ``max_entries`` names; ``keep_dir(parent, name)`` may refuse a sub-folder. What a
    bound cut off is noted in ``stats``. Never raises for an unreadable folder."""
    stats = stats if stats is not None else WalkStats()
    stack = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        subdirs = []
        for name in names:
            stats.entries += 1
            if stats.entries > max_entries:
                stats.note("%s: walk stopped after %d entries" % (top, max_entries))
                return
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if keep_dir is None or keep_dir(folder, name):
                    subdirs.append(path)
                continue
            if stat.S_ISLNK(info.st_mode):
                try:
                    info = os.stat(path)
                except OSError:
                    continue  # a broken link
                if not stat.S_ISREG(info.st_mode):
                    continue  # a link to a folder is not entered (a loop), to a FIFO not read
            elif not stat.S_ISREG(info.st_mode):
                continue  # a FIFO, socket or device
            yield path
        if subdirs and depth + 1 > max_depth:
            stats.note("%s: folders deeper than %d levels not searched" % (top, max_depth))
            continue
        for path in reversed(subdirs):
            stack.append((path, depth + 1))


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

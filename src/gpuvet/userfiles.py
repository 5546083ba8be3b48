"""Everything a user or a file names, read one way: ``--from``, a log, ``--snapshot``, ``diff`` snapshots, ``--hosts``,
a capture, a project's files, the overlay's records.

A name given on the command line may be a regular file, stdin (``-``) or a pipe the user made (``<(cmd)``,
``/dev/fd/N``, a FIFO named on purpose); a file found inside a folder the user gave (a project, the overlay) must be a
regular file whose real path stays inside that folder. Every read is bounded in size (per kind: :data:`LIMITS`) and a
pipe's in time (:data:`PIPE_TIMEOUT_S`); a device (/dev/zero never ends) is never read. The bytes are decoded by
:func:`decode_text` (BOM, UTF-16, UTF-8, then the legacy CJK encodings a Windows console writes) and parsed by the
bounded parsers here (JSON, TOML, YAML, Python), whose documents are limited in depth and size. Each failure is one
:class:`~gpuvet.errors.InputError` line naming the file (exit 2), never a traceback or a hang.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from gpuvet.errors import InputError
from gpuvet.i18n import has_message, render
from gpuvet.models import Message

MiB = 1024 * 1024

# The most bytes read of each kind of input: far past any real one, so a file over it is a mistake (a wrong file,
# /dev/zero behind a link), refused before it is ground through. README, "What gpuvet touches", lists them.
LIMITS = {
    "paste": 32 * MiB,  # --from: the longest real paste (nvidia-smi -q of 16 GPUs) is well under 1 MiB
    "snapshot": 32 * MiB,
    "log": 128 * MiB,  # diagnose reads head and tail of big logs; the bytes and their text stay under 300 MB
    "capture": 64 * MiB,
    "smoke report": 16 * MiB,
    "hosts file": 16 * MiB,
    "project file": 1 * MiB,  # a requirements file, manifest, Dockerfile, script or source file of a project
    "lockfile": 64 * MiB,  # uv.lock / pixi.lock of a large workspace run to megabytes
    "overlay record": 16 * MiB,
}

# A pipe (stdin, ``<(cmd)``, a FIFO) is read until its writer closes it, or refused after this many seconds
# without its end: a writer that never writes must not hold gpuvet forever. GPUVET_PIPE_TIMEOUT overrides it.
PIPE_TIMEOUT_S = 120.0

# Parsed documents: nesting deeper than this, or more values than this (aliases of YAML counted each time they are
# used: a "billion laughs" file), is no real configuration or capture.
MAX_DEPTH = 64
MAX_VALUES = 2_000_000

# A Python source is parsed only below this size and nesting of brackets (ast.parse recurses in C and Python).
MAX_PYTHON_BYTES = 1 * MiB
MAX_PYTHON_NESTING = 100

# Trees gpuvet walks (a project): at most this deep and this many names looked at.
TREE_MAX_DEPTH = 6
TREE_MAX_ENTRIES = 20_000


# What to do, as the caller says it: a catalog Message (said in the report's language) or a sentence as is.
Hint = Union[str, Message]


class ReadRefused(InputError):
    """An InputError that also says why, as one word (``reason``), so a caller can word it in its own catalog:
    missing, folder, special, outside, too_large, binary, timeout, unreadable, invalid."""

    def __init__(self, reason: str, message: str, hint: str = "", key: Optional[str] = None,
                 params: Optional[Dict[str, Any]] = None, hint_said: Optional[Message] = None) -> None:
        super().__init__(message, hint=hint, key=key, params=params)
        self.reason = reason
        self.hint_said = hint_said

    @classmethod
    def saying(cls, reason: str, key: str, hint: Hint = "", /, **params: Any) -> "ReadRefused":
        """The refusal whose sentence is the catalog entry ``files.<key>`` filled with ``params``; ``hint`` is the
        caller's (a catalog :class:`~gpuvet.models.Message` is said in the report's language, a string as is)."""
        said = hint if isinstance(hint, Message) else None
        error = cls(reason, "", hint="" if said else str(hint), key="files." + key, params=params, hint_said=said)
        error.message, error.hint = error.in_language("en")
        error.args = (error.message,)
        return error

    def in_language(self, lang: str) -> Tuple[str, str]:
        message, hint = super().in_language(lang)
        if self.hint_said is not None and not has_message(str(self.key) + ".hint"):
            hint = render(self.hint_said, lang)
        return message, hint


def _kind(kind: str) -> Any:
    """The kind of input as the catalog names it in each language (``files.kind.<kind>``), else as written."""
    key = "files.kind." + kind.replace(" ", "_").replace("-", "_")
    return Message(key) if has_message(key) else kind


def pipe_timeout() -> float:
    try:
        return max(0.1, float(os.environ.get("GPUVET_PIPE_TIMEOUT", "")))
    except ValueError:
        return PIPE_TIMEOUT_S


def _label(path: str) -> str:
    return "stdin" if path == "-" else path


def inside(path: str, root: str) -> bool:
    """Whether the real path of ``path`` (every link followed) is ``root``'s real path or below it."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read_bytes(path: str, kind: str = "file", limit: Optional[int] = None, hint: Hint = "", root: Optional[str] = None,
               pipes: bool = True, stdin: Any = None, binary_ok: bool = True) -> bytes:
    """The bytes of ``path`` (``-``: stdin), at most ``limit`` (default: ``LIMITS[kind]``), or one InputError.

    ``root``: a folder the user gave; the file's real path must stay inside it (a link to a private file outside a
    project is never read). ``pipes``: whether a pipe is acceptable (the user named it); a file found in a folder is
    read only when it is a regular file. ``binary_ok=False`` refuses bytes with NUL in the first read piece before
    reading on (/dev/zero on stdin is refused after 64 KiB, not after the whole limit; UTF-16 text, whose every
    other byte is NUL, is recognised by its BOM)."""
    limit = LIMITS.get(kind, 64 * MiB) if limit is None else limit
    name = _label(path)
    if root is not None and path != "-" and not inside(path, root):
        raise ReadRefused.saying("outside", "outside", hint, path=path, root=root)
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        if stream is None:  # started with stdin closed
            raise ReadRefused.saying("missing", "stdin_closed", hint)
        buffer = getattr(stream, "buffer", stream)
        try:
            fd = buffer.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd is None:  # an in-memory stream (tests, gpuvet mcp): read it bounded
            data = buffer.read(limit + 1)
            data = data.encode("utf-8") if isinstance(data, str) else data
            return _checked(data, name, kind, limit, hint, binary_ok)
        return _read_fd(fd, name, kind, limit, hint, binary_ok, pipe=True, close=False)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == 2:
            raise ReadRefused.saying("missing", "missing", hint, path=path) from None
        if exc.errno == 21:
            raise ReadRefused.saying("folder", "folder", hint, path=path, kind=_kind(kind)) from None
        raise ReadRefused.saying("unreadable", "unreadable", hint, kind=_kind(kind), path=path,
                                  why=exc.strerror or str(exc)) from None
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        raise ReadRefused.saying("folder", "folder", hint, path=path, kind=_kind(kind))
    is_pipe = stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode)
    if not stat.S_ISREG(info.st_mode) and not (pipes and is_pipe):
        os.close(fd)
        raise ReadRefused.saying("special", "special_pipe" if is_pipe else "special_device", hint, path=path)
    if stat.S_ISREG(info.st_mode) and info.st_size > limit:  # refused from its size: not one byte read
        os.close(fd)
        raise _too_large(name, kind, limit, hint)
    return _read_fd(fd, name, kind, limit, hint, binary_ok, pipe=is_pipe, close=True)


def _too_large(name: str, kind: str, limit: int, hint: Hint) -> ReadRefused:
    size = f"{limit // MiB} MiB" if limit >= MiB else f"{limit // 1024} KiB"
    return ReadRefused.saying("too_large", "too_large", hint or Message("files.too_large.default_hint"),
                              kind=_kind(kind), name=name, size=size)


def _checked(data: bytes, name: str, kind: str, limit: int, hint: Hint, binary_ok: bool) -> bytes:
    if not binary_ok and looks_binary(data[:65536]):
        raise ReadRefused.saying("binary", "binary", hint, name=name, kind=_kind(kind))
    if len(data) > limit:
        raise _too_large(name, kind, limit, hint)
    return data


def looks_binary(head: bytes) -> bool:
    """NUL bytes in text that is not UTF-16/32 (whose BOM or alternating NULs say what it is)."""
    return b"\0" in head and _utf16_order(head) is None and not head.startswith((b"\xff\xfe", b"\xfe\xff"))


def _read_fd(fd: int, name: str, kind: str, limit: int, hint: Hint, binary_ok: bool, pipe: bool, close: bool) -> bytes:
    """Read ``fd`` to its end, at most ``limit + 1`` bytes; a pipe with select() and a deadline."""
    import select

    deadline = time.monotonic() + pipe_timeout()
    data = bytearray()  # grown in place: joining pieces would hold the input twice
    total = 0
    blocking = None
    try:
        if pipe:
            try:
                blocking = os.get_blocking(fd)
                os.set_blocking(fd, False)
            except OSError:
                blocking = None
        while total <= limit:
            try:  # read first: a FIFO no writer has opened reads as its end, where select() would wait
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            except BlockingIOError:  # a pipe with nothing in it now: wait for it, up to the deadline
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ReadRefused.saying("timeout", "pipe_timeout",
                                             hint or Message("files.pipe_timeout.default_hint"), name=name,
                                             seconds=f"{pipe_timeout():g}") from None
                select.select([fd], [], [], min(left, 1.0))
                continue
            except OSError as exc:
                raise ReadRefused.saying("unreadable", "unreadable", hint, kind=_kind(kind), path=name,
                                         why=exc.strerror or str(exc)) from None
            if not chunk:
                break
            if not data and not binary_ok and looks_binary(chunk[:65536]):
                raise ReadRefused.saying("binary", "binary", hint, name=name, kind=_kind(kind))
            data += chunk
            total += len(chunk)
    finally:
        if blocking is not None:
            try:
                os.set_blocking(fd, blocking)
            except OSError:
                pass
        if close:
            os.close(fd)
    if total > limit:
        raise _too_large(name, kind, limit, hint)
    return _checked(bytes(data), name, kind, limit, hint, binary_ok)


# -- decoding ---------------------------------------------------------------------------------------------------------

_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
# What a Windows or older Linux console writes when it is not UTF-8: Simplified Chinese (GBK, whose superset GB18030
# is the one codec), Traditional Chinese (Big5) and Japanese (Shift-JIS). Which of them the bytes are is chosen by
# how much of the decoded text is real CJK text (a GBK log read as Shift-JIS is half-width katakana noise).
LEGACY_ENCODINGS = ("gb18030", "big5", "shift_jis")


def _utf16_order(head: bytes) -> Optional[str]:
    """UTF-16 without a BOM: mostly-ASCII text has a NUL in every other byte (odd bytes: little-endian)."""
    sample = head[:4096]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > len(odd) * 0.6 and even.count(0) < len(even) * 0.1:
        return "utf-16-le"
    if even.count(0) > len(even) * 0.6 and odd.count(0) < len(odd) * 0.1:
        return "utf-16-be"
    return None


def _cjk_score(text: str) -> float:
    """How much of ``text``'s non-ASCII is real CJK text: ideographs, kana, CJK punctuation and full-width forms
    count, anything else (half-width katakana, symbols, control characters) counts against."""
    good = bad = kana = 0
    for ch in text:
        code = ord(ch)
        if code < 128:
            if code < 32 and ch not in "\n\r\t\x1b":
                bad += 1
            continue
        if 0x3040 <= code <= 0x30FF:
            kana += 1
            good += 1
        elif 0x4E00 <= code <= 0x9FFF or 0x3000 <= code <= 0x303F or 0xFF01 <= code <= 0xFF5E:
            good += 1
        else:
            bad += 1
    # Shift-JIS read as GB18030 is all ideographs too (rare ones): kana, which Chinese text never holds and Chinese
    # read as Shift-JIS never yields (its lead bytes become half-width katakana, counted bad), decide between them.
    return (good - 2 * bad + kana / 2) / max(1, good + bad)


def decode_text(data: bytes, name: str, kind: str = "file", hint: Hint = "") -> str:
    """Text from bytes: a BOM's encoding (UTF-8, UTF-16, UTF-32), UTF-16 without BOM, UTF-8, else the legacy CJK
    encoding that reads the bytes as the most plausible text; bytes none of them read, or with NUL bytes, are
    binary: one InputError. Carriage returns are kept (a parser may lint them)."""
    binary = ReadRefused.saying("binary", "binary", hint or Message("files.binary.default_hint"), name=name,
                                kind=_kind(kind))
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                raise binary from None
    order = _utf16_order(data[:4096])
    if order is not None:
        try:
            return data.decode(order)
        except UnicodeDecodeError:
            raise binary from None
    if b"\0" in data[:65536]:
        raise binary
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Only the non-ASCII part tells the encodings apart, and scoring a sample is enough (a log is one encoding).
    sample = data[:262144]
    best: Optional[Tuple[float, str]] = None
    for codec in LEGACY_ENCODINGS:
        try:
            score = _cjk_score(sample.decode(codec))
        except UnicodeDecodeError:
            try:  # the sample may cut a character in two: decode all of it then
                score = _cjk_score(data.decode(codec)[:262144])
            except UnicodeDecodeError:
                continue
        if best is None or score > best[0]:
            best = (score, codec)
    if best is None or best[0] < 0:
        raise binary
    try:
        return data.decode(best[1])
    except UnicodeDecodeError:
        raise binary from None


def read_text(path: str, kind: str = "file", limit: Optional[int] = None, hint: Hint = "", root: Optional[str] = None,
              pipes: bool = True, stdin: Any = None) -> str:
    """:func:`read_bytes` then :func:`decode_text`."""
    return decode_text(read_bytes(path, kind, limit, hint, root, pipes, stdin, binary_ok=False), _label(path), kind,
                       hint)


# -- bounded parsers --------------------------------------------------------------------------------------------------

def check_document(document: Any, name: str, kind: str = "file", max_depth: int = MAX_DEPTH,
                   max_values: int = MAX_VALUES) -> Any:
    """``document`` when its nesting is at most ``max_depth`` and it holds at most ``max_values`` values (a value
    reached twice, a YAML alias, counts twice: that is what every later walk of it costs); else one InputError.
    Iterative: a document too deep for recursion is measured all the same."""
    stack: List[Tuple[Any, int]] = [(document, 0)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > max_values:
            raise ReadRefused.saying("invalid", "too_many_values", name=name, count=f"{max_values:,}", kind=_kind(kind))
        if isinstance(value, (dict, list, tuple)):
            if depth >= max_depth:
                raise ReadRefused.saying("invalid", "too_deep", name=name, depth=max_depth, kind=_kind(kind))
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return document


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] if text else type(exc).__name__)


def parse_json(text: str, name: str, kind: str = "file") -> Any:
    import json

    try:
        document = json.loads(text)
    except RecursionError:
        raise ReadRefused.saying("invalid", "too_deep", name=name, depth=MAX_DEPTH, kind=_kind(kind)) from None
    except ValueError as exc:
        raise ReadRefused.saying("invalid", "not_json", name=name, kind=_kind(kind), detail=_first_line(exc)) from None
    return check_document(document, name, kind)


def parse_toml(text: str, name: str, kind: str = "file") -> Any:
    from gpuvet.tomlfile import loads_toml

    try:
        document = loads_toml(text)
    except RecursionError:
        raise ReadRefused.saying("invalid", "too_deep", name=name, depth=MAX_DEPTH, kind=_kind(kind)) from None
    except ValueError as exc:
        raise ReadRefused.saying("invalid", "not_toml", name=name,
                                 detail=str(exc).splitlines()[0] if str(exc) else "unreadable") from None
    return check_document(document, name, kind)


def parse_yaml(text: str, name: str, kind: str = "file") -> Any:
    """YAML with the safe loader (plain data, no object construction; libyaml's when PyYAML is built with it),
    bounded like the others: an alias used a billion times is refused from the count, not walked."""
    import yaml  # the optional extra gpuvet[project]

    try:
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except RecursionError:
        raise ReadRefused.saying("invalid", "too_deep", name=name, depth=MAX_DEPTH, kind=_kind(kind)) from None
    except yaml.YAMLError as exc:
        raise ReadRefused.saying("invalid", "not_yaml", name=name, detail=_first_line(exc)) from None
    return check_document(document, name, kind)


def _nesting(source: str) -> int:
    """The deepest nesting of brackets in ``source``, strings and comments included (an over-count is safe: it only
    makes a source be skipped)."""
    depth = deepest = 0
    for ch in source:
        if ch in "([{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif ch in ")]}" and depth:
            depth -= 1
    return deepest


def parse_python(source: str, name: str) -> Optional[Any]:
    """Python's ``ast`` of ``source``, or None when it is too big, too deeply nested (a 100,000-term expression, a
    thousand brackets: the parser and every later walk recurse) or not valid Python: a lint skips such a file."""
    import ast

    if len(source) > MAX_PYTHON_BYTES or _nesting(source) > MAX_PYTHON_NESTING:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    # a long chain of binary operators nests without brackets: measure the tree itself, iteratively
    stack: List[Tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > 4 * MAX_PYTHON_NESTING:
            return None
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


# -- trees ------------------------------------------------------------------------------------------------------------

def tree_files(root: str, max_depth: int = TREE_MAX_DEPTH, max_entries: int = TREE_MAX_ENTRIES,
               skip_dir: Any = None) -> Iterator[str]:
    """The regular files under ``root`` (paths), sorted within each folder, a folder's files before its sub-folders'.
    The probe's bounded walk (gpuvet.probe.files.walk_files: never follows a link to a folder, never yields a FIFO or
    a device; at most ``max_depth`` levels and ``max_entries`` names), less any link whose target is outside ``root``
    (a user's project must not lead gpuvet out of it). ``skip_dir(name)`` may leave a folder out."""
    from gpuvet.probe.files import walk_files

    top = os.path.realpath(root)
    keep = (lambda _parent, name: not skip_dir(name)) if skip_dir else None
    for path in walk_files(root, max_depth=max_depth - 1, max_entries=max_entries, keep_dir=keep):
        if os.path.islink(path) and not inside(path, top):
            continue
        yield path


# -- fields of parsed documents ---------------------------------------------------------------------------------------

# What a field must be, and what it was, as catalog words (files.type.<word>): "must be a table, not a list".
_TYPE_WORDS = {dict: "table", list: "list", str: "string", bool: "true_or_false", int: "whole_number"}


def _type_word(kind: type) -> Any:
    word = _TYPE_WORDS.get(kind)
    return Message("files.type." + word) if word else kind.__name__


def _what(value: Any) -> Any:
    if isinstance(value, bool):
        return Message("files.type.true_false")
    for kind, word in ((dict, "table"), (list, "list"), (str, "string"), (int, "number"), (float, "number")):
        if isinstance(value, kind):
            return Message("files.type." + word)
    return type(value).__name__


def field(document: Any, dotted: str, kind: type, name: str, default: Any = None) -> Any:
    """``document[a][b]...`` for ``dotted`` ``"a.b"``, or ``default`` when a part is absent; one InputError naming
    the field when a part is of another type than a table, or the value not of ``kind`` (exit 2, never a
    traceback deep in a reader)."""
    value = document
    walked: List[str] = []
    for part in dotted.split("."):
        if not isinstance(value, dict):
            raise ReadRefused.saying("invalid", "field_not_table", name=name, field=".".join(walked), what=_what(value))
        walked.append(part)
        if part not in value:
            return default
        value = value[part]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReadRefused.saying("invalid", "field_type", name=name, field=dotted, wanted=_type_word(kind),
                                 what=_what(value))
    return value


def list_of(document: Any, dotted: str, kind: type, name: str) -> List[Any]:
    """A list field whose every item is of ``kind`` (an absent list: empty); one InputError naming the first item
    that is not."""
    items = field(document, dotted, list, name, [])
    for index, item in enumerate(items):
        if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
            raise ReadRefused.saying("invalid", "item_type", name=name, field=dotted, index=index,
                                     wanted=_type_word(kind), what=_what(item))
    return list(items)

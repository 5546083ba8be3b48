"""Hypothesis strategies that damage real tool outputs the way pastes, terminals and broken machines do.

Each mutation is a small pure function bytes -> bytes; a test draws a real fixture and a short list of mutations.
"""

from __future__ import annotations

from typing import Callable, List

from hypothesis import strategies as st

Mutation = Callable[[bytes], bytes]

# A long line, a NUL run, terminal escapes and raw binary: what `script`, a wedged GPU or a crashed tool leave behind.
HUGE_LINE = b"x" * 200_000
# A long run of blanks inside a line (terminal padding, a table pasted from a wide console): the input that showed
# three regexes to be quadratic (tests/fuzz_corpus/ingest-gpu-name-long-padding.json).
BLANK_RUN = b" " * 40_000
BINARY_JUNK = bytes(range(256))
ESCAPES = b"\x1b[31m\x1b[1m\x1b[?25l\x1b]0;title\x07\x1b[0m"


def _lines(data: bytes) -> List[bytes]:
    return data.split(b"\n")


@st.composite
def byte_flips(draw) -> Mutation:
    flips = draw(st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=8))

    def apply(data: bytes) -> bytes:
        if not data:
            return data
        buf = bytearray(data)
        for where, xor in flips:
            buf[int(where * len(buf))] ^= xor
        return bytes(buf)

    apply.__name__ = "byte_flips(%r)" % (flips,)
    return apply


@st.composite
def truncation(draw) -> Mutation:
    keep = draw(st.floats(0, 1))
    head = draw(st.booleans())

    def apply(data: bytes) -> bytes:
        cut = int(keep * len(data))
        return data[:cut] if head else data[cut:]

    apply.__name__ = "truncation(keep=%r, head=%r)" % (keep, head)
    return apply


@st.composite
def line_shuffle(draw) -> Mutation:
    rnd = draw(st.randoms(use_true_random=False))

    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        rnd.shuffle(lines)
        return b"\n".join(lines)

    apply.__name__ = "line_shuffle"
    return apply


@st.composite
def line_edits(draw) -> Mutation:
    """Delete, duplicate (many times) or swap in a line from elsewhere: pastes that lost or repeated lines."""
    ops = draw(st.lists(st.tuples(st.sampled_from(["delete", "repeat", "copy"]), st.floats(0, 1, exclude_max=True),
                                  st.floats(0, 1, exclude_max=True), st.integers(1, 2000)), min_size=1, max_size=5))

    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        for op, a, b, count in ops:
            if not lines:
                break
            i, j = int(a * len(lines)), int(b * len(lines))
            if op == "delete":
                del lines[i]
            elif op == "repeat":
                lines[i:i + 1] = [lines[i]] * count
            else:
                lines[i] = lines[j]
        return b"\n".join(lines)

    apply.__name__ = "line_edits(%r)" % (ops,)
    return apply


@st.composite
def injection(draw) -> Mutation:
    junk = draw(st.sampled_from([b"\x00", b"\x00" * 4096, HUGE_LINE, BLANK_RUN, b"\t" * 30_000, BINARY_JUNK, ESCAPES, b"\xff\xfe", b"\xef\xbb\xbf",
                                 b"\r", b"\t" * 50, b"|" * 500, b"<" * 100, b"{" * 3000, b"[" * 3000,
                                 "\u202e\u00e9\u4e2d\U0001f600".encode("utf-8"), b"\xe9\xff\xfe",
                                 b"N/A", b"999999999999999999999999999999", b"-1", b"nan", b"1e999"]))
    where = draw(st.floats(0, 1))

    def apply(data: bytes) -> bytes:
        cut = int(where * len(data))
        return data[:cut] + junk + data[cut:]

    apply.__name__ = "injection(%r..., at=%r)" % (junk[:16], where)
    return apply


def crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def lone_cr(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r")


def utf16(data: bytes) -> bytes:
    return data.decode("utf-8", "replace").encode("utf-16")  # with BOM, as PowerShell's `>` writes


def utf16_no_bom(data: bytes) -> bytes:
    return data.decode("utf-8", "replace").encode("utf-16-le")


MUTATIONS = st.one_of(byte_flips(), truncation(), line_shuffle(), line_edits(), injection(),
                      st.sampled_from([crlf, lone_cr, utf16, utf16_no_bom]))


# Repeating lines can multiply a paste into hundreds of MB; the per-example deadline is about a parser's complexity
# (a quadratic regex, a loop that never ends), so inputs are kept to a size a linear parser reads in well under it.
# Size itself is covered by test_big_input.py (the 32 MiB cap of read_input, peak RSS).
MAX_FUZZ_BYTES = 2 * 1024 * 1024


def apply_all(data: bytes, mutations: List[Mutation]) -> bytes:
    for mutation in mutations:
        data = mutation(data)[:MAX_FUZZ_BYTES]
    return data


def as_text(data: bytes) -> str:
    """What a caller holding a str would pass: UTF-16 when it has a BOM, else UTF-8 with replacement."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8", "replace")

"""Each installed distribution's RECORD, read once per probe: the shared libraries it lists and its top-level names.

Two collectors need the same rows: the binary scan (which ``.so`` files to open, and who installed each) and the
damage check (is each one there, at the size pip recorded). torch's RECORD alone is ~1.5 MB and ~15,000 rows, so it
is read and searched once, here, and both take what they need from a :class:`Records` the probe passes them.
Standard library only, Python 3.6+.
"""

import os
import re

from gpuvet.probe.files import ReadError, read_bytes, try_read
from gpuvet.probe.names import canonical_name

RECORD_LIMIT = 64 << 20  # torch's RECORD is ~1.5 MB; a bigger one is read no further
# The first path component of every line of a RECORD (up to its first "/" or ","; also an empty last line), found
# after each newline of b"\n" + RECORD: the literal "\n" lets the regex engine jump from line to line.
_RECORD_TOP = re.compile(b"\n([^/,\n]*)")


class Record(object):
    """What one ``*.dist-info/RECORD`` says: the distribution (PEP 503 name), the top-level names it installed
    under (``torch``, ``functorch``, ``six.py``) and the CSV rows of the lines that name a ``.so`` or ``.so.N`` (each
    a list of fields: path, hash, size): every shared library it installed."""

    __slots__ = ("distribution", "top_level", "library_rows")

    def __init__(self, distribution, top_level, library_rows):
        self.distribution = distribution
        self.top_level = top_level
        self.library_rows = library_rows


class Records(object):
    """The RECORDs of one probe, each read on first use and kept for the probe's other collectors."""

    def __init__(self):
        self._read = {}  # type: dict

    def of(self, dist_info):
        """The :class:`Record` of the ``*.dist-info`` folder ``dist_info``, or None when it has no readable RECORD
        (conda may omit it; a FIFO or a device named RECORD is refused, and the read is bounded)."""
        if dist_info not in self._read:
            self._read[dist_info] = read_record(dist_info)
        return self._read[dist_info]


def read_record(dist_info):
    try:
        data = read_bytes(os.path.join(dist_info, "RECORD"), limit=RECORD_LIMIT)
    except ReadError:
        return None
    name = os.path.basename(dist_info.rstrip("/" + os.sep))
    distribution = canonical_name(name[: -len(".dist-info")].split("-", 1)[0])
    # The top-level names: setuptools' top_level.txt where the wheel has one (torch's RECORD has ~15,000 rows, and
    # taking each row's first component, even with one C-speed regex search, cost ~4 ms); a name it leaves out is
    # only walked (binaries.py), its RECORD-listed libraries still scanned once and named by this distribution.
    # Otherwise every row's first component. Only the few lines that name a shared library are split into fields.
    top_level = _declared_top_level(dist_info)
    if top_level is None:
        top_level = set(top.lstrip(b'"').decode("utf-8", "replace") for top in set(_RECORD_TOP.findall(b"\n" + data)))
    rows = []
    for line in _library_lines(data):
        row = _fields(line)
        if row:
            rows.append(row)
    return Record(distribution, top_level, rows)


def _declared_top_level(dist_info):
    """The names in the distribution's ``top_level.txt`` (a set), or None when it has none (or it is empty)."""
    text = try_read(os.path.join(dist_info, "top_level.txt"), limit=64 * 1024)
    names = set(line.strip() for line in text.splitlines() if line.strip()) if text else set()
    return names or None


# A path ending in ".so" or ".so.N" is followed by the row's comma (a quoted path's quote, a malformed row's end).
# One regex search finds them about twice as fast as bytes.find(b".so"), which stops at every "." of a RECORD.
_LIBRARY_MARK = re.compile(b'\\.so(?:[,."\\r\\n]|\\Z)')


def _library_lines(data):
    """Each line of ``data`` that names a shared library (a ".so" followed by ",", ".", a quote or the line's end),
    once."""
    end = -1
    for match in _LIBRARY_MARK.finditer(data):
        found = match.start()
        if found <= end:
            continue  # another mark on the line just given
        start = data.rfind(b"\n", 0, found) + 1
        end = data.find(b"\n", found)
        end = len(data) if end < 0 else end
        yield data[start:end]


def _fields(line):
    """The CSV fields of one RECORD line (a path with a comma or quote is quoted), or None when it has none."""
    text = line.decode("utf-8", "replace").rstrip("\r")
    if not text.startswith('"'):
        return text.split(",") if text else None
    import csv  # rare: only for quoted paths

    try:
        row = next(csv.reader([text]))
    except (csv.Error, StopIteration):
        return None
    return row or None

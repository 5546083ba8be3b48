"""What a half-finished or interrupted install leaves behind in site-packages (standard library only, Python 3.6+).

* ``missing_files`` / ``size_mismatch``: a distribution whose RECORD lists shared libraries that are gone or whose
  size differs from the one pip recorded (a download cut short, a disk that filled up mid-install). Only the CUDA-
  heavy distributions are checked, and only their ``.so`` files, by size: a stat each, where hashing would read
  gigabytes (RECORD's sha256 is left to ``pip install --force-reinstall``).
* ``no_metadata``: a ``.dist-info`` folder without its METADATA (pip stopped between writing the two).
* ``duplicate``: the same distribution twice on ``sys.path`` (two versions in one site dir, or in two), so which one
  imports depends on the order of the path.

Returned as the ``damage`` fact: a list of ``{"package", "version", "location", "problem", "files", "count"}``.
"""

import csv
import io
import os
import re

from gpuvet.probe import facts
from gpuvet.probe.files import ReadError, is_dir, list_dir, read_text

# Distributions whose RECORD is checked: they carry the CUDA libraries a broken download leaves unusable.
_CHECKED = re.compile(r"^(torch|vllm|xformers|flash[-_]attn|bitsandbytes|triton|deepspeed|tensorflow|jaxlib|"
                      r"jax[-_]cuda\d+[-_](plugin|pjrt)|paddlepaddle(-gpu)?|mindspore|sgl[-_]kernel|nvidia[-_].+|"
                      r"cupy.*|onnxruntime(-gpu)?|tensorrt.*)$", re.I)
_SO = re.compile(r"\.so(\.[0-9.]+)?$")
_DIST = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+?)\.(dist|egg)-info$")
_RECORD_LIMIT = 16 * 1024 * 1024  # torch's RECORD is ~2 MB
_LISTED = 5  # files named per problem; the count says how many in all


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


# What str.splitlines() ends a line at ("\r\n" ends one line: the "\n" after a "\r" starts an empty line only to
# splitlines, and no line it starts holds the needle).
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _lines_with(text, needle):
    """``[line for line in text.splitlines() if needle in line]``, visiting only the lines the needle is on (found
    with str.find) instead of splitting all of torch's ~15,000 RECORD rows."""
    lines = []  # type: list[str]
    position = 0
    while True:
        found = text.find(needle, position)
        if found < 0:
            return lines
        start = text.rfind("\n", 0, found) + 1
        while True:  # a rarer line break between that newline and the needle
            other = _LINE_BREAK.search(text, start, found)
            if other is None:
                break
            start = other.end()
        end_match = _LINE_BREAK.search(text, found)
        end = end_match.start() if end_match else len(text)
        lines.append(text[start:end])
        position = end


def _record_problems(site, folder, name, version):
    try:
        text = read_text(os.path.join(folder, "RECORD"), limit=_RECORD_LIMIT)
    except ReadError:
        return []
    missing, wrong = [], []
    # only the shared libraries' rows go through csv: torch's RECORD has ~15,000 rows, a few hundred of them .so
    rows = "\n".join(_lines_with(text, ".so"))
    for row in csv.reader(io.StringIO(rows)):
        if len(row) < 3 or not _SO.search(row[0]) or not row[2].strip().isdigit():
            continue
        path = os.path.normpath(os.path.join(site, row[0]))
        try:
            size = os.stat(path).st_size
        except OSError:
            missing.append(row[0])
            continue
        if size != int(row[2]):
            wrong.append("%s (%d bytes, RECORD says %s)" % (row[0], size, row[2].strip()))
    problems = []
    for problem, files in (("missing_files", missing), ("size_mismatch", wrong)):
        if files:
            problems.append({"package": name, "version": version, "location": site, "problem": problem,
                             "files": files[:_LISTED], "count": len(files)})
    return problems


def collect(dirs):
    """The ``damage`` fact for the distributions of ``dirs`` (the site dirs, in sys.path order)."""
    found = []
    seen = {}  # type: dict  # canonical name -> [(version, site)]
    for site in dirs:
        for entry in list_dir(site):
            match = _DIST.match(entry)
            if not match:
                continue
            name, version = _canonical(match.group("name")), match.group("version")
            seen.setdefault(name, []).append((version, site))
            folder = os.path.join(site, entry)
            if not entry.endswith(".dist-info") or not is_dir(folder):
                continue
            if not os.path.exists(os.path.join(folder, "METADATA")):
                found.append({"package": name, "version": version, "location": site, "problem": "no_metadata",
                              "files": [entry], "count": 1})
                continue
            if _CHECKED.match(name):
                found.extend(_record_problems(site, folder, name, version))
    for name, copies in sorted(seen.items()):
        if len(copies) > 1:
            found.append({"package": name, "version": copies[0][0], "location": copies[0][1], "problem": "duplicate",
                          "files": ["%s in %s" % (version, site) for version, site in copies[:_LISTED]],
                          "count": len(copies)})
    return facts.found(found, "site-packages")

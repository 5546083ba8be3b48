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

import os
import re

from gpuvet.probe import facts
from gpuvet.probe.files import is_dir, list_dir
from gpuvet.probe.records import Records

# Distributions whose RECORD is checked: they carry the CUDA libraries a broken download leaves unusable.
_CHECKED = re.compile(r"^(torch|vllm|xformers|flash[-_]attn|bitsandbytes|triton|deepspeed|tensorflow|jaxlib|"
                      r"jax[-_]cuda\d+[-_](plugin|pjrt)|paddlepaddle(-gpu)?|mindspore|sgl[-_]kernel|nvidia[-_].+|"
                      r"cupy.*|onnxruntime(-gpu)?|tensorrt.*)$", re.I)
_SO = re.compile(r"\.so(\.[0-9.]+)?$")
_DIST = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+?)\.(dist|egg)-info$")
_LISTED = 5  # files named per problem; the count says how many in all


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _record_problems(site, record, name, version):
    missing, wrong = [], []
    for row in record.library_rows:  # the rows that mention ".so": every shared library the RECORD lists
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


def collect(dirs, records=None):
    """The ``damage`` fact for the distributions of ``dirs`` (the site dirs, in sys.path order). ``records``
    (records.Records) shares the RECORDs read with the probe's other collectors."""
    records = records if records is not None else Records()
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
            record = records.of(folder) if _CHECKED.match(name) else None
            if record is not None:
                found.extend(_record_problems(site, record, name, version))
    for name, copies in sorted(seen.items()):
        if len(copies) > 1:
            found.append({"package": name, "version": copies[0][0], "location": copies[0][1], "problem": "duplicate",
                          "files": ["%s in %s" % (version, site) for version, site in copies[:_LISTED]],
                          "count": len(copies)})
    return facts.found(found, "site-packages")

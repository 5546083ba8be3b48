"""Pack the standard-library probe into one self-contained script for a remote ``python3 -``.

Nothing is installed or written on the remote host: the script carries the sources of ``gpuvet/probe/``, the
standard-library-only folder, and nothing else (zlib + base64 JSON; an empty ``gpuvet`` package holds it) and imports them from memory through a meta-path
importer, then runs ``gpuvet.probe.collect.main()``. The probe's own stdout is captured and re-emitted between two
marker lines so that a login banner or a chatty shell rc file cannot corrupt the snapshot JSON.

The bootstrap itself must parse on any Python 3 (it reports a too-old interpreter instead of crashing), so it uses
no f-strings and nothing newer than 3.0 before the version test.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

BEGIN = "gpuvet-bundle: begin"
END = "gpuvet-bundle: end"
EXIT_PYTHON_TOO_OLD = 97  # the remote python3 is older than 3.6: use the text fallback
EXIT_PROBE_CRASHED = 98  # the probe raised; its traceback is on stderr
PACKAGE = "probe"  # the subpackage of gpuvet that is the remote probe (stdlib only, 3.6+)
# The ELF/fatbin reader, left out with --no-binaries: the probe imports it only for the binary scan.
BINARY_MODULES = ("gpuvet.probe.binaries", "gpuvet.probe.elf", "gpuvet.probe.fatbin")
ENTRY = "gpuvet.probe.collect"

_BOOTSTRAP = r'''# gpuvet probe bundle: run with `python3 -`. Imports everything from memory; writes nothing to disk.
import sys
if sys.version_info < (3, 6):
    sys.stderr.write("gpuvet: python %%s is older than 3.6\n" %% sys.version.split()[0])
    sys.exit(%(too_old)d)
import base64, importlib.abc, importlib.util, io, json, os, socket, traceback, zlib
_SOURCES = json.loads(zlib.decompress(base64.b64decode(%(payload)r)).decode("utf-8"))


class _BundleImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        entry = _SOURCES.get(fullname)
        if entry is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin="<gpuvet-bundle>/" + entry[0], is_package=entry[1])

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        filename, _is_package, source = _SOURCES[module.__name__]
        module.__file__ = "<gpuvet-bundle>/" + filename
        exec(compile(source, module.__file__, "exec"), module.__dict__)


sys.meta_path.insert(0, _BundleImporter())
sys.argv = ["gpuvet-probe"] + %(argv)r
_real_stdout = sys.stdout
_captured = io.StringIO()
sys.stdout = _captured
_code = 0
try:
    import importlib
    _code = importlib.import_module(%(entry)r).main() or 0
except SystemExit as _exit:
    _code = _exit.code if isinstance(_exit.code, int) else (0 if _exit.code is None else 1)
except BaseException:
    traceback.print_exc()
    _code = %(crashed)d
finally:
    sys.stdout = _real_stdout
_out = getattr(_real_stdout, "buffer", None)
_text = "\n%(begin)s %%s\n%%s\n%(end)s\n" %% (os.environ.get("SLURMD_NODENAME") or socket.gethostname(), _captured.getvalue().strip())
if _out is not None:
    _out.write(_text.encode("utf-8"))
else:
    _real_stdout.write(_text)
_real_stdout.flush()
sys.exit(_code)
'''


def default_package_root() -> Path:
    import gpuvet

    return Path(gpuvet.__file__).resolve().parent


def collect_sources(package_root: Path, packages: Tuple[str, ...] = (PACKAGE,)) -> Dict[str, Tuple[str, bool, str]]:
    """module name -> (relative path, is_package, source) for the probe folder, under an empty ``gpuvet`` package."""
    sources: Dict[str, Tuple[str, bool, str]] = {"gpuvet": ("gpuvet/__init__.py", True, "")}
    for package in packages:
        folder = package_root / package
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            relative = path.relative_to(package_root).with_suffix("")
            parts = ["gpuvet", *relative.parts]
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            sources[".".join(parts)] = (
                "gpuvet/" + path.relative_to(package_root).as_posix(),
                is_package,
                path.read_text(encoding="utf-8"),
            )
    return sources


@lru_cache(maxsize=8)
def build_bundle(package_root: Optional[Path] = None, entry: str = ENTRY, argv: Tuple[str, ...] = ()) -> str:
    """The remote script: bootstrap + compressed sources. Cached: a fleet run builds it once for every host.

    With ``--no-binaries`` in argv the ELF/fatbin reader (``BINARY_MODULES``) stays out of the bundle: the probe imports
    it only for the binary scan, so every host is spared decompressing and compiling it.
    """
    root = Path(package_root) if package_root is not None else default_package_root()
    sources = collect_sources(root)
    if "--no-binaries" in argv:
        for name in BINARY_MODULES:
            sources.pop(name, None)
    if entry not in sources:
        raise FileNotFoundError(f"the probe entry module {entry} is not in {root}")
    blob = zlib.compress(json.dumps(sources, sort_keys=True).encode("utf-8"), 9)
    return _BOOTSTRAP % {
        "payload": base64.b64encode(blob).decode("ascii"),
        "argv": list(argv),
        "entry": entry,
        "begin": BEGIN,
        "end": END,
        "too_old": EXIT_PYTHON_TOO_OLD,
        "crashed": EXIT_PROBE_CRASHED,
    }


@dataclass(frozen=True)
class BundleOutput:
    node: str  # the Slurm node name (SLURMD_NODENAME) or the remote hostname: Slurm output is matched by it
    text: str  # what the probe printed: the snapshot JSON


_SECTION = re.compile(
    r"^" + re.escape(BEGIN) + r" (?P<node>[^\n]*)\n(?P<text>.*?)\n?^" + re.escape(END) + r"$", re.M | re.S
)


def extract_outputs(stdout: str) -> List[BundleOutput]:
    """Every marked section of a bundle's stdout, in order (one per node; noise around them is ignored)."""
    return [BundleOutput(m.group("node").strip(), m.group("text")) for m in _SECTION.finditer(stdout)]


def parse_snapshot_text(text: str) -> dict:
    """The snapshot a probe printed; ValueError saying why when it is not one."""
    from gpuvet.errors import InputError
    from gpuvet.snapshot import validate_snapshot

    document = json.loads(text)
    try:
        # A remote probe of another gpuvet version (or a damaged one) must not crash --check or the diff later.
        return validate_snapshot(document, "the probe's output")
    except InputError as exc:
        raise ValueError(exc.message)

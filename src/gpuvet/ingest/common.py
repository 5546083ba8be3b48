"""Small helpers every parser shares: text clean-up, "N/A" handling, units, the GPU record, the snapshot shell.

Parsers are pure functions ``parse(text, name) -> snapshot dict``; they never read files or the terminal.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

from gpuvet.errors import InputError
from gpuvet.i18n import default_lang
from gpuvet.i18n import text as i18n_text
from gpuvet.probe.facts import found, missing
from gpuvet.probe.smi import (  # noqa: F401  (the value readers every parser shares live with the probe's parser)
    mig_mode,
    na,
    new_gpu,
    on_off,
    to_float,
    to_int,
    to_mib,
    virtualization_mode,
)
from gpuvet.snapshot import new_snapshot

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LONG_BLANKS = re.compile(r"[^\S\n]{128,}")
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s:]+(?::[^/@\s]*)?)@")


def clean_text(text: str) -> str:
    """Normalise what a paste can carry: BOM, CRLF/CR line ends, terminal colour codes, trailing blanks."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    # A blank run longer than any real tool prints (the widest in the captured fixtures is 89) is cut
    # to two spaces: the line regexes of the parsers (`(?P<name>.+?)\s+...`) retry across a run from each of its
    # positions, quadratic in its length; one 40k-blank line in a pasted nvidia-smi table took 18 s (found by
    # tests/robustness fuzzing, kept as tests/fuzz_corpus/ingest-blank-run-process-row.txt). Real input is unchanged.
    text = _LONG_BLANKS.sub("  ", text)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def redact_urls(value: str) -> str:
    """Credentials inside URLs (https://user:token@host/...) never reach a snapshot."""
    return _URL_USERINFO.sub(lambda m: m.group("scheme") + "***@", value)


def major_minor(version: Optional[str]) -> Optional[str]:
    """'12.1.105' -> '12.1'; '9.0.176' -> '9.0'."""
    if not version:
        return None
    match = re.match(r"^(\d+)\.(\d+)", version.strip())
    return "{}.{}".format(match.group(1), match.group(2)) if match else None


def windows_os() -> Dict[str, Any]:
    """host.os for a paste that shows a Windows driver model (WDDM/TCC)."""
    return {"id": "windows", "version_id": None, "pretty": None, "system": "Windows"}


def set_gpu_report(snapshot: Dict[str, Any], gpus: List[Dict[str, Any]], source: str, attached: Optional[int],
                   note: str) -> None:
    """The GPU list of a full nvidia-smi report (-q or -q -x): ``note`` (formatted with the attached and the pasted
    count) says when fewer GPUs were pasted than the report counts; a Windows driver model marks a Windows host."""
    extra: Dict[str, Any] = {}
    if attached is not None and attached != len(gpus):
        extra["note"] = note.format(attached, len(gpus))
        extra["attached_gpus"] = attached
    set_fact(snapshot, "gpus", gpus, source, **extra)
    if any(gpu.get("driver_model") in ("WDDM", "TCC") for gpu in gpus):
        set_fact(snapshot, "host.os", windows_os(), source)


def smi_input_error(error: Any, kind: str, name: str) -> InputError:
    """The input error for a :class:`gpuvet.probe.smi.SmiParseError` on pasted ``kind`` text."""
    if error.reason == "empty":
        return input_error("ingest.empty", name=name)
    if error.reason == "cut_off":
        return input_error("ingest.truncated", "ingest.hint_truncated", kind=kind, name=name)
    if error.reason == "syntax":
        return input_error("ingest.bad_xml", "ingest.hint_kind", kind=kind, name=name, error=error.detail)
    return input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)


def pasted_source(kind: str) -> str:
    return "pasted:" + kind


def shell(kind: str, name: str) -> Dict[str, Any]:
    """The empty partial snapshot one pasted input starts from."""
    return new_snapshot("pasted", ["{}:{}".format(kind, name)])


def set_fact(snapshot: Dict[str, Any], path: str, value: Any, source: str, **extra: Any) -> None:
    """Set ``section.key`` or ``key`` to a found fact."""
    section, _, key = path.rpartition(".")
    target = snapshot.setdefault(section, {}) if section else snapshot
    target[key] = found(value, source, **extra)


def set_missing(snapshot: Dict[str, Any], path: str, reason: str) -> None:
    section, _, key = path.rpartition(".")
    target = snapshot.setdefault(section, {}) if section else snapshot
    target[key] = missing(reason)


def message(message_id: str, **params: Any) -> str:
    """A user-facing sentence from the ingest catalog, in the user's language."""
    return i18n_text(default_lang(), message_id, **params)


def input_error(message_id: str, hint_id: Optional[str] = None, **params: Any) -> InputError:
    """The InputError whose sentence and hint are ingest catalog entries, said in the report's language where the
    command line prints it (GpuvetError.in_language)."""
    return InputError.said_with_hint(message_id, hint_id or "", **params)


def dedupe(items: Iterable[Any]) -> List[Any]:
    seen = set()
    result = []
    for item in items:
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result


def key_value(line: str, separator: str = ":") -> Optional[Tuple[str, str]]:
    """("CUDA used to build PyTorch", "12.4") for "CUDA used to build PyTorch   : 12.4" (any blanks around the
    separator); None when the line has no separator or nothing before it. str.partition: linear, no backtracking."""
    key, sep, value = line.partition(separator)
    key = key.strip()
    if not sep or not key:
        return None
    return key, value.strip()


def unquote_lines(text: str) -> str:
    """A paste quoted as a whole ("> " before every line, as e-mail and markdown quote) without the quoting."""
    lines = text.split("\n")
    written = [line for line in lines if line.strip()]
    if not written or sum(1 for line in written if line.lstrip().startswith(">")) * 2 < len(written):
        return text
    return "\n".join(_QUOTE_PREFIX.sub("", line) for line in lines)


_QUOTE_PREFIX = re.compile(r"^[^\S\n]*(?:>[^\S\n]?)+")


def too_large(text: str, kind: str, name: str, limit: int) -> None:
    if len(text) > limit:
        raise input_error("ingest.kind_too_large", "ingest.hint_one_output", name=name, kind=kind,
                          size=len(text) // 1024, limit=limit // 1024)


# Facts every framework's environment report states in its own words, written the way collect_env.py writes them.

_PYTHON_VERSION = re.compile(r"^(\d+\.\d+(?:\.\d+)?)")
# A free-threaded CPython (PEP 703) says so in sys.version: "3.13.1 experimental free-threading build (main, ...)",
# "3.14.0 free-threading build (main, ...)"; its interpreter and site-packages are named python3.13t.
_FREE_THREADED = re.compile(r"free-threading build|\bpython3\.\d+t\b")


def python_record(version: str, text: Optional[str] = None) -> Dict[str, Any]:
    """The python fact's value for a pasted version; ``free_threaded`` only where the text shows a free-threaded
    build (absent: not said)."""
    record: Dict[str, Any] = {"version": version, "implementation": "CPython", "executable": None, "prefix": None,
                              "venv": None}
    if text and _FREE_THREADED.search(text):
        record["free_threaded"] = True
    return record


def set_python(snapshot: Dict[str, Any], text: Optional[str], source: str) -> None:
    """"3.10.12 (main, ...) [GCC 11.4.0]" -> python {"version": "3.10.12", ...}; "3.13.1 experimental free-threading
    build (main, ...)" also sets ``free_threaded``."""
    match = _PYTHON_VERSION.match((text or "").strip())
    if match:
        set_fact(snapshot, "python", python_record(match.group(1), text), source)


def set_platform(snapshot: Dict[str, Any], platform: Optional[str], source: str) -> None:
    """Python's platform.platform(): "Linux-5.15.0-130-generic-x86_64-with-glibc2.35", "Windows-10-10.0.19045-SP0"."""
    platform = (platform or "").strip()
    if not platform:
        return
    linux = re.match(r"^Linux-(?P<kernel>.+?)-(?P<machine>x86_64|aarch64|ppc64le)(?:-with-(?P<libc>.*))?$", platform)
    if linux:
        set_fact(snapshot, "host.kernel", linux.group("kernel"), source)
        set_fact(snapshot, "host.machine", linux.group("machine"), source)
        set_fact(snapshot, "host.wsl", "microsoft" in platform.lower(), source)
        glibc = re.match(r"^glibc(\d+\.\d+)$", linux.group("libc") or "")
        if glibc:
            set_fact(snapshot, "host.glibc", glibc.group(1), source)
        if "host" not in snapshot or "os" not in snapshot["host"]:
            set_fact(snapshot, "host.os", {"id": None, "version_id": None, "pretty": None, "system": "Linux"}, source)
    elif platform.startswith("Windows"):
        set_fact(snapshot, "host.os", windows_os(), source)
    elif platform.startswith("macOS") or platform.startswith("Darwin"):
        set_fact(snapshot, "host.os", {"id": "macos", "version_id": None, "pretty": None, "system": "Darwin"}, source)


def torch_version_gpu(value: str) -> Tuple[Optional[str], Optional[bool]]:
    """"2.2.1+cu121 (True)" / "2.5.1+cu124 (GPU)" / "2.1.0" -> ("2.2.1+cu121", True) / (..., True) / ("2.1.0", None)."""
    value = (value or "").strip()
    match = re.match(r"^(?P<version>\d[^\s(]*)\s*(?:\((?P<flag>[^)]*)\))?", value)
    if not match:
        return None, None
    flag = (match.group("flag") or "").strip().lower()
    gpu = True if flag in ("true", "gpu", "yes") else False if flag in ("false", "cpu", "no") else None
    return match.group("version"), gpu


def blocks_starting(lines: List[str], starts: str, last: Optional[str] = None, stop_blank: int = 3) -> List[str]:
    """Every block that begins on a line starting with ``starts`` and runs (see :func:`block_between`) until a line
    starting with ``last`` (included), a code fence or ``stop_blank`` blank lines in a row. One pass."""
    found = []
    i = 0
    while i < len(lines):
        if not lines[i].strip().startswith(starts):
            i += 1
            continue
        ended = [False]

        def keep(stripped: str) -> bool:
            if ended[0]:
                return False
            if last is not None and stripped.startswith(last):
                ended[0] = True
            return True

        end = block_between(lines, i, keep, stop_blank=stop_blank)
        found.append("\n".join(lines[i:end]))
        i = end
    return found


def block_between(lines: List[str], start: int, keep: Any, stop_blank: int = 2) -> int:
    """The index after the block that begins at ``start``: lines while ``keep(stripped)`` holds, at most
    ``stop_blank - 1`` blank lines in a row, never past a code fence. One pass."""
    end = start + 1
    blanks = 0
    while end < len(lines):
        stripped = lines[end].strip()
        if stripped.startswith("```"):
            break
        if not stripped:
            blanks += 1
            if blanks >= stop_blank:
                break
        else:
            if not keep(stripped):
                break
            blanks = 0
        end += 1
    return end


# conda's subdirs as machine names (what conda and pixi print as their platform)
CONDA_PLATFORMS = {"linux-64": "x86_64", "linux-aarch64": "aarch64", "linux-ppc64le": "ppc64le"}


def set_virtual_packages(snapshot: Dict[str, Any], entries: Iterable[str], platform: Optional[str], source: str,
                         tool: str) -> None:
    """The facts conda's virtual packages carry (``__cuda=12.1=0``, ``__glibc=2.35=0``), as conda and pixi both print
    them: ``__cuda`` is the newest CUDA the display driver supports (or ``CONDA_OVERRIDE_CUDA`` when the user set it),
    ``__glibc`` the C library; the platform is conda's subdir
    (https://docs.conda.io/projects/conda/en/stable/user-guide/tasks/manage-virtual.html)."""
    virtual = {}
    for entry in entries:
        package = re.match(r"^(__\w+)=([^=\s]+)(?:=\S*)?$", entry.strip())
        if package:
            virtual[package.group(1)] = package.group(2)
    cuda = virtual.get("__cuda")
    if cuda and re.match(r"^\d+\.\d+$", cuda):
        set_fact(snapshot, "driver.cuda_max", cuda, source, via="%s virtual package __cuda" % tool)
    glibc = virtual.get("__glibc")
    if glibc and re.match(r"^\d+\.\d+$", glibc):
        set_fact(snapshot, "host.glibc", glibc, source)
    if platform in CONDA_PLATFORMS:
        set_fact(snapshot, "host.machine", CONDA_PLATFORMS[platform], source)

"""Read a framework release's build facts from its real wheel, the way tools/import_harvest.py's input was made.

``harvest("torch==2.15.0")`` finds the wheel through pip itself (``python -m pip download --no-deps --only-binary
:all: --platform ... --python-version ...`` in a child process with a timeout), so the index, extra indexes,
proxies, certificates and credentials are exactly pip's (``pip config``, ``PIP_*``, ``--index-url``). From the
wheel it reads the core metadata (Requires-Python, the Requires-Dist pins of nvidia-cudnn-*, nvidia-nccl-*,
nvidia-cuda-runtime-*, cuda-toolkit and torch), the framework's version module (torch/version.py,
paddle/version/__init__.py, tensorflow/python/platform/build_info.py; xformers' build metadata xformers/cpp_lib.json,
which its own _cpp_lib.py reads) and the SASS / PTX archs of every shared
library member, with gpuvet's own fatbin reader (``gpuvet.probe.binaries.scan_file``, the code behind ``gpuvet
archs``); where a CUDA library links cuDNN or NCCL in (torch 1.x), their versions come from the constant its
``cudnnGetVersion`` returns and NCCL's version banner (``bundled_versions``). Members are extracted one at a time into a temporary folder and deleted, so the temporary space needed
is the wheel plus its largest member.

Each record is a ``[[build]]`` of the shape of ``kb/data/harvested/<framework>.toml`` with its provenance: wheel file name,
sha256, the index URL it came from (credentials removed) and the date. ``write_release`` puts one release's
records into the user's overlay (``gpuvet.kb.overlay``), atomically, with its JSON twin (a cache the reader uses only
while it matches the TOML's sha256).

Faults are one-line ``InputError``s (an unreachable or slow index, no such wheel, a corrupt or truncated wheel, a
wheel without METADATA); a member the reader cannot parse is kept in the record under ``unreadable``.
"""

from __future__ import annotations

import datetime
import email.parser
import hashlib
import json
import mmap
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from gpuvet.errors import InputError
from gpuvet.kb import loader
from gpuvet.kb.overlay import BUILDS_DIR
from gpuvet.models import Message
from gpuvet.probe import elf
from gpuvet.probe._version import __version__
from gpuvet.probe.binaries import scan_file
from gpuvet.tomlfile import loads_toml, refresh_twin

PLATFORM_TAGS = {
    "x86_64": ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
               "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64",
               "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64"],
    "aarch64": ["manylinux_2_28_aarch64", "manylinux_2_27_aarch64", "manylinux_2_24_aarch64",
                "manylinux_2_17_aarch64", "manylinux2014_aarch64", "linux_aarch64",
                "manylinux_2_31_aarch64", "manylinux_2_34_aarch64", "manylinux_2_35_aarch64"],
}
PYTHONS = ("3.11", "3.12", "3.10", "3.13", "3.9", "3.8", "3.7")  # 3.7: torch 1.0-1.3 has cp27/cp35-cp37 wheels only
DEFAULT_TIMEOUT = 600.0  # seconds for one release, download included
NETWORK_TIMEOUT = 15  # pip's --timeout: one socket operation
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][0-9A-Za-z.+!_-]*)\s*$")
_SO = re.compile(r"\.so(\.[0-9A-Za-z_.-]*)?$")
_PIN = re.compile(r"^(nvidia-[A-Za-z0-9_.-]+|cuda-toolkit|torch|xformers|flashinfer[-_]python|sgl[-_]kernel|sglang[-_]kernel)\s*(?:\[[^\]]*\])?\s*\(?\s*==\s*([0-9][0-9A-Za-z.+]*)", re.I)
# A vLLM requirement of any form: SGLang's [srt] extra pinned a vLLM range before 0.4.6, which decides its CUDA only
# when every vLLM release inside agrees (gpuvet.kb.loader.pinned_vllm_range_cuda), so the range itself is kept.
_VLLM_RANGE = re.compile(r"^vllm\s*\(?\s*((?:[<>=!~]=?\s*[0-9][0-9A-Za-z.+*]*\s*,?\s*)+)\)?$", re.I)
_VERSION_FILES = ("torch/version.py", "torchvision/version.py", "torchaudio/version.py", "paddle/version/__init__.py", "paddle/version.py",
                  "tensorflow/python/platform/build_info.py", "tensorflow_core/python/platform/build_info.py",
                  "xformers/cpp_lib.json")
_NETWORK_TROUBLE = re.compile(
    r"connection error|NewConnectionError|ConnectTimeoutError|ReadTimeoutError|Read timed out|Connection refused|"
    r"Name or service not known|Temporary failure in name resolution|ProxyError|SSLError|CERTIFICATE_VERIFY|"
    r"Network is unreachable|Max retries exceeded|\b(401|403|407|5\d\d) (Client|Server) Error", re.I)
_NO_MATCH = re.compile(r"No matching distribution found|Could not find a version that satisfies")


def parse_requirement(requirement: str) -> Tuple[str, str]:
    """``torch==2.15.0`` -> ("torch", "2.15.0"); anything but one exact pin is a one-line error."""
    match = _REQUIREMENT.match(requirement or "")
    if not match:
        raise InputError.said("errors.harvest_requirement", requirement=repr(requirement))
    return loader.normalize_name(match.group(1)), match.group(2)


def redact_url(url: str) -> str:
    """Credentials out of a URL as every other report removes them (gpuvet.probe.redact.redact_url): the whole
    user-info part (``https://user:token@host/simple`` -> ``https://***@host/simple``) and secret query values."""
    from gpuvet.probe.redact import redact
    from gpuvet.probe.redact import redact_url as redact_credentials

    # then the whole pass: a token shape in the path (/hf_…/, a presigned /AKIA…/ key) is a secret there too
    return str(redact(str(redact_credentials(url)), free=False))


def framework_of(distribution: str) -> str:
    """The knowledge base's framework name for a distribution (paddlepaddle-gpu -> paddlepaddle); else its own."""
    wanted = loader.normalize_name(distribution)
    for path in loader.framework_paths().values():
        head = loader.raw(path).get("framework", {})
        if wanted in {loader.normalize_name(d) for d in head.get("distributions", ())}:
            return str(head.get("name"))
    return wanted


def pip_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"  # never wait on a credential prompt
    env.pop("PIP_REQUIRE_VIRTUALENV", None)
    return env


def _run_pip(args: Sequence[str], timeout: float, scratch: Optional[str] = None) -> Tuple[int, str]:
    """pip's exit code and output, within ``timeout``. ``scratch``: pip's temporary folder (TMPDIR), one gpuvet
    removes, so what a pip stopped at the timeout leaves (a half-unpacked download) goes with it."""
    command = [sys.executable, "-m", "pip"] + list(args)
    env = pip_env()
    if scratch is not None:
        env["TMPDIR"] = scratch
    try:
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              universal_newlines=True, env=env, timeout=max(1.0, timeout))
    except subprocess.TimeoutExpired:
        raise InputError.said("errors.harvest_pip_timeout", seconds=f"{timeout:.0f}") from None
    except OSError as exc:
        raise InputError.said("errors.harvest_cannot_run_pip", why=exc.strerror or str(exc)) from None
    if proc.returncode != 0 and "No module named pip" in proc.stdout:
        raise InputError.said("errors.harvest_no_pip", python=sys.executable)
    return proc.returncode, proc.stdout


def _pip_error(output: str, requirement: str) -> Any:
    """pip's reason in one line, in gpuvet's words where pip's is known (pip checks the wheel it downloads): a
    catalog Message, or pip's own last error line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    invalid = re.search(r"Wheel '[^']+' located at \S+ is invalid", output)
    if invalid or re.search(r"BadZipFile|zipfile", output):
        return Message("errors.harvest_pip.bad_zip", {"requirement": requirement})
    if re.search(r"BadMetadata|InvalidMetadata|no \.dist-info|METADATA", output):
        why = next((line for line in reversed(lines) if re.search(r"BadMetadata|InvalidMetadata", line)), "")
        why = re.sub(r"<[^>]*>", "the wheel", why.split(": ", 1)[-1])[:160]
        return Message("errors.harvest_pip.bad_metadata", {"requirement": requirement,
                                                           "why": why or Message("errors.harvest_pip.unreadable")})
    if re.search(r"IncompleteRead|IncompleteDownload|incomplete-download|ProtocolError|ChunkedEncodingError|Connection broken", output):
        return Message("errors.harvest_pip.cut_short", {"requirement": requirement})
    if re.search(r"THESE PACKAGES DO NOT MATCH THE HASHES", output):
        return Message("errors.harvest_pip.hash_mismatch", {"requirement": requirement})
    errors = [line for line in lines if line.startswith("ERROR:") and line != "ERROR: Exception:"]
    last = errors[-1] if errors else next((line for line in reversed(lines) if re.match(r"^[\w.]+(Error|Exception)\b", line)),
                                          lines[-1] if lines else "pip failed")
    return redact_url(last)[:300]


def _network_problem(output: str) -> Optional[str]:
    for line in output.splitlines():
        if "Could not fetch URL" in line and re.search(r": 404 |Not Found", line):
            continue  # no such project on that index: "no wheel", not "unreachable"
        if _NETWORK_TROUBLE.search(line) and not line.lstrip().startswith(("File ", "raise ", "^")):
            return redact_url(line.strip())[:240]
    return None


def _indexes(output: str) -> List[str]:
    for line in output.splitlines():
        if line.startswith("Looking in indexes:"):
            return [redact_url(u.strip()) for u in line.split(":", 1)[1].split(",") if u.strip()]
    return []


def download(name: str, version: str, platform: str, dest: str, index_url: Optional[str] = None,
             timeout: float = DEFAULT_TIMEOUT) -> Tuple[str, Dict[str, Any]]:
    """(wheel path, provenance) for NAME==VERSION on PLATFORM, fetched by pip into DEST."""
    if platform not in PLATFORM_TAGS:
        raise InputError.said("errors.harvest_platform", platform=repr(platform))
    deadline = time.monotonic() + timeout
    requirement = f"{name}=={version}"
    tried = []
    for python in PYTHONS:
        left = deadline - time.monotonic()
        if left <= 1:
            break
        args = ["download", "-vv", "--no-deps", "--only-binary", ":all:", "--progress-bar", "off", "--no-input", "--no-cache-dir",
                "--timeout", str(int(min(NETWORK_TIMEOUT, max(1, left)))), "--retries", "0",
                "--python-version", python, "-d", dest]
        for tag in PLATFORM_TAGS[platform]:
            args += ["--platform", tag]
        if index_url:
            args += ["--index-url", index_url]
        args.append(requirement)
        code, output = _run_pip(args, left, scratch=dest)
        wheels = sorted(n for n in os.listdir(dest) if n.endswith(".whl"))
        if code == 0 and wheels:
            return os.path.join(dest, wheels[0]), _provenance(output, python, index_url)
        trouble = _network_problem(output)
        if trouble:
            raise InputError.said("errors.harvest_unreachable", trouble=trouble)
        if not _NO_MATCH.search(output):
            raise InputError.said("errors.harvest_download_failed", why=_pip_error(output, requirement))
        tried.append(python)
    if not tried:
        raise InputError.said("errors.harvest_timeout", seconds=f"{timeout:.0f}")
    raise InputError.said("errors.harvest_no_wheel", platform=platform, requirement=requirement,
                          pythons=", ".join(tried))


def _tag_arguments(wheel: str) -> List[List[str]]:
    """pip's target options that accept exactly the tags in a wheel's file name (``--platform any`` for a pure
    wheel), so that pip cannot prefer another file of the release: one set per Python version to try (an abi3 or
    pure wheel fits several, and pip also holds the target Python to the release's Requires-Python)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        _, _, _, tags = parse_wheel_filename(wheel)
    except InvalidWheelFilename as exc:
        raise InputError.said("errors.harvest_wheel_name", wheel=repr(wheel), why=str(exc)) from None
    abis = sorted({t.abi for t in tags})
    cpython = sorted({t.interpreter for t in tags if re.match(r"^cp3\d+$", t.interpreter)})
    if cpython and not set(abis) & {"abi3", "none"}:  # cp311-cp311: that Python only
        implementation, pythons = "cp", [cpython[0][2] + "." + cpython[0][3:]]
    elif cpython:  # cp38-abi3: any CPython from 3.8 on
        implementation, pythons = "cp", [p for p in PYTHONS + ("3.14",) if int(p.split(".")[1]) >= int(cpython[0][3:])]
    else:  # py3 / py2.py3: any Python 3
        implementation, pythons = "py", list(PYTHONS + ("3.14",))
    rest: List[str] = []
    for abi in abis:
        rest += ["--abi", abi]
    for platform in sorted({t.platform for t in tags}):
        rest += ["--platform", platform]
    return [["--implementation", implementation, "--python-version", python] + rest for python in pythons]


def fetch_wheel(wheel: str, sha256: str, dest: str, index_url: Optional[str] = None,
                timeout: float = DEFAULT_TIMEOUT) -> str:
    """Download the one wheel file named WHEEL through pip's configuration into DEST and check it is the recorded
    artifact: the same file name and the same sha256 (a changed or tampered artifact is an error, never read)."""
    distribution, version = wheel.split("-")[:2]
    # ===: the file's own version string, so 2.13.0 does not take a 2.13.0+cpu from another index or folder
    requirement = f"{loader.normalize_name(distribution)}==={version}"
    deadline = time.monotonic() + timeout
    got: List[str] = []
    for target in _tag_arguments(wheel):
        left = deadline - time.monotonic()
        if left <= 1:
            raise InputError.said("errors.harvest_timeout", seconds=f"{timeout:.0f}")
        # two retries: a maintainer's run reads hundreds of large files, one slow read must not fail it
        args = ["download", "-vv", "--no-deps", "--only-binary", ":all:", "--progress-bar", "off", "--no-input",
                "--no-cache-dir", "--timeout", str(int(min(NETWORK_TIMEOUT, max(1, left)))), "--retries", "2",
                "-d", dest] + target
        if index_url:
            args += ["--index-url", index_url]
        code, output = _run_pip(args + [requirement], left, scratch=dest)
        got = sorted(n for n in os.listdir(dest) if n.endswith(".whl"))
        if code == 0 and got:
            break
        trouble = _network_problem(output)
        if trouble:
            raise InputError.said("errors.harvest_unreachable", trouble=trouble)
        if not _NO_MATCH.search(output):
            raise InputError.said("errors.harvest_recheck_failed", why=_pip_error(output, requirement))
    if not got:
        raise InputError.said("errors.harvest_gone", wheel=wheel, requirement=requirement)
    if got != [wheel]:
        raise InputError.said("errors.harvest_other_file", got=", ".join(got), requirement=requirement, wheel=wheel)
    path = os.path.join(dest, wheel)
    found = sha256_of(path)
    if found != sha256:
        raise InputError.said("errors.harvest_changed", wheel=wheel, found=found[:16], recorded=sha256[:16])
    return path


def _provenance(output: str, python: str, index_url: Optional[str]) -> Dict[str, Any]:
    """Where the wheel came from, out of pip's ``-vv`` log: the one index that served it (credentials removed),
    never the list of every configured index. The index is the one whose project page listed the file pip took
    (``Found link URL (from PAGE)``): the configured index that PAGE lies under, else PAGE's parent; then, for an
    older pip's log, the index on the download's host; then a local folder; then pip's only index."""
    indexes = _indexes(output)
    url = None
    taken = None
    local = None
    links: Dict[str, Tuple[str, str]] = {}  # file name -> (its URL, the project page that listed it)
    for line in output.splitlines():
        match = re.match(r"\s*Found link (\S+) \(from (\S+?)\)", line)
        if match:
            links.setdefault(_file_name(match.group(1)), (redact_url(match.group(1)), redact_url(match.group(2))))
        match = re.match(r"\s*Downloading\s+(\S+)", line)
        if match:
            taken = _file_name(match.group(1))  # pip 23+ names the file, an older pip its URL
            if "://" in match.group(1):
                url = redact_url(match.group(1))
        match = re.match(r"\s*Processing\s+(/\S+|file:\S+)", line)
        if match:
            local = match.group(1)
    where = None
    if taken in links:
        url = url or links[taken][0]
        page = _bare(links[taken][1])
        under = [i for i in indexes if page.startswith(_bare(i).rstrip("/") + "/")]
        where = max(under, key=len) if under else links[taken][1].rstrip("/").rsplit("/", 1)[0]
    if where is None and url:
        netloc = _bare(url).split("://", 1)[-1].split("/")[0]
        on_host = [i for i in indexes if _bare(i).split("://", 1)[-1].split("/")[0] == netloc]
        where = on_host[0] if len(on_host) == 1 else None
    if where is None and local:
        where = f"a local folder: {local}"
    if where is None:
        where = indexes[0] if len(indexes) == 1 else (
            f"one of {', '.join(indexes)} (pip's log does not say which)" if indexes else "PyPI (pip's default index)")
    return {"index_url": where, "download_url": url, "python": python}


def _file_name(url: str) -> str:
    return url.split("#")[0].split("?")[0].rstrip("/").rsplit("/", 1)[-1]


def _bare(url: str) -> str:
    """A URL without its user information (pip logs a page with none, the index it was given with its user)."""
    return re.sub(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@", r"\1", url)


# ---------------------------------------------------------------------------------------------------- the wheel

def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _metadata(zf: zipfile.ZipFile, wheel: str, platform: str) -> Dict[str, Any]:
    names = [n for n in zf.namelist() if re.match(r"^[^/]+\.dist-info/METADATA$", n)]
    if not names:
        raise InputError.said("errors.harvest_no_metadata", wheel=wheel)
    try:
        text = zf.read(names[0]).decode("utf-8", "replace")
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise InputError.said("errors.harvest_metadata_unreadable", wheel=wheel, why=str(exc)) from None
    message = email.parser.HeaderParser().parsestr(text)
    requires: List[str] = []
    pins: Dict[str, str] = {}
    for req in message.get_all("Requires-Dist") or []:
        req = " ".join(str(req).split())
        machine = re.search(r"platform_machine\s*==\s*['\"]([^'\"]+)['\"]", req.partition(";")[2])
        if machine and machine.group(1) not in (platform, "AMD64" if platform == "x86_64" else platform):
            continue  # a pin of another platform's build
        match = _PIN.match(req)
        ranged = None if match else _VLLM_RANGE.match(req.split(";")[0].strip())
        if ranged:
            extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", req.partition(";")[2])
            requires.append("vllm" + ranged.group(1).replace(" ", "") + (f'; extra == "{extra.group(1)}"' if extra else ""))
        if match:
            pinned = req.split(";")[0].strip().replace(" ", "").replace("(", "").replace(")", "")  # "torch (==2.3.1)": old METADATA
            extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", req.partition(";")[2])
            # a pin inside an extra (sglang[srt] pinned torch there up to 0.5.2) keeps its extra: the install needs it
            requires.append(pinned + (f'; extra == "{extra.group(1)}"' if extra else ""))
            pins.setdefault(match.group(1).lower().replace("_", "-"), match.group(2))
    return {"name": message.get("Name"), "version": message.get("Version"),
            "requires_python": message.get("Requires-Python"), "requires": requires, "pins": pins}


def _grab(pattern: str, text: str) -> Optional[str]:
    match = re.search(pattern, text, re.M)
    return match.group(1) if match else None


def build_facts(version_files: Mapping[str, str], pins: Mapping[str, str]) -> Dict[str, Any]:
    """cuda / cudnn / nccl and where each came from: the version module first, the exact pins for cuDNN / NCCL."""
    facts: Dict[str, Any] = {}
    text = version_files.get("torch/version.py")
    if text is not None:
        cuda = _grab(r"^cuda\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", text)
        if cuda:
            facts["cuda"], facts["cuda_from"] = cuda, "torch/version.py"
        facts["no_cuda_fallback"] = True  # torch/version.py says cuda = None for a CPU build
    for name in ("torchvision/version.py", "torchaudio/version.py"):  # built against one torch build, same module shape
        text = version_files.get(name)
        if text and "cuda" not in facts:
            cuda = _grab(r"^cuda\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", text)
            local = _grab(r"^__version__\s*=\s*['\"][^'\"+]+\+cu(\d+)(?:\.\w+)?['\"]", text)
            if cuda:
                facts["cuda"], facts["cuda_from"] = cuda, name
            elif local and len(local) >= 3:
                facts["cuda"], facts["cuda_from"] = f"{local[:-1]}.{local[-1]}", name + " (__version__'s +cuXYZ)"
    paddle = next((f for f in ("paddle/version/__init__.py", "paddle/version.py") if f in version_files), None)
    if paddle:
        for key, field in (("cuda", "cuda_version"), ("cudnn", "cudnn_version"), ("nccl", "nccl_version")):
            value = _grab(r"^%s\s*=\s*['\"]?([^'\"\n]*)['\"]?" % field, version_files[paddle])
            if value and value.strip() not in ("False", "None", ""):
                facts[key], facts[key + "_from"] = value.strip(), paddle
    # TensorFlow 2.1 kept its modules in tensorflow_core/
    where = next((f"{top}/python/platform/build_info.py" for top in ("tensorflow", "tensorflow_core")
                  if f"{top}/python/platform/build_info.py" in version_files), "")
    text = version_files.get(where)
    if text is not None:
        for key in ("cuda", "cudnn"):
            value = _grab(r"['\"]%s_version['\"]\s*[:,]\s*['\"]([^'\"]+)['\"]" % key, text)
            # TensorFlow 2.1-2.2 wrote module variables: cuda_version_number = '10.1'
            value = value or _grab(r"^%s_version_number\s*=\s*['\"]([^'\"]+)['\"]" % key, text)
            if value:
                facts[key], facts[key + "_from"] = value, where
        caps = _grab(r"['\"]cuda_compute_capabilities['\"]\s*[:,]\s*(\[[^\]]*\])", text)
        if caps:
            facts["claimed_archs"] = re.findall(r"['\"]([^'\"]+)['\"]", caps)
    text = version_files.get("xformers/cpp_lib.json")  # xformers' setup.py: {"version": {"cuda": 1107, ...}}
    if text is not None:
        try:
            built = json.loads(text).get("version", {}).get("cuda")
        except (ValueError, AttributeError):
            built = None
        if isinstance(built, int) and not isinstance(built, bool) and built >= 100:  # major * 100 + minor
            facts["cuda"], facts["cuda_from"] = f"{built // 100}.{built % 100}", "xformers/cpp_lib.json"
    for name, pinned in sorted(pins.items()):
        where = f"METADATA Requires-Dist {name}=={pinned}"
        runtime = re.match(r"nvidia-cuda-runtime(-cu\d+)?$", name) or name == "cuda-toolkit"
        if runtime and "cuda" not in facts and not facts.get("no_cuda_fallback"):
            facts["cuda"], facts["cuda_from"] = ".".join(pinned.split(".")[:2]), where
        for key, pattern in (("cudnn", r"nvidia-cudnn(-cu\d+)?$"), ("nccl", r"nvidia-nccl(-cu\d+)?$")):
            if re.match(pattern, name):
                if facts.get(key) and facts[key] != pinned:
                    facts[key + "_stated"] = f"{facts[key]} ({facts.get(key + '_from')})"
                facts[key], facts[key + "_from"] = pinned, where
        if name == "torch":
            facts["requires_torch"] = pinned
    facts.pop("no_cuda_fallback", None)
    return facts


# NCCL's own banner (src/init.cc: VERSION_STRING "NCCL version " MAJOR.MINOR.PATCH SUFFIX "+cuda" CUDA_MAJOR.MINOR),
# kept in any binary NCCL is linked into; cuDNN's cudnnGetVersion() returns the CUDNN_VERSION it was built as.
_NCCL_BANNER = re.compile(rb"NCCL version (\d+\.\d+\.\d+)[0-9A-Za-z.-]*\+cuda(\d+\.\d+)")
_RETURNS_CONSTANT = re.compile(rb"^(?:\xf3\x0f\x1e\xfa)?\xb8(.{4})\xc3", re.S)  # [endbr64] mov eax, imm32; ret
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
SHT_SYMTAB, SHT_DYNSYM = 2, 11


def cudnn_version_of(code: int) -> Optional[str]:
    """CUDNN_VERSION -> "X.Y.Z": major*1000 + minor*100 + patch up to cuDNN 8, major*10000 + minor*100 + patch
    from 9 (kb/data/cudnn.toml [encoding])."""
    if 9_00_00 <= code < 100_00_00:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    if 1000 <= code < 9000:
        return f"{code // 1000}.{code // 100 % 10}.{code % 100}"
    return None


def _symbol_bytes(image: "elf.ElfFile", data: "mmap.mmap", name: bytes, length: int) -> Optional[bytes]:
    """The first LENGTH bytes of the code of the defined symbol NAME (.symtab, else .dynsym); None if absent."""
    for kind in (SHT_SYMTAB, SHT_DYNSYM):
        for table in (s for s in image.sections if s.type == kind and s.has_file_data):
            if not 0 < table.link < len(image.sections):
                continue
            strings = image.sections[table.link]
            at = data.find(b"\0" + name + b"\0", strings.offset, strings.offset + strings.size)
            if at < 0:
                continue
            wanted = at + 1 - strings.offset
            end = table.offset + table.size - table.size % _SYMBOL.size
            for offset in range(table.offset, end, _SYMBOL.size):
                st_name, _info, _other, shndx, value, _size = _SYMBOL.unpack_from(data, offset)
                if st_name != wanted or not 0 < shndx < len(image.sections):
                    continue
                home = image.sections[shndx]
                start = home.offset + value - home.addr
                if home.has_file_data and home.offset <= start <= home.offset + home.size - length:
                    return bytes(data[start:start + length])
    return None


def bundled_versions(path: str) -> Dict[str, str]:
    """The cuDNN and NCCL versions linked into one shared library (wheels that bundle them statically, torch 1.x):
    NCCL from its version banner, cuDNN from the constant its ``cudnnGetVersion`` returns. What cannot be read is
    left out."""
    found: Dict[str, str] = {}
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return found
            image = elf.ElfFile(handle, size)
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                banners = {m.group(1).decode() for m in _NCCL_BANNER.finditer(data)}
                if len(banners) == 1:
                    found["nccl"] = banners.pop()
                code = _symbol_bytes(image, data, b"cudnnGetVersion", 10)
                match = _RETURNS_CONSTANT.match(code or b"")
                version = cudnn_version_of(struct.unpack("<I", match.group(1))[0]) if match else None
                if version:
                    found["cudnn"] = version
    except (OSError, ValueError, struct.error, elf.ElfError, elf.NotElf):
        return {}
    return found


def _free_bytes(folder: str) -> Optional[int]:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


# A wheel's bounds: the largest real wheels (torch, tensorflow) unpack to a few GB in a few thousand members, with
# deflate ratios under 10 for their libraries; deflate itself cannot pass about 1,032. Past these it is a zip bomb.
WHEEL_MAX_MEMBERS = 100_000
WHEEL_MAX_UNPACKED = 32 * 1024 ** 3
WHEEL_MAX_RATIO = 200
_BOMB_FLOOR = 16 * 1024 * 1024  # a member this small may compress as well as it likes


def hostile_wheel(zf: "zipfile.ZipFile") -> Optional[Message]:
    """Why a wheel must not be read, or None: a member whose path leaves the wheel (``../``, absolute, a drive),
    members overlapping in the archive (one compressed body counted many times: the classic zip bomb), a member or
    a total that unpacks past what any wheel holds, or more members than any wheel has. Read from the central
    directory alone: nothing is unpacked to decide."""
    infos = zf.infolist()
    if len(infos) > WHEEL_MAX_MEMBERS:
        return Message("errors.harvest_hostile.members", {"count": len(infos), "most": WHEEL_MAX_MEMBERS})
    total = 0
    for info in infos:
        name = info.filename.replace("\\", "/")
        if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in name.split("/"):
            return Message("errors.harvest_hostile.outside", {"member": repr(name[:200])})
        total += info.file_size
        if info.file_size > _BOMB_FLOOR and info.file_size > WHEEL_MAX_RATIO * max(1, info.compress_size):
            return Message("errors.harvest_hostile.ratio", {"member": repr(name[:200]),
                                                                "ratio": info.file_size // max(1, info.compress_size)})
    if total > WHEEL_MAX_UNPACKED:
        return Message("errors.harvest_hostile.total", {"gib": total // 1024 ** 3})
    spans = sorted((info.header_offset, info.header_offset + 30 + len(info.orig_filename.encode("utf-8", "replace"))
                    + info.compress_size) for info in infos)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        if start < end:
            return Message("errors.harvest_hostile.overlap")
    return None


def _past(deadline: Optional[float], wheel: str) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise InputError.said("errors.harvest_read_timeout", wheel=wheel)


def read_wheel(path: str, distribution: str, version: str, platform: str, work: Optional[str] = None,
               deadline: Optional[float] = None) -> Dict[str, Any]:
    """The ``[[build]]`` record of one downloaded wheel (provenance other than the file's own is added by harvest).
    A hostile wheel (:func:`hostile_wheel`) is refused before a byte is unpacked; ``deadline`` (time.monotonic())
    bounds the reading, checked between members and between pieces of each."""
    wheel = os.path.basename(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise InputError.said("errors.harvest_bad_zip", wheel=wheel, why=str(exc)) from None
    with zf:
        why = hostile_wheel(zf)
        if why is not None:
            raise InputError.said("errors.harvest_hostile", wheel=wheel, why=why)
        meta = _metadata(zf, wheel, platform)
        version_files: Dict[str, str] = {}
        for name in _VERSION_FILES:
            try:
                info = zf.getinfo(name)
            except KeyError:
                continue
            if info.file_size < 200_000:
                try:
                    version_files[name] = zf.read(info).decode("utf-8", "replace")
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError):
                    pass
        members: Dict[str, List[Dict[str, Any]]] = {}  # member -> its code units, grouped
        unreadable: Dict[str, str] = {}
        bundled: Dict[str, Dict[str, List[str]]] = {}  # cudnn / nccl -> version -> the members linking it
        so_members = sorted((i for i in zf.infolist() if _SO.search(i.filename) and not i.is_dir()),
                            key=lambda i: i.filename)
        scratch = tempfile.mkdtemp(prefix="gpuvet-harvest-", dir=work)
        try:
            for info in so_members:
                _past(deadline, wheel)
                free = _free_bytes(scratch)
                if free is not None and free < info.file_size:
                    unreadable[info.filename] = f"not enough temporary space ({info.file_size} bytes needed)"
                    continue
                target = os.path.join(scratch, "member.so")
                try:
                    with zf.open(info) as src, open(target, "wb") as dst:
                        while True:
                            piece = src.read(1 << 22)
                            if not piece:
                                break
                            dst.write(piece)
                            _past(deadline, wheel)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
                    unreadable[info.filename] = f"cannot be extracted: {exc}"
                    continue
                try:
                    result = scan_file(target)
                    if result.entries:
                        for key, value in bundled_versions(target).items():
                            bundled.setdefault(key, {}).setdefault(value, []).append(info.filename)
                finally:
                    try:
                        os.unlink(target)
                    except OSError:
                        pass
                if result.error and not result.unsupported:
                    unreadable[info.filename] = result.error
                if result.entries:
                    members[info.filename] = result.units
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    facts = build_facts(version_files, meta["pins"])
    for key, seen in sorted(bundled.items()):
        if len(seen) == 1 and key not in facts:  # the wheel's own statements win; members that disagree say nothing
            (value, where), = seen.items()
            what = "the version cudnnGetVersion() returns" if key == "cudnn" else "NCCL's version banner"
            facts[key], facts[key + "_from"] = value, f"{what} in {', '.join(where)}"
        elif len(seen) > 1:
            facts[key + "_bundled"] = {value: ", ".join(where) for value, where in sorted(seen.items())}
    record: Dict[str, Any] = {
        "framework": framework_of(distribution), "distribution": distribution, "version": version,
        "platform": platform,
    }
    record.update({k: v for k, v in facts.items() if k not in ("claimed_archs",)})
    if not members:
        # No library of the wheel carries CUDA code: a CPU build, whatever CUDA an optional extra pins (TensorFlow's
        # aarch64 wheels pin nvidia-cuda-runtime-cu12 in [and-cuda] yet carry no kernel). Its own binaries decide.
        for key in ("cuda", "cudnn", "nccl"):
            for name in (key, key + "_from", key + "_stated", key + "_bundled"):
                record.pop(name, None)
    # Each library as read, code unit by code unit: the facts. Which of them decide the framework and whether they
    # reach a GPU is derived at check time (gpuvet.kb.compat), never stored.
    record["library"] = [{"file": name, "units": units} for name, units in sorted(members.items())]
    if facts.get("claimed_archs"):
        record["claimed_archs"] = facts["claimed_archs"]
    if meta.get("requires_python"):
        record["requires_python"] = str(meta["requires_python"])
    if meta["requires"]:
        record["requires"] = meta["requires"]
    if meta.get("version") and versions_differ(str(meta["version"]), version):
        record["wheel_version"] = str(meta["version"])  # a local label (2.13.0+cpu) pip took for ==2.13.0
    record["so_members_examined"] = len(so_members)
    if unreadable:
        record["unreadable"] = dict(sorted(unreadable.items()))
    record["wheel"] = wheel
    record["sha256"] = sha256_of(path)
    return record


def versions_differ(stated: str, wanted: str) -> bool:
    return loader.normalize_name(stated) != loader.normalize_name(wanted)


def harvest(requirement: str, index_url: Optional[str] = None, platform: str = "x86_64",
            timeout: float = DEFAULT_TIMEOUT, work: Optional[str] = None, today: Optional[str] = None) -> Dict[str, Any]:
    """Download and read one release's wheel for PLATFORM: its ``[[build]]`` record, provenance included."""
    name, version = parse_requirement(requirement)
    deadline = time.monotonic() + timeout  # --timeout covers the download and the reading of the wheel
    dest = tempfile.mkdtemp(prefix="gpuvet-wheel-", dir=work)
    try:
        path, provenance = download(name, version, platform, dest, index_url=index_url, timeout=timeout)
        record = read_wheel(path, name, version, platform, work=work, deadline=deadline)
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    record["index_url"] = provenance["index_url"]
    if provenance.get("download_url"):
        record["download_url"] = provenance["download_url"]
    record["read_on"] = today or datetime.date.today().isoformat()
    record["read_with"] = f"gpuvet {__version__} kb harvest (python {provenance['python']} wheel tags)"
    record["source"] = (f"{record['index_url']}: {name} {version}, wheel {record['wheel']} "
                        f"(sha256 {record['sha256'][:16]}...), read with gpuvet kb harvest on {record['read_on']}")
    return record


# ---------------------------------------------------------------------------------------------------- the overlay

_KEY_ORDER = ("framework", "distribution", "version", "platform", "cuda", "cuda_from", "cudnn", "cudnn_from",
              "cudnn_stated", "cudnn_bundled", "nccl", "nccl_from", "nccl_stated", "nccl_bundled", "requires_torch", "requires_python", "requires",
              "claimed_archs", "wheel_version", "so_members_examined", "unreadable", "library", "wheel",
              "sha256", "index_url", "download_url", "read_on", "read_with", "source")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    return json.dumps(str(value))


def to_toml(records: Sequence[Mapping[str, Any]]) -> str:
    lines = ["# Builds read from real wheels by gpuvet kb harvest (the user's overlay: it adds to the shipped",
             "# knowledge base and never overrides it). Rewritten whole by the next harvest of this release.", ""]
    for record in records:
        lines.append("[[build]]")
        keys = [k for k in _KEY_ORDER if k in record] + sorted(k for k in record if k not in _KEY_ORDER)
        for key in keys:
            if record[key] is None or key == "overlay_file":
                continue
            lines.append(f"{key} = {_toml_value(record[key])}")
        lines.append("")
    return "\n".join(lines)


def release_path(folder: Path, distribution: str, version: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", f"{loader.normalize_name(distribution)}-{version}")
    return Path(folder) / BUILDS_DIR / f"{safe}.toml"


def write_release(folder: Path, records: Sequence[Mapping[str, Any]]) -> Tuple[Path, bool]:
    """Put one release's records into the overlay: (file, changed). Builds of other platforms already there stay;
    a build of the same wheel and sha256 is kept as it was (a second harvest changes nothing). Written to a temporary
    file in the same folder, then renamed over: a reader never sees half a file."""
    if not records:
        raise ValueError("no records")
    first = records[0]
    path = release_path(folder, first["distribution"], first["version"])
    existing: List[Dict[str, Any]] = []
    if path.is_file():
        from gpuvet.userfiles import read_bytes

        try:  # as the overlay is read (gpuvet.kb.overlay): a regular file inside it, bounded
            data = read_bytes(str(path), "overlay record", root=str(path.parent), pipes=False)
            existing = [b for b in loads_toml(data.decode("utf-8")).get("build", ()) if isinstance(b, dict)]
        except (InputError, OSError, ValueError, RecursionError):
            existing = []  # a broken file (or a link out of the overlay) is replaced whole
    merged = list(existing)
    for record in records:
        same = [i for i, b in enumerate(merged) if b.get("platform") == record.get("platform")]
        if same and all(merged[i].get("sha256") == record.get("sha256") for i in same):
            continue
        merged = [b for b in merged if b.get("platform") != record.get("platform")] + [dict(record)]
    merged.sort(key=lambda b: (str(b.get("platform")), str(b.get("wheel"))))
    if merged == existing and path.is_file():
        _write_twin(path)  # an overlay written before twins (or a twin lost) gets one
        return path, False
    text = to_toml(merged)
    loads_toml(text)  # never write a file the loader cannot read
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".gpuvet-", suffix=".tmp", dir=str(path.parent))
    except OSError as exc:
        raise InputError.said("errors.harvest_overlay_folder", folder=str(path.parent),
                              why=exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError.said("errors.write_device", path=str(path), reason=exc.strerror or str(exc)) from None
        raise
    _write_twin(path, text.encode("utf-8"))
    return path, True


def _write_twin(path: Path, data: Optional[bytes] = None) -> None:
    """The release file's JSON twin (``harvested/__compiled__/<name>.json``), made as the shipped data's are
    (gpuvet.tomlfile.refresh_twin): the reader uses it only while it carries the TOML's sha256. Written after the TOML,
    so a twin left behind by a failure is stale, never used; a twin that cannot be written costs speed only."""
    try:
        refresh_twin(path, data=data)
    except (OSError, ValueError):
        pass


# ---------------------------------------------------------------------------------------------------- kb update

def index_versions(distribution: str, platform: str = "x86_64", index_url: Optional[str] = None,
                   timeout: float = 60.0) -> List[str]:
    """The releases the index has for DISTRIBUTION with a wheel for PLATFORM (``pip index versions``), newest first."""
    args = ["index", "versions", distribution, "--no-input", "--no-cache-dir", "--timeout", str(int(min(NETWORK_TIMEOUT, max(1, timeout)))),
            "--retries", "0", "--only-binary", ":all:", "--python-version", "3.11"]
    for tag in PLATFORM_TAGS[platform]:
        args += ["--platform", tag]
    if index_url:
        args += ["--index-url", index_url]
    code, output = _run_pip(args, timeout)
    trouble = _network_problem(output)
    if trouble:
        raise InputError.said("errors.harvest_unreachable", trouble=trouble)
    match = re.search(r"^Available versions:\s*(.*)$", output, re.M)
    if code != 0 or not match:
        if _NO_MATCH.search(output):
            return []
        raise InputError.said("errors.harvest_list_failed", distribution=distribution, why=_pip_error(output, distribution))
    return [v.strip() for v in match.group(1).split(",") if v.strip()]

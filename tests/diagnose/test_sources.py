"""The vocabulary harvested from the sources that print the messages (data/sources.toml, issue 16), the issue's named
messages, the tolerances of matching (wrapped lines, Chinese around the text, colour codes, timestamps and logger
prefixes, placeholders), and diagnose reasoning with the machine it is given."""

from __future__ import annotations

import re

import pytest

from gpuvet.diagnose import diagnose
from gpuvet.diagnose.engine import diagnose_text, read_text
from gpuvet.diagnose.signatures import DATA_DIR, load_signatures
from gpuvet.i18n import render
from gpuvet.models import FINDING_CODES, msg
from gpuvet.tomlfile import load_toml
from tests.diagnose.sources_render import PLACEHOLDER
from tests.diagnose.sources_render import render as render_message
from tests.snapshots import snapshot

RECORDS = load_toml(DATA_DIR / "sources.toml")["signature"]


def top(log, snap=None):
    found = diagnose_text(log, snap) if snap is None else diagnose(log, snap)
    return found[0].code if found else None


def test_the_vocabulary_is_the_harvest_each_message_with_its_exact_source_line():
    assert len(RECORDS) == 341
    assert len({r["message"] + r["origin"] for r in RECORDS}) == len(RECORDS)
    for record in RECORDS:
        assert re.match(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/[\w.]+/\S+#L\d+$", record["source"]), record["id"]
        assert "/work/" not in str(record) and "/tmp/" not in record["source"]
        assert record["code"] in FINDING_CODES and record.get("harvested_cause", record["code"]) in FINDING_CODES
        assert record["explain"] == "diagnose.source." + record["code"]
        # a cause changed while reconciling with a hand-written signature says which and why
        assert ("harvested_cause" in record) == ("reconciled" in record), record["id"]


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_every_harvested_message_is_diagnosed_with_its_cause_first(record):
    text = render_message(record)
    assert not PLACEHOLDER.search(text) or record.get("example"), text
    if record.get("harmless"):  # known harmless: said to be, and no cause
        reading = read_text(text)
        assert not reading.diagnoses and [e.signature for e in reading.harmless] == [record["id"]]
        return
    found = diagnose_text(text)
    assert found and found[0].code == record["code"], (text, [(d.code, d.confidence) for d in found[:3]])


@pytest.mark.parametrize("record", [r for r in RECORDS if not r.get("generic") and not r.get("harmless")][:60],
                         ids=lambda r: r["id"])
def test_a_harvested_message_inside_a_traceback_still_names_its_cause(record):
    log = ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    main()\n"
           + render_message(record) + "\n")
    assert top(log) == record["code"]


def test_every_harvested_signature_cites_the_line_and_explains_by_cause():
    base = load_signatures()
    harvested = [s for s in base.signatures if s.harvested and s.file == "sources.toml"]
    assert len(harvested) == len(RECORDS)
    for key in {s.explain for s in harvested}:
        for lang in ("en", "zh"):
            assert render(msg(key, origin="NCCL"), lang).startswith("NCCL"), (key, lang)


# --- the messages the issue names ------------------------------------------------------------------------------------

NAMED = [
    ("driver_too_old", "ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but version "
                       "510.85.02 was detected and compatibility mode is UNAVAILABLE."),
    ("driver_too_old", "ERROR: This container was built for NVIDIA Driver Release 590.48 or later, but\n"
                       "       version 580.159.03 was detected and compatibility mode is UNAVAILABLE."),
    ("driver_too_old", "This container was built for NVIDIA Driver Release 545.23 or later, butversion 535.104.05 was "
                       "detected and compatibility mode is UNAVAILABLE"),
    ("driver_too_old", 'RuntimeError: Function "cuMemAllocAsync" not found\n\nDriver Version: 455.23.05'),
    ("arch_not_in_build", "FATAL: FlashAttention requires building with sm version sm80-sm90, but was built for < 8.0!"),
    ("abi_mismatch", "ImportError: /opt/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol:\n"
                     "_ZN3c104cuda9SetDeviceEi"),
    ("abi_mismatch", "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol"),
    ("shm_too_small", "RuntimeError: DataLoader worker (pid 572) is killed by signal: Bus error. It is possible that "
                      "dataloader's workers are out of shared memory. Please try to raise your shared memory limit."),
    ("shm_too_small", "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\nerror. It is possible that "
                      "dataloader's workers are out of shared\nmemory. Please try to raise your shared memory limit."),
    ("disk_full", "OSError: [Errno 28] No space left on device"),
    ("disk_full", "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"),
    ("disk_full", 'safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: '
                  'StorageFull, message: "No space left on device" })'),
    ("network_unreachable", "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find "
                            "it in the cached files and it looks like bert-base-uncased is not the path to a directory "
                            "containing a file named config.json."),
    ("network_unreachable", "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): "
                            "Max retries exceeded with url: /bert-base-uncased/resolve/main/config.json\n"
                            "huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to "
                            "locate the file on the Hub and we cannot find the requested files in the local cache."),
    # conda's registry host replaced by the reserved conda-registry.invalid (the project writes no registry host)
    ("network_unreachable", "CondaHTTPError: HTTP 000 CONNECTION FAILED for url "
                            "<https://conda-registry.invalid/pkgs/main/linux-64/current_repodata.json>\nElapsed: -\n"
                            "ConnectionError(MaxRetryError(\"HTTPSConnectionPool(host='conda-registry.invalid', port=443): "
                            "Max retries exceeded (Caused by NewConnectionError(': Failed to establish a new "
                            "connection: [Errno -3] Temporary failure in name resolution'))\"))"),
    ("network_unreachable", "Cloning into 'LLaMA-Factory'...\nfatal: unable to access "
                            "'https://github.com/hiyouga/LLaMA-Factory.git/': Failed to connect to github.com port 443 "
                            "after 21047 ms: Connection timed out"),
    ("network_unreachable", "ssh: connect to host github.com port 22: Connection timed out"),
    # pip's own package index stays index_unreachable
    ("index_unreachable", "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after "
                          "connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='PyPI', port=443): "
                          "Read timed out. (read timeout=15)\")': /simple/flask/"),
    ("driver_too_old", "docker: Error response from daemon: failed to create task for container: failed to create shim "
                       "task: OCI runtime create failed: runc create failed: unable to start container process: error "
                       "during container init: error running prestart hook #0: exit status 1, stdout: , stderr: "
                       "Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: "
                       "cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: unknown"),
]


@pytest.mark.parametrize("code, log", NAMED)
def test_the_messages_the_issue_names(code, log):
    assert top(log) == code, [(d.code, d.confidence) for d in diagnose_text(log)[:3]]


def test_peer_access_is_an_interconnect_or_virtualisation_limit():
    codes = [d.code for d in diagnose_text("RuntimeError: CUDA error: peer access is not supported between these two devices")]
    assert codes[0] in ("interconnect_slow", "virtualization_limit")


def test_an_image_cuda_requirement_is_the_driver_even_when_the_host_shows_565():
    log = NAMED[-1][1] + "\n"
    snap = snapshot(driver="565.57.01", cuda_max="12.7", probed=False)
    first = diagnose(log, snap)[0]
    assert first.code == "driver_too_old" and first.checks[0].verdict == "confirms"
    assert "12.7" in render(first.checks[0].message, "en") and "12.8" in render(first.checks[0].message, "en")
    assert "container_gpu_not_exposed" not in [d.code for d in diagnose(log, snap)[:1]]


# --- tolerances ------------------------------------------------------------------------------------------------------

MESSAGE = "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver"
NGC = "ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but version 510.85.02 was detected and compatibility mode is UNAVAILABLE."


@pytest.mark.parametrize("log", [
    # wrapped once and twice, with the indentation a terminal adds
    "ERROR: This container was built for NVIDIA Driver\n    Release 535.86 or later, but version 510.85.02 was\n    detected and compatibility mode is UNAVAILABLE.",
    # prefixes on every line, the message wrapped across two prefixed lines
    "[rank0]: ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but\n[rank0]:   version 510.85.02 was detected and compatibility mode is UNAVAILABLE.",
    "2024-01-01 12:00:00,123 ERROR This container was built for NVIDIA Driver Release 535.86 or later, but\n2024-01-01 12:00:00,124 ERROR version 510.85.02 was detected and compatibility mode is UNAVAILABLE.",
    "node1:2231:2231 [0] This container was built for NVIDIA Driver Release 535.86 or later, but\nnode1:2231:2231 [0] version 510.85.02 was detected and compatibility mode is UNAVAILABLE.",
    "[2024-01-01 12:00:00] This container was built for NVIDIA Driver Release 535.86 or later,\n[2024-01-01 12:00:01] but version 510.85.02 was detected and compatibility mode is UNAVAILABLE.",
    # colour codes inside and around the words
    "\x1b[1;31mERROR:\x1b[0m This container was built for \x1b[1mNVIDIA Driver Release 535.86\x1b[0m or later, but version 510.85.02 was detected and compatibility mode is UNAVAILABLE.",
    # Chinese before, after and between
    "启动容器时报错：\n" + NGC + "\n请问怎么解决？",
    "启动容器时报错：" + NGC,
    # a space lost at the wrap of a paste
    NGC.replace("but version", "butversion"),
])
def test_matching_tolerates_how_logs_are_pasted(log):
    assert top(log) == "driver_too_old"


@pytest.mark.parametrize("log", [
    "\x1b[31mRuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error.\x1b[0m",
    "(VllmWorker rank=1 pid=4711) RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error.",
    "INFO 01-01 12:00:00 [loader.py:12] RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus\nINFO 01-01 12:00:00 [loader.py:12] error. It is possible that dataloader's workers are out of shared memory.",
    "训练时报错 RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error. 共享内存不够？",
])
def test_tolerances_hold_for_other_messages(log):
    assert top(log) == "shm_too_small"


def test_placeholders_take_any_value():
    for need, have in (("535.86", "510.85.02"), ("12.2", "470.1"), ("590.48.01", "580.159.03")):
        log = "This container was built for NVIDIA Driver Release %s or later, but version %s was detected and compatibility mode is UNAVAILABLE." % (need, have)
        assert top(log) == "driver_too_old"
    for cuda in ("10.0", "11.8", "12.8", "13.0"):
        assert top(MESSAGE.replace("12.8", cuda)) == "driver_too_old"


def test_a_colour_coded_log_keeps_its_line_numbers():
    log = "step 1\n\x1b[31mOSError: [Errno 28] No space left on device\x1b[0m\nstep 3\n"
    (first,) = diagnose_text(log)[:1]
    assert first.code == "disk_full" and first.evidence[0].line == 2


# --- reasoning with the given machine ---------------------------------------------------------------------------------

def test_found_version_is_judged_against_the_given_machine_not_asked_for():
    log = ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
           "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx")
    snap = snapshot(driver="565.57.01", cuda_max="12.7", probed=False)
    first = diagnose(log, snap)[0]
    assert first.code == "driver_too_old"
    assert first.settle == ()  # nothing to ask: the machine was given
    text = render(first.checks[0].message, "en")
    assert "565.57.01" in text and "12.7" in text and "11.4" in text and "libcuda" in text
    # the same log without a machine asks for the commands that settle it
    assert "nvidia-smi" in diagnose_text(log)[0].settle


def test_ngc_driver_release_is_judged_against_the_given_machine():
    snap = snapshot(driver="565.57.01", cuda_max="12.7", probed=False)
    first = diagnose(NGC.replace("535.86", "570.86"), snap)[0]
    assert first.code == "driver_too_old" and first.checks[0].verdict == "confirms"
    assert "570.86" in render(first.checks[0].message, "zh")


COLLECT_ENV = """PyTorch version: 1.8.1
Is debug build: False
CUDA used to build PyTorch: Could not collect
ROCM used to build PyTorch: N/A

OS: Ubuntu 18.04.5 LTS (x86_64)
Python version: 3.8 (64-bit runtime)
Is CUDA available: False
CUDA runtime version: 10.1.243
GPU models and configuration:
GPU 0: GeForce RTX 2080 Ti
GPU 1: GeForce RTX 2080 Ti
Nvidia driver version: 460.32.03
cuDNN version: Could not collect

Versions of relevant libraries:
[pip3] numpy==1.19.5
[pip3] torch==1.8.1
"""


def test_collect_env_of_a_cpu_only_torch_with_gpus_listed():
    assert top(COLLECT_ENV) == "cpu_only_build"
    assert diagnose(COLLECT_ENV)[0].code == "cpu_only_build"
    # a CUDA build that simply sees no GPU is not a CPU-only build
    cuda_build = COLLECT_ENV.replace("CUDA used to build PyTorch: Could not collect", "CUDA used to build PyTorch: 11.1")
    assert top(cuda_build) != "cpu_only_build"
    # and a CPU-only torch on a machine without GPUs is not reported by this rule
    no_gpu = "\n".join(l for l in COLLECT_ENV.splitlines() if not l.startswith(("GPU ", "Nvidia driver")))
    assert top(no_gpu) != "cpu_only_build"

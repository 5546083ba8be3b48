"""A provider's paste that holds several tool outputs one after another (nvidia-smi, nvcc --version, pip list, ibstat
...) is read whole by ``--from FILE``: the kind detected first parses it as before and every other tool output the
block finders cut out of it is read too and merged under it. Real captures from tests/fixtures, pasted the way a
provider sends them: ``$ cmd`` lines, blank lines, Markdown fences, Chinese captions."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.ingest import detect_kind, parse, read_input
from gpuvet.snapshot import SnapshotView, merge_all

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SRC = Path(__file__).resolve().parents[2] / "src"
SMI = FIXTURES / "nvidia-smi" / "h100-nvl-2gpu_drv550.54.14.txt"
NVCC = FIXTURES / "nvcc-version" / "cuda-12.5_V12.5.82.txt"
IBSTAT = FIXTURES / "ibstat" / "connectx4-1port_initializing_no-sm.txt"
PIP_LIST = FIXTURES / "pip-list" / "torch2.13.0-cpu_local-venv.txt"
PIP_FREEZE = FIXTURES / "pip-freeze" / "torch2.13.0-cpu_local-venv.txt"
# A capture that was itself several outputs in one file (PROVENANCE.md: /proc's version, nvidia-smi's driver list,
# fabric manager packages, Docker's runtimes, nvcc's release): it now reads the runtimes and the toolkit too.
PROC_MIXED = FIXTURES / "proc-driver-nvidia-version" / "open-kernel-module_575.57.08_b200_with-fabricmanager-nvlink-pkgs.txt"


def _paste(tmp_path, *parts, name="provider.txt"):
    path = tmp_path / name
    path.write_text("".join(parts), encoding="utf-8")
    return path


def _shell(command, path):
    return "$ {}\n{}\n".format(command, path.read_text(encoding="utf-8"))


def _fenced(caption, command, path):
    return "{}\n```\n$ {}\n{}```\n\n".format(caption, command, path.read_text(encoding="utf-8"))


def _cli(*argv):
    """gpuvet in a process of its own, as a renter runs it: (exit code, stdout, stderr)."""
    completed = subprocess.run([sys.executable, "-m", "gpuvet", *argv], capture_output=True, text=True, timeout=120,
                               env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    return completed.returncode, completed.stdout, completed.stderr


@pytest.fixture
def smi_nvcc_torch(tmp_path):
    """nvidia-smi, nvcc --version and `pip list | grep torch` (grep dropped pip's header), one after another."""
    return _paste(tmp_path, _shell("nvidia-smi", SMI), _shell("nvcc --version", NVCC),
                  "$ pip list | grep torch\ntorch                    2.1.0+cu118\n")


def test_every_output_of_the_paste_is_read(smi_nvcc_torch):
    snapshot = read_input(str(smi_nvcc_torch))
    view = SnapshotView(snapshot)
    assert [gpu["name"] for gpu in view.gpus] == ["NVIDIA H100 NVL"] * 2
    assert (view.driver_version, view.driver_cuda_max) == ("550.54.14", "12.4")
    assert [toolkit["version"] for toolkit in snapshot["cuda_toolkits"]["value"]] == ["12.5.82"]
    assert snapshot["frameworks"]["value"]["torch"]["version"] == "2.1.0+cu118"
    name = str(smi_nvcc_torch)
    assert snapshot["origin"] == {"type": "pasted", "inputs": ["nvidia-smi:" + name, "pip-list:" + name, "nvcc:" + name]}
    # each fact says which tool it was read from, as when each output came in a file of its own
    assert (view.source("gpus"), view.source("cuda_toolkits"), view.source("frameworks")) == (
        "pasted:nvidia-smi", "pasted:nvcc", "pasted:pip-list")


def test_check_without_a_target_judges_the_pasted_torch_on_that_machine(smi_nvcc_torch):
    code, out, err = _cli("check", "--from", str(smi_nvcc_torch), "--no-network", "--format", "json")
    assert err == ""
    document = json.loads(out)
    (target,) = document["targets"]
    assert target["target"] == "torch==2.1.0+cu118"
    chain = {link["layer"]: link for link in target["chain"]}
    assert chain["driver"]["verdict"] == "pass" and chain["driver"]["actual"] == "550.54.14"
    assert chain["framework"]["actual"] == "2.1.0+cu118 installed"
    # the pasted nvcc is judged too: CUDA 12 beside a cu118 build cannot build its extensions
    assert "toolkit_mismatch" in [finding["code"] for finding in target["findings"]]
    assert code == 0  # a warning, not a failure
    code, out, _ = _cli("check", "--from", str(smi_nvcc_torch), "--no-network")
    assert "Read from: nvidia-smi:{0}, pip-list:{0}, nvcc:{0}".format(smi_nvcc_torch) in out
    assert "No framework is installed" not in out


def test_a_provider_paste_with_fences_captions_and_a_full_pip_list(tmp_path):
    path = _paste(tmp_path, "您好，机器信息如下：\n\n", _fenced("显卡信息：", "nvidia-smi", SMI),
                  _fenced("CUDA 版本：", "nvcc -V", NVCC), _fenced("Python 包：", "pip list", PIP_LIST))
    snapshot = read_input(str(path))
    view = SnapshotView(snapshot)
    assert len(view.gpus) == 2 and view.driver_version == "550.54.14"
    assert snapshot["cuda_toolkits"]["value"][0]["version"] == "12.5.82"
    alone = parse("pip-list", PIP_LIST.read_text(encoding="utf-8"), "x")
    assert snapshot["packages"]["value"] == alone["packages"]["value"]  # every row of the list, none lost
    assert snapshot["frameworks"]["value"] == alone["frameworks"]["value"]


def test_ibstat_beside_nvidia_smi_names_the_port_that_is_not_active(tmp_path, capsys):
    path = _paste(tmp_path, _shell("nvidia-smi", SMI), "\n", _shell("ibstat", IBSTAT))
    assert detect_kind(path.read_text(encoding="utf-8")) == "nvidia-smi"
    assert main(["check", "--no-network", "torch==2.4.1+cu121", "--from", str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (finding,) = [f for f in document["machine"] if "RDMA" in f["title"]]
    assert (finding["code"], finding["actual"]) == ("nccl_comm_failure", "INIT / LinkUp")
    assert "mlx5_0 port 1" in finding["title"]
    assert document["snapshot"]["origin"]["inputs"] == ["nvidia-smi:%s" % path, "ibstat:%s" % path]


@pytest.mark.parametrize("command, output", [
    ("pip list | grep torch", "torch                    2.1.0+cu118"),  # grep took pip list's header away
    ("pip freeze | grep torch", "torch==2.1.0+cu118"),
    ("python3 -m pip list --format=freeze | grep -i torch", "torch==2.1.0+cu118"),
])
@pytest.mark.parametrize("end", ["\n", ""])  # a paste may stop right after the last row
def test_a_grepped_pip_output_is_read_after_its_command_line(tmp_path, command, output, end):
    path = _paste(tmp_path, "```\n", _shell("nvidia-smi", SMI), "```\n\n", "root@node:~# %s\n" % command, output, end)
    assert read_input(str(path))["frameworks"]["value"]["torch"]["version"] == "2.1.0+cu118"


def test_rows_without_their_command_line_are_not_taken_for_pip(tmp_path):
    path = _paste(tmp_path, _shell("nvidia-smi", SMI), "\nuptime 3 days\nmemory 512 GiB\ntorch==2.1.0+cu118\n")
    snapshot = read_input(str(path))
    assert "packages" not in snapshot and snapshot["origin"]["inputs"] == ["nvidia-smi:%s" % path]


def test_a_forced_kind_reads_that_kind_alone(smi_nvcc_torch):
    snapshot = read_input("nvcc:%s" % smi_nvcc_torch)
    assert snapshot["origin"]["inputs"] == ["nvcc:%s" % smi_nvcc_torch]
    assert snapshot["cuda_toolkits"]["value"][0]["version"] == "12.5.82"
    assert not any(key in snapshot for key in ("gpus", "driver", "frameworks", "packages"))


def test_a_pip_freeze_alone_reads_as_before():
    text = PIP_FREEZE.read_text(encoding="utf-8")
    assert read_input(str(PIP_FREEZE)) == _without_time(parse("pip-freeze", text, str(PIP_FREEZE)), read_input(str(PIP_FREEZE)))


def _without_time(expected, actual):
    """``expected`` with ``actual``'s creation time: two parses a second apart differ only there."""
    return {**expected, "created": actual["created"]}


def _single_kind_captures():
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".xml", ".csv", ".log", "") and path != PROC_MIXED \
                and "projects" not in path.parts:
            yield pytest.param(path, id=str(path.relative_to(FIXTURES)))


@pytest.mark.parametrize("path", list(_single_kind_captures()))
def test_a_single_output_reads_exactly_as_its_kind_alone(path):
    """A report that quotes other tools' lines (sglang's check_env, nvcc's release) says nothing new through them:
    every capture of one tool gives the snapshot its detected kind gave alone, inputs included."""
    text = path.read_text(encoding="utf-8", errors="replace")
    kind = detect_kind(text)
    if kind is None or "\x00" in text:
        pytest.skip("not a text paste gpuvet detects")
    alone = parse(kind, text, str(path))
    read = read_input(str(path))
    assert read == _without_time(alone, read)


def test_a_capture_of_several_outputs_now_reads_each():
    snapshot = read_input(str(PROC_MIXED))
    assert snapshot["driver"]["kernel_module"]["source"] == "pasted:proc-nvidia-version"
    assert snapshot["cuda_toolkits"]["value"][0]["version"] == "12.8.93"
    assert "nvidia" in snapshot["container_engine"]["value"]["runtimes"]
    assert [entry.partition(":")[0] for entry in snapshot["origin"]["inputs"]] == [
        "proc-nvidia-version", "nvcc", "docker-info"]


def test_the_detected_kind_wins_and_other_blocks_merge_as_several_from_files_do(tmp_path):
    # /proc's module says 535.54.03, the nvidia-smi table 550.54.14 (a machine between a driver update and a reboot):
    # /proc's report is the kind detected (its signature comes first in the registry), so its driver is the one read.
    proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023\n" \
           "GCC version:  gcc version 11.3.0 (Ubuntu 11.3.0-1ubuntu1~22.04.1)\n"
    path = _paste(tmp_path, _shell("nvidia-smi", SMI), "$ cat /proc/driver/nvidia/version\n", proc, "\n",
                  "$ pip freeze | grep torch\ntorch==2.0.1\n\n", "$ pip freeze | grep torch\ntorch==2.1.0+cu118\n")
    assert detect_kind(path.read_text(encoding="utf-8")) == "proc-nvidia-version"
    snapshot = read_input(str(path))
    assert (snapshot["driver"]["version"]["value"], snapshot["driver"]["version"]["source"]) == (
        "535.54.03", "pasted:proc-nvidia-version")
    assert len(snapshot["gpus"]["value"]) == 2  # what only the table says is read from it
    # two pip freeze runs that disagree: the later one wins, as with `--from a.txt --from b.txt`
    first = _paste(tmp_path, "torch==2.0.1\n", name="a.txt")
    second = _paste(tmp_path, "torch==2.1.0+cu118\n", name="b.txt")
    separate = merge_all([read_input(str(first)), read_input(str(second))])
    assert snapshot["packages"]["value"] == separate["packages"]["value"]
    assert snapshot["frameworks"]["value"]["torch"]["version"] == "2.1.0+cu118"


def test_recommend_and_diagnose_read_the_paste_whole(smi_nvcc_torch, tmp_path):
    code, out, err = _cli("recommend", "torch", "--from", str(smi_nvcc_torch), "--format", "json")
    assert (code, err) == (0, "")
    snapshot = json.loads(out)["snapshot"]
    assert snapshot["cuda_toolkits"]["value"][0]["version"] == "12.5.82"
    assert snapshot["frameworks"]["value"]["torch"]["version"] == "2.1.0+cu118"
    # torch's own cpp_extension error: the pasted nvcc and torch together confirm the cause
    log = _paste(tmp_path, "RuntimeError:\nThe detected CUDA version (12.5) mismatches the version that was used to "
                           "compile\nPyTorch (11.8). Please make sure to use the same CUDA versions.\n", name="build.log")
    code, out, err = _cli("diagnose", str(log), "--from", str(smi_nvcc_torch), "--format", "json")
    assert err == ""
    (cause, *_) = json.loads(out)["diagnoses"]
    assert cause["code"] == "toolkit_mismatch"
    assert [evidence["verdict"] for evidence in cause["snapshot"]] == ["confirms"]
    assert "12.5.82" in cause["snapshot"][0]["text"] and "11.8" in cause["snapshot"][0]["text"]

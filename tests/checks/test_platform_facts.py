"""Platforms are facts, not gaps; one truth per target (issue 29, items 5 and 6).

- aarch64: a wheel read as CPU-only on aarch64 is a CPU build there. PyPI's torch 2.5-2.10 for Arm carries no CUDA
  code (harvested/torch.toml), so on a GH200 plain ``pip install torch==X`` fails as a CPU build, with a fix naming the
  CUDA build PyTorch's own index has for Linux aarch64 (its release build matrix, the pytorch.org install selector).
- Jetson: JetPack's CUDA decides; a check always says what is known, never a silent unknown.
- Native Windows: which frameworks have a CUDA build there is data (``[[windows]]`` of every framework file), one rule.
- Free-threaded Python (PEP 703, cp313t) is an ABI of its own: abi3 wheels do not install there.
- One truth: no target both fails for a driver floor and says it runs through minor-version compatibility.

Every row cites the public source of its fact.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import snapshots

from gpuvet.checks import run_checks
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.kb import compat, load
from gpuvet.models import Severity

REPO = Path(__file__).resolve().parents[2]
SMI = REPO / "tests" / "fixtures" / "nvidia-smi"
GH200 = SMI / "gh200-1gpu_drv550.127.05.txt"
WINDOWS = SMI / "rtx-2080-super-1gpu_drv591.86_windows_idle.txt"
RTX5090 = SMI / "rtx-5090-1gpu_drv570.124.06.txt"
PYTORCH_2_7_BLOG = "https://pytorch.org/blog/pytorch-2-7/"  # "pre-built wheels for CUDA 12.8 across Linux x86 and arm64"


def _cli(*args: str, cwd: Path = REPO):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "gpuvet", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=str(cwd), timeout=120)


def _pasted(path: Path):
    text = path.read_text(encoding="utf-8")
    return parse(detect_kind(text), text, str(path))


def _target(snapshot, target: str):
    (result,) = run_checks(snapshot, [target], load()).targets
    return result


def _en(message) -> str:
    return render(message, "en") if message is not None else ""


def _commands(result):
    return [c for f in result.findings if f.fix for c in f.fix.commands]


# ------------------------------------------------------------------------------------------------------ aarch64
@pytest.mark.parametrize("target, command, source", [
    # PyTorch's release build matrix at the commit that made each release stable: linux-aarch64 CUDA arches
    ("torch==2.5.1", "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124",
     "pytorch/test-infra@29912dec generate_binary_build_matrix.py: CUDA_AARCH64 -> cu124"),
    ("torch==2.6.0", "pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu126",
     "pytorch/test-infra@b1bdc332: CUDA_AARCH64 -> cu126; PyTorch 2.6 blog: Linux Aarch64 binaries"),
    ("torch==2.7.0", "pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128", PYTORCH_2_7_BLOG),
    ("torch==2.8.0", "pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu129",
     "pytorch/test-infra@21480431: CUDA_AARCH64_ARCHES = ['12.9-aarch64']"),
    # cu130 is an aarch64 build too, but driver 550 runs no CUDA 13 build: the fix offers only what runs here
    ("torch==2.10.0", "pip install torch==2.10.0 --index-url https://download.pytorch.org/whl/cu128",
     "pytorch/test-infra@e8208cf2: CUDA_AARCH64_ARCHES = ['12.6-aarch64', '12.8-aarch64', '13.0-aarch64']"),
])
def test_pypi_torch_for_arm_is_a_cpu_build_on_a_gh200_and_the_fix_names_pytorchs_own_aarch64_build(target, command, source):
    result = _target(_pasted(GH200), target)
    assert result.verdict.value == "fail", source
    (cpu,) = [f for f in result.findings if f.code == "cpu_only_build"]
    assert cpu.severity is Severity.FAIL and "Linux aarch64" in _en(cpu.detail)
    assert command in cpu.fix.commands, (source, cpu.fix.commands)
    assert not any("/whl/cu13" in c for c in cpu.fix.commands), "driver 550 serves no CUDA 13 build"
    # PyPI's wheel was read: the aarch64 wheel itself is cited, with the matrix behind the fix
    assert any("manylinux" in s and "aarch64" in s for s in cpu.sources)
    assert not any(f.code == "arch_list_unknown" for f in result.findings)


def test_gh200_torch_2_7_0_end_to_end_fails_with_a_cpu_build_and_valid_shell():
    """The CLI on the GH200 paste (a Grace GPU implies an aarch64 host): exit 1, never unknown, no "cuDNN comes with
    the build" (a CPU build bundles none), and every printed command parses as shell."""
    done = _cli("check", "--no-network", "--from", str(GH200), "torch==2.7.0")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "is a CPU-only build" in out and "comes with the build" not in out and "UNKNOWN" not in out
    assert "$ pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128" in out
    assert "PyPI (pip's default index)" not in out
    assert PYTORCH_2_7_BLOG in out
    for line in out.splitlines():
        if line.strip().startswith("$ "):
            shlex.split(line.strip()[2:])  # a syntax error in a printed command raises here


def test_the_pypi_phrase_never_reaches_a_command():
    """torch.toml names PyPI's default index in words ("PyPI (pip's default index)"): a named PyPI build whose arch
    list on Arm is not known gets a harvest command with no --index-url at all, for the aarch64 wheel."""
    result = _target(_pasted(GH200), "torch==2.7.0+cu126")
    (unknown,) = [f for f in result.findings if f.code == "arch_list_unknown"]
    assert unknown.fix.commands[0] == "gpuvet kb harvest torch==2.7.0 --platform aarch64"
    variant = load().framework("torch").release("2.7.0").variant("cu126")
    assert variant.index_url == "PyPI (pip's default index)" and variant.own_index is None
    assert load().framework("torch").release("2.7.0").variant("cu128").own_index == "https://download.pytorch.org/whl/cu128"


def test_a_named_build_and_an_installed_cuda_build_are_judged_as_they_are():
    snapshot = _pasted(GH200)
    named = _target(snapshot, "torch==2.7.0+cu128")  # PyTorch's own aarch64 build: CUDA, its arch list not read
    assert named.resolved == "torch==2.7.0 (cu128)" and not any(f.code == "cpu_only_build" for f in named.findings)


# ------------------------------------------------------------------------------------------------------- Jetson
def _jetson(gpu: str, cc: str, jetpack_cuda):
    host = {"glibc": {"status": "found", "value": "2.35", "source": "confstr"},
            "machine": {"status": "found", "value": "aarch64", "source": "uname"}}
    return snapshots.snapshot(driver="540.4.0", cuda_max=jetpack_cuda, gpus=[snapshots.gpu(gpu, cc)], host=host)


THOR_BLOG = "https://developer.nvidia.com/blog/whats-new-in-cuda-toolkit-13-0-for-jetson-thor-unified-arm-ecosystem-and-more/"
TEGRA = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility"


@pytest.mark.parametrize("gpu, cc, jetpack, target, verdict, codes, source", [
    # JetPack's CUDA is not in the input: unknown, and a finding says how to learn it (never silent)
    ("NVIDIA Thor", "11.0", None, "torch==2.11.0", "unknown", {"unknown_version", "jetson_note"}, THOR_BLOG),
    # CUDA 13 unified the Arm toolkit: PyPI's CUDA 13.0 SBSA torch runs on Thor, and a note says why
    ("NVIDIA Thor", "11.0", "13.0", "torch==2.11.0", "pass", {"jetson_note"}, THOR_BLOG),
    # ... "The only exception is Orin (sm_87)": an SBSA build never runs there; JetPack 6's CUDA 12.6 < 13.0 too
    ("Orin (nvgpu)", "8.7", "12.6", "torch==2.11.0", "fail", {"platform_unsupported", "driver_too_old"}, THOR_BLOG),
    ("Orin (nvgpu)", "8.7", None, "torch==2.11.0", "fail", {"platform_unsupported", "unknown_version"}, TEGRA),
    # PyPI's torch 2.8.0 for Arm carries no CUDA code: a CPU build on a Jetson as on a GH200
    ("Orin (nvgpu)", "8.7", "12.6", "torch==2.8.0", "fail", {"cpu_only_build"}, "harvested/torch.toml"),
    # PyPI's TensorFlow 2.18 for Arm carries no CUDA code either (read from its wheel): a CPU build there
    ("Orin (nvgpu)", "8.7", None, "tensorflow==2.18.0", "fail", {"cpu_only_build"}, "harvested/tensorflow.toml"),
])
def test_a_jetson_check_always_says_what_is_known(gpu, cc, jetpack, target, verdict, codes, source):
    result = _target(_jetson(gpu, cc, jetpack), target)
    assert result.verdict.value == verdict, (source, [(f.code, _en(f.title)) for f in result.findings])
    assert codes <= {f.code for f in result.findings}, source
    assert result.findings, "a Jetson check is never a silent unknown"
    text = " ".join(_en(f.title) + " " + _en(f.detail) + " " + _en(f.fix.summary if f.fix else None) for f in result.findings)
    assert "JetPack" in text or "Jetson" in text
    assert "525.60.13" not in text  # a desktop driver floor means nothing on Jetson: JetPack's CUDA decides


def test_on_orin_the_fix_of_a_cpu_build_is_nvidias_jetson_build_and_on_thor_pytorchs_cuda_13_build():
    orin = _target(_jetson("Orin (nvgpu)", "8.7", "12.6"), "torch==2.9.0")
    (cpu,) = [f for f in orin.findings if f.code == "cpu_only_build"]
    assert not cpu.fix.commands and load().jetson()["wheels"] in _en(cpu.fix.summary)  # no SBSA build runs on Orin
    thor = _target(_jetson("NVIDIA Thor", "11.0", "13.0"), "torch==2.9.0")
    (cpu,) = [f for f in thor.findings if f.code == "cpu_only_build"]
    assert cpu.fix.commands == ("pip install torch==2.9.0 --index-url https://download.pytorch.org/whl/cu130",)


def test_jetpack_cuda_older_than_the_build_fails_with_jetpack_words():
    result = _target(_jetson("NVIDIA Thor", "11.0", "12.8"), "torch==2.11.0")
    (old,) = [f for f in result.findings if f.code == "driver_too_old"]
    assert _en(old.title) == "JetPack's CUDA 12.8 is older than CUDA 13.0 of torch==2.11.0 (cu130)"


# ------------------------------------------------------------------------------------------------ native Windows
VLLM_DOCS = "https://docs.vllm.ai/en/v0.11.0/getting_started/installation/gpu.html"


@pytest.mark.parametrize("target, expected, source", [
    ("vllm==0.11.0", ("fail", "checks.windows_gpu"), VLLM_DOCS),  # "vLLM does not support Windows natively"
    ("sglang==0.5.4", ("fail", "checks.windows_gpu"), "PyPI: sgl-kernel (manylinux wheels only)"),
    ("tensorrt-llm==1.0.0", ("fail", "checks.windows_gpu"), "https://nvidia.github.io/TensorRT-LLM/installation/linux.html"),
    ("jax[cuda12]==0.4.30", ("fail", "checks.windows_gpu"), "https://docs.jax.dev/en/latest/installation.html"),
    ("mindspore==2.2.14", ("fail", "checks.windows_gpu"), "mindspore_gpu_install_pip_en.md (Linux-x86_64)"),
    ("flash-attn==2.8.3", ("warn", "checks.windows_gpu_source"), "https://github.com/Dao-AILab/flash-attention"),
    ("deepspeed==0.19.8", ("warn", "checks.windows_gpu_source"), "DeepSpeed blogs/windows/08-2024: 0.14.5-0.16.5 wheels"),
    ("tensorflow==2.18.0", ("fail", "checks.windows_gpu"), "https://github.com/tensorflow/tensorflow/releases/tag/v2.11.1"),
    ("tensorflow==2.10.0", None, "https://github.com/tensorflow/tensorflow/releases/tag/v2.11.1"),  # the last one
    ("paddlepaddle-gpu==3.2.0", None, "https://www.paddlepaddle.org.cn/documentation/install/pip/windows-pip.html"),
])
def test_native_windows_availability_is_data_and_one_rule(target, expected, source):
    result = _target(_pasted(WINDOWS), target)
    found = [f for f in result.findings if f.code == "platform_unsupported" and f.layer == "host"]
    if expected is None:
        assert not found, source
        return
    severity, key = expected
    assert [f.severity.value for f in found] == [severity], (source, [(f.code, _en(f.title)) for f in result.findings])
    assert found[0].title.id == key + ".title"
    assert "WSL2" in _en(found[0].fix.summary)


def test_every_framework_file_says_what_native_windows_gets_with_a_source():
    for framework in load().frameworks():
        records = framework.extra.get("windows")
        assert records, f"{framework.name}: no [[windows]]"
        for record in records:
            assert isinstance(record.get("cuda"), bool) and str(record.get("source", "")).strip(), framework.name


def test_vllm_on_native_windows_end_to_end_fails_with_wsl2_as_the_fix():
    done = _cli("check", "--no-network", "--from", str(WINDOWS), "vllm==0.11.0")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "vllm==0.11.0 (cu128) has no GPU build for native Windows" in done.stdout
    assert "Fix: Run it inside WSL2 (Ubuntu) or on Linux." in done.stdout
    assert "runs on NVIDIA GeForce RTX 2080" not in done.stdout  # one truth: no "runs, except ..." beside it


def test_pypi_torch_on_native_windows_is_a_cpu_build_and_the_fix_is_pytorchs_own_index():
    # pytorch/test-infra generate_binary_build_matrix.py, get_wheel_install_command: plain PyPI only for Linux's default
    # CUDA and for Windows/macOS CPU; Windows CUDA builds come with --index-url download.pytorch.org/whl/cuXYZ
    result = _target(_pasted(WINDOWS), "torch==2.8.0")
    (cpu,) = [f for f in result.findings if f.code == "cpu_only_build"]
    assert cpu.fix.commands == ("pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu128",)
    wsl = _target(_pasted(SMI / "rtx-4060-laptop-1gpu_smi555.42.06_drv555.85_wsl2.txt"), "torch==2.8.0")
    assert not any(f.code == "cpu_only_build" for f in wsl.findings)  # WSL2 is Linux: PyPI's CUDA build


# ------------------------------------------------------------------------------------------ free-threaded Python
def _free_threaded(python: str):
    snapshot = snapshots.snapshot(driver="570.124.06", gpus=[snapshots.gpu("NVIDIA H100 80GB HBM3", "9.0")], python=python)
    snapshot["python"]["value"]["free_threaded"] = True
    return snapshot


@pytest.mark.parametrize("python, target, verdict, source", [
    # PyPI's torch files tagged cp313-cp313t: 2.7.0 ... 2.12.0 (pip index versions --abi cp313t)
    ("3.13.1", "torch==2.8.0", "pass", "PyPI: torch-2.8.0-cp313-cp313t-manylinux_2_28_x86_64.whl"),
    ("3.13.1", "torch==2.6.0", "fail", "PyPI: no cp313t wheel of torch 2.6.0 (pytorch/pytorch#144357)"),
    ("3.13.1", "torch==2.12.1", "fail", "pytorch/pytorch#182951: 3.13t dropped from the build matrix"),
    ("3.14.0", "torch==2.9.0", "pass", "PyPI: torch-2.9.0-cp314-cp314t wheels"),
    # vLLM ships only cp38-abi3 wheels; "The free-threaded builds do not support abi3" (packaging.tags)
    ("3.13.1", "vllm==0.11.0", "fail", "PyPI: vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl"),
    # a pure-Python package installs anywhere; its pinned torch (2.8.0) has a cp313t wheel
    ("3.13.1", "sglang==0.5.4", "pass", "PyPI: sglang is py3-none-any"),
    # no data: unknown, never a pass
    ("3.13.1", "tensorflow==2.20.0", "unknown", "not recorded"),
])
def test_a_free_threaded_python_is_its_own_abi(python, target, verdict, source):
    result = _target(_free_threaded(python), target)
    assert result.verdict.value == verdict, (source, [(f.code, _en(f.title)) for f in result.findings])
    (link,) = [link for link in result.chain if link.layer == "python"]
    assert _en(link.actual).endswith("(free-threaded)")


def test_vllm_on_3_13t_says_abi3():
    (finding,) = [f for f in _target(_free_threaded("3.13.1"), "vllm==0.11.0").findings if f.code == "python_unsupported"]
    assert "abi3" in _en(finding.detail) and "cp313t" in _en(finding.detail)
    assert "python3.13t" in _en(finding.fix.summary)


def test_the_probe_reads_py_gil_disabled_and_stays_stdlib(monkeypatch):
    import sysconfig

    from gpuvet.probe import python_env

    assert python_env.python_fact()["value"]["free_threaded"] is (bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
                                                                  if sys.version_info >= (3, 13) else False)
    monkeypatch.setattr(python_env.sys, "version_info", (3, 13, 1, "final", 0))
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: 1 if name == "Py_GIL_DISABLED" else None)
    assert python_env.free_threaded() is True


def test_a_pasted_free_threading_banner_sets_it():
    # CPython 3.13's sys.version on a free-threaded build: "3.13.1 experimental free-threading build (main, ...)"
    # (https://docs.python.org/3.13/howto/free-threading-python.html, "Identifying free-threaded Python")
    path = REPO / "tests" / "fixtures" / "torch-collect-env" / "torch2.4.0+cu121_wsl2_rtx4070-laptop_drv551.88_vllm-script_truncated.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = ["Python version: 3.13.1 experimental free-threading build (main, Dec  6 2024, 20:06:38) [GCC 11.4.0] (64-bit runtime)"
             if line.startswith("Python version:") else line for line in lines]
    text = "\n".join(lines) + "\n"
    snapshot = parse(detect_kind(text), text, "collect-env")
    assert snapshot["python"]["value"]["version"] == "3.13.1" and snapshot["python"]["value"]["free_threaded"] is True
    plain = parse(detect_kind(path.read_text(encoding="utf-8")), path.read_text(encoding="utf-8"), "collect-env")
    assert "free_threaded" not in plain["python"]["value"]


# ------------------------------------------------------------------------------------------------ one truth
TARGETS = ["torch==2.8.0", "torch==2.4.1", "vllm==0.11.0", "tensorflow==2.18.0"]
FLOOR_CODES = ("driver_too_old", "no_driver")


def _snapshots():
    for path in sorted(SMI.glob("*.txt")):
        yield path.name, _pasted(path)
    # An RTX 5090 on driver 560: Blackwell needs R570 (NVIDIA open-gpu-kernel-modules 570.86.16 README), while CUDA
    # 12.8 builds would "run" on 560 through minor-version compatibility (floor 525.60.13) on an older GPU.
    text = RTX5090.read_text(encoding="utf-8").replace("570.124.06", "560.35.03").replace("CUDA Version: 12.8", "CUDA Version: 12.6")
    yield "rtx-5090@560.35.03", parse(detect_kind(text), text, "rtx-5090@560")


def test_no_target_fails_for_a_driver_floor_and_says_it_runs_through_minor_version_compatibility():
    kb = load()
    contradictions = []
    for name, snapshot in _snapshots():
        for result in run_checks(snapshot, TARGETS, kb).targets:
            floor = [f for f in result.findings if f.code in FLOOR_CODES and f.severity is Severity.FAIL]
            runs = [f for f in result.findings if f.code in ("minor_version_compat", "forward_compat")]
            if floor and runs:
                contradictions.append((name, result.target, _en(floor[0].title), _en(runs[0].title)))
            for command in _commands(result):  # and every printed command is valid shell
                assert "PyPI (" not in command, (name, command)
                shlex.split(command)
    assert contradictions == []


def test_a_blackwell_gpu_below_r570_fails_for_its_driver_and_nothing_says_it_runs():
    text = RTX5090.read_text(encoding="utf-8").replace("570.124.06", "560.35.03").replace("CUDA Version: 12.8", "CUDA Version: 12.6")
    for target in ("torch==2.8.0", "torch==2.4.1", "tensorflow==2.18.0"):
        result = _target(parse(detect_kind(text), text, "rtx-5090@560"), target)
        codes = [(f.code, f.severity.value) for f in result.findings]
        assert ("driver_too_old", "fail") in codes, target
        assert not {c for c, _ in codes} & {"minor_version_compat", "ptx_jit", "gpu_features"}, (target, codes)


def test_gtx_1050ti_on_535_with_vllm_keeps_one_truth():
    """vLLM 0.11.0 has no kernels for a Pascal GPU (its _C is built for sm_70+, one unit of CUDA 12.8 PTX aside): that
    fails, and no note says driver 535 runs CUDA 12.8 builds through minor-version compatibility (it did before
    issue 29)."""
    result = _target(_pasted(SMI / "gtx-1050ti-1gpu_drv535.161.07.txt"), "vllm==0.11.0")
    assert any(f.code == "arch_not_in_build" and f.severity is Severity.FAIL for f in result.findings)
    assert not any(f.code == "minor_version_compat" for f in result.findings)


def test_the_one_truth_rule_is_data_of_codes():
    from gpuvet.checks import CANNOT_RUN, RUNS_NOTES
    from gpuvet.findings import KINDS

    info_codes = {code for code, _, severity in KINDS.values() if severity is Severity.INFO}
    # a "it runs" note is never a failure (ptx_jit is a warning: every kernel compiled at first launch)
    assert all(KINDS[key][2] is not Severity.FAIL for key in RUNS_NOTES) and not CANNOT_RUN & info_codes


def test_windows_rule_and_platform_builds_are_sourced():
    torch = load().framework("torch")
    for record in torch.extra["platform_build"]:
        assert record["platform"] == "aarch64" and record["variants"] and record["source"].startswith("https://")
        for release in torch.releases:
            if compat.versions.in_specifier(release.version, record["releases"]):
                assert all(release.variants.get(v) and release.variants[v].cuda for v in record["variants"]), release.version
    assert json.dumps(load().jetson()).count("https://") >= 3


# ------------------------------------------------------------------------------------------------ Chinese
_CODE_SPANS = re.compile(r'`[^`\n]*`|"[^"\n]*"|https?://\S+|\S*[/\\]\S*')
_ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’\-]*(?: +[A-Za-z][A-Za-z'’\-]*){3,}")  # as tests/report/test_zh_prose.py


@pytest.mark.parametrize("snapshot, target", [
    (lambda: _pasted(GH200), "torch==2.7.0"),
    (lambda: _pasted(WINDOWS), "vllm==0.11.0"),
    (lambda: _pasted(WINDOWS), "flash-attn==2.8.3"),
    (lambda: _pasted(WINDOWS), "torch==2.8.0"),
    (lambda: _jetson("Orin (nvgpu)", "8.7", None), "torch==2.11.0"),
    (lambda: _jetson("Orin (nvgpu)", "8.7", "12.6"), "torch==2.9.0"),
    (lambda: _jetson("NVIDIA Thor", "11.0", "12.8"), "torch==2.11.0"),
    (lambda: _jetson("NVIDIA Thor", "11.0", "13.0"), "torch==2.11.0"),
    (lambda: _free_threaded("3.13.1"), "vllm==0.11.0"),
    (lambda: _free_threaded("3.13.1"), "tensorflow==2.20.0"),
])
def test_the_new_sentences_read_chinese(snapshot, target):
    result = _target(snapshot(), target)
    assert result.findings
    for finding in result.findings:
        for message in (finding.title, finding.detail, finding.fix.summary if finding.fix else None):
            text = render(message, "zh") if message is not None else ""
            runs = [m.group(0) for line in text.splitlines() for m in _ENGLISH_RUN.finditer(_CODE_SPANS.sub(" ", line))]
            assert runs == [], (finding.code, text)


def test_on_native_windows_every_cuda_build_recommend_offers_names_its_cuda_index():
    """PyPI's Windows wheels of torch are CPU builds: a plain `pip install torch==X` there installs the CPU wheel, so
    each CUDA build recommend says fits comes with PyTorch's own index (the [[windows]] record's source)."""
    from gpuvet.recommend import recommend
    from gpuvet.snapshot import SnapshotView

    kb = load()
    picks = recommend(SnapshotView(_pasted(WINDOWS)), kb.framework("torch"), kb)
    assert picks
    for pick in picks:
        (command,) = pick.to_dict()["install"]
        assert pick.candidate.variant.cuda and "--index-url https://download.pytorch.org/whl/cu" in command, command

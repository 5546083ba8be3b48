"""check --project on real projects' dependency files (tests/fixtures/projects, provenance in PROVENANCE.md): the
frameworks each declares become targets with the build their index decides, what gpuvet does not judge is listed,
and the check verdicts follow from the machine."""

import json
from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.i18n import render

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROJECTS = FIXTURES / "projects"
A10 = str(FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")  # driver 550: CUDA up to 12.4


def _check(project, capsys, *extra):
    code = main(["check", "--project", str(PROJECTS / project), "--from", A10, "--no-network", "-f", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


# torchvision, torchaudio (and onnxruntime-gpu) are frameworks the knowledge base judges: a project's pins of them are
# targets too (a +cuXYZ build of them is judged with that torch build).
@pytest.mark.parametrize("project, declared", [
    ("kohya-ss", ["torch==2.7.0+cu128", "torchvision==0.22.0+cu128", "xformers>=0.0.30", "bitsandbytes>=0.45.0",
                  "tensorflow==2.15.0.post1", "onnxruntime-gpu==1.19.2"]),
    ("open-sora", ["torch==2.3.0+cu121", "torchvision==0.18.0+cu121", "xformers==0.0.26.post1"]),  # the index on each line decides
    ("tabbyapi", ["torch~=2.2"]),  # the BOM is read past; the wheel URLs are not releases
    ("vllm-cpu", ["torch==2.9.1+cpu", "torchaudio", "torchvision"]),  # the x86_64 one of two marker-split pins
    ("prime-rl", ["torch>=2.9.0", "vllm==0.14.0"]),
    ("invokeai-pep621", ["torch==2.2.1", "torchvision==0.17.1"]),
    # conda environment files: cudatoolkit=11.3 picks torch's cu113 build; conda-forge's unpinned pytorch-gpu
    ("stable-diffusion-conda", ["torch==1.11.0+cu113", "torchvision==0.12.0+cu113"]),
    ("aalto-pytorch-env", ["torch", "torchaudio", "torchvision"]),
    # Dockerfiles: pytorch/pytorch's official tag is that build; RUN pip install lines are requirements
    ("mhchess-docker", ["torch==2.1.0+cu121"]),
    # its base nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04 is a tag kb/data/images.toml lists: an image target too
    ("detectron2-docker", ["image:nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04", "torch==1.10+cu111",
                           "torchvision==0.11.1+cu111"]),
])
def test_the_frameworks_a_project_declares(project, declared, capsys):
    _, document = _check(project, capsys)
    assert document["project"]["targets"] == declared
    assert [t["target"] for t in document["targets"]] == declared


def test_what_is_left_out_is_reported(capsys):
    _, document = _check("vllm-cpu", capsys)
    skipped = {(s["line"], s["why"]) for s in document["project"]["skipped"]}
    assert ("-r common.txt", "the included file is not there") in skipped
    assert "numba==0.61.2" in document["project"]["not_judged"]
    _, document = _check("tabbyapi", capsys)
    assert any(s["why"].startswith("a direct URL") for s in document["project"]["skipped"])


def test_the_verdict_follows_from_the_machine(capsys):
    t4 = str(FIXTURES / "nvidia-smi" / "tesla-t4-1gpu_drv510.47.03.txt")  # R510: CUDA 11.x only
    code = main(["check", "--project", str(PROJECTS / "kohya-ss"), "--from", t4, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    torch = next(t for t in document["targets"] if t["target"] == "torch==2.7.0+cu128")
    assert torch["verdict"] == "fail"  # a CUDA 12.8 build below the 12.x driver floor (525.60.13)
    assert "driver_too_old" in [f["code"] for f in torch["findings"]]
    assert code == 1
    code, document = _check("open-sora", capsys)
    torch = next(t for t in document["targets"] if t["target"] == "torch==2.3.0+cu121")
    assert torch["verdict"] == "pass"


def test_a_folder_without_dependency_files_is_one_line(tmp_path, capsys):
    assert main(["check", "--project", str(tmp_path), "--from", A10, "--no-network"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --project") and "Traceback" not in err


def test_a_project_moved_from_windows_gets_what_breaks_on_linux(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_bytes(
        b"torch==2.1.2\r\npywin32==306\r\npywin32-ctypes==0.2.2; sys_platform == 'win32'\r\n"
        b"C:\\Users\\me\\wheels\\flash_attn-2.5.2-cp311-win_amd64.whl\r\n")
    (tmp_path / "train.sh").write_bytes(b"#!/bin/bash\r\npython train.py\r\n")
    (tmp_path / "setup.sh").write_bytes(b"#!/bin/bash\npip install -r requirements.txt\n")
    code = main(["check", "--project", str(tmp_path), "--from", A10, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    lint = {(entry["file"], entry["problem"]) for entry in document["project"]["lint"]}
    assert lint == {("requirements.txt", "crlf"), ("requirements.txt", "windows_only"),
                    ("requirements.txt", "windows_path"), ("train.sh", "crlf")}  # the marked one and setup.sh are fine
    codes = [f["code"] for f in document["machine"] if f["code"] == "platform_unsupported"]
    assert len(codes) == 4 and document["verdict"] == "warn" and code == 0
    assert document["project"]["targets"] == ["torch==2.1.2"]


def test_the_real_projects_carry_no_windows_lint(capsys):
    for project in ("kohya-ss", "open-sora", "tabbyapi", "invokeai-pep621"):
        _, document = _check(project, capsys)
        assert document["project"]["lint"] == [], project


def test_conda_match_specs_and_cuda_selectors():
    """conda's `=X.Y` is any X.Y.z, `=X.Y.Z` that release; `pytorch-cuda=12.1` (the pytorch channel's selector) and
    `cpuonly` choose torch's build; a channel prefix (`pytorch::`) is read past; the pip list is a requirements file."""
    from gpuvet.ingest.project import read_environment_yml

    declared = read_environment_yml({"dependencies": [
        "python=3.10", "pytorch::pytorch=2.1.0", "pytorch-cuda=12.1", "tensorflow-gpu=2.12",
        {"pip": ["vllm==0.4.2", "-r requirements.txt"]}]})
    assert declared.targets == ["vllm==0.4.2", "torch==2.1.0+cu121", "tensorflow==2.12.*"]
    assert declared.includes == ["requirements.txt"]
    assert read_environment_yml({"dependencies": ["pytorch=2.1.0", "cpuonly"]}).targets == ["torch==2.1.0+cpu"]
    assert [(line, render(why, "en")) for line, why in read_environment_yml(["not", "a", "mapping"]).skipped] == [
        ("dependencies", "no dependencies list")]


def test_a_broken_environment_yml_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "environment.yml").write_text("dependencies: [pytorch=2.1.0\n  - : :\n")
    assert main(["check", "--project", str(tmp_path), "--from", A10, "--no-network"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "not valid YAML" in err and "Traceback" not in err


def test_a_dockerfile_base_image_gpuvet_cannot_read_is_listed(capsys):
    code = main(["check", "--project", str(PROJECTS / "face-recognition-docker"), "--from", A10, "--no-network",
                 "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["project"]["targets"] == []
    assert {"file": "Dockerfile", "line": "FROM train_fr:latest", "why": "a base image gpuvet does not read"} in \
        document["project"]["skipped"]
    assert code in (0, 1, 3)


def test_dockerfile_stages_and_pip_commands():
    from gpuvet.ingest.project import read_dockerfile

    declared = read_dockerfile(
        "FROM pytorch/pytorch:2.4.0-cuda12.4-cudnn9-devel AS build\n"
        "RUN pip install --no-cache-dir vllm==0.6.3 \\\n    && python -m pip install xformers==0.0.28\n"
        "FROM build\n")
    assert declared.targets == ["torch==2.4.0+cu124", "vllm==0.6.3", "xformers==0.0.28"]
    assert declared.skipped == []  # FROM build is the stage above, not an image


def test_check_an_official_pytorch_image_tag_as_its_torch_build(capsys):
    """image:REF on the command line: the tag's build is checked against the machine (A10, driver 550)."""
    code = main(["check", "image:pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime", "--from", A10, "--no-network",
                 "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    assert [t["target"] for t in document["targets"]] == ["torch==2.1.0+cu121"] and code in (0, 1, 3)
    assert main(["check", "image:lmsysorg/sglang:latest", "--from", A10, "--no-network"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: image:lmsysorg/sglang:latest") and "docker image inspect" in err


# --- pixi.toml: the default environment's dependencies, and [system-requirements] against the driver
# (pixi: cuda = "12" means the virtual package __cuda >= 12, read from the driver;
# https://pixi.sh/latest/workspace/system_requirements/)

PIXI_PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "projects"
A10_550 = str(Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")


def _pixi_check(capsys, folder):
    code = main(["check", "--project", str(PIXI_PROJECTS / folder), "--from", A10_550, "--no-network", "-f", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_pixi_cuda_requirement_above_the_driver_fails_with_the_fix(capsys):
    code, document = _pixi_check(capsys, "pixi-cuda-example")  # cuda = "12.9" on a 550 driver (CUDA 12.4)
    assert code == 1
    assert document["project"]["system_requirements"] == [{"file": "pixi.toml", "name": "cuda", "value": "12.9"}]
    failing = [f for f in document["machine"] if f["code"] == "driver_too_old"][0]
    assert failing["severity"] == "fail" and "12.9" in failing["title"] and "12.4" in failing["title"]
    assert failing["fix"]["commands"] == ["pixi workspace system-requirements add cuda 12.4"]
    assert any(t.startswith("torch") for t in document["project"]["targets"])  # pytorch-gpu is torch


def test_pixi_feature_of_the_default_environment_is_read_and_a_lower_requirement_passes(capsys):
    code, document = _pixi_check(capsys, "pixi-pytorch-onnx")  # default = ["gpu"], cuda = "12.0"
    assert document["project"]["system_requirements"] == [{"file": "pixi.toml", "name": "cuda", "value": "12.0"}]
    assert not [f for f in document["machine"] if "pixi.toml" in f["title"]]
    assert "torch" in document["project"]["targets"]  # from [feature.gpu.dependencies] pytorch-gpu


@pytest.mark.parametrize("value, spec", [("*", ""), (">=2.7.0,<3", ">=2.7.0,<3"), ("3.10.*", "==3.10.*"),
                                         ("2.5.1", "==2.5.1"), ({"version": ">=1.0"}, ">=1.0"),
                                         ({"path": "./lib"}, None), ({"git": "https://github.com/o/r"}, None)])
def test_pixi_dependency_values(value, spec):
    from gpuvet.ingest.project import _pixi_spec

    assert _pixi_spec(value) == spec


def test_pixi_bare_major_requirement():
    from gpuvet.checks.project import project_findings
    from gpuvet.kb import load
    from gpuvet.probe.facts import found
    from gpuvet.snapshot import SnapshotView, new_snapshot

    snapshot = new_snapshot("stated")
    snapshot.setdefault("driver", {})["cuda_max"] = found("11.8", "stated")
    project = {"system_requirements": [{"file": "pixi.toml", "name": "cuda", "value": "12"}]}
    assert [f.code for f in project_findings(project, SnapshotView(snapshot), load())] == ["driver_too_old"]
    snapshot["driver"]["cuda_max"] = found("12.0", "stated")
    assert project_findings(project, SnapshotView(snapshot), load()) == []


# --- code and configs moved from Windows: absolute Windows paths, text that is not UTF-8

def test_windows_paths_in_code_and_configs_and_gbk_sources(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\n")
    (tmp_path / "src").mkdir()
    # Saved by Chinese Windows: GBK, with a drive-letter path and a UNC share in string literals.
    (tmp_path / "src" / "train.py").write_bytes(
        'import re\nDATA = "C:\\\\Users\\\\me\\\\data"\nPAT = r"\\d+\\.\\w"\n# 数据在 D:\\\\data\nSHARE = r"\\\\nas\\models"\n'.encode("gbk"))
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "train.yaml").write_text("data_dir: D:\\datasets\\coco\nurl: https://example.com/x\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text('P = "C:\\\\ignored"\n')  # an environment, not the project
    assert main(["check", "--project", str(tmp_path), "--from", A10_550, "--no-network", "-f", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    lint = document["project"]["lint"]
    in_code = sorted(entry["line"] for entry in lint if entry["problem"] == "windows_path_in_code")
    assert in_code == ["1: D:\\datasets\\coco", "2: C:\\Users\\me\\data", "5: \\\\nas\\models"]  # not the regex, not the comment
    not_utf8 = [entry for entry in lint if entry["problem"] == "not_utf8"]
    assert not_utf8 == [{"file": "src/train.py", "line": "", "problem": "not_utf8", "encoding": "GB18030"}]
    finding = [f for f in document["machine"] if "not UTF-8" in f["title"]][0]
    assert finding["fix"]["commands"][0].startswith("iconv -f GB18030 -t UTF-8 src/train.py")


@pytest.mark.parametrize("data, guess", [("plain ascii".encode(), None), ("中文".encode("utf-8"), None),
                                         ("中文注释".encode("gbk"), "GB18030"), (b"caf\xe9", "CP1252")])
def test_encoding_guess(data, guess):
    from gpuvet.ingest.project import encoding_guess

    assert encoding_guess(data) == guess


# --- lockfiles: the builds uv.lock / pixi.lock pin are what gets checked (real locks, trimmed; PROVENANCE.md)

def test_a_uv_lock_pins_the_build_its_index_served(capsys, tmp_path):
    import shutil

    shutil.copytree(PROJECTS / "uv-lock-cu118", tmp_path / "project")
    code = main(["check", "--project", str(tmp_path / "project"), "--from", A10, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    # pyproject.toml asks for torch>=2.7.1 (cu118 index on Linux); the lock resolved it to 2.7.1+cu118, the build
    # checked; the macOS entry (PyPI's 2.7.1, darwin markers) and torch-cluster (not a framework) are not
    assert document["project"]["targets"] == ["torch==2.7.1+cu118"]
    assert "uv.lock" in document["project"]["files"]
    torch = document["targets"][0]
    assert torch["target"] == "torch==2.7.1+cu118"
    driver = next(link for link in torch["chain"] if link["layer"] == "driver")
    assert driver["verdict"] == "pass" and "11.8" in driver["expected"]
    # the cu118 build's arch list comes from PyTorch's build files (sm_37..sm_90: the A10's sm_86 among them)
    assert code == 0 and torch["verdict"] in ("pass", "warn")


def test_a_pixi_lock_pins_conda_forges_cuda_build(capsys, tmp_path):
    import shutil

    shutil.copytree(PROJECTS / "pixi-lock-pytorch-gpu", tmp_path / "project")
    t4 = str(FIXTURES / "nvidia-smi" / "tesla-t4-1gpu_drv510.47.03.txt")  # R510: CUDA 11.6, below the 12.x floor
    code = main(["check", "--project", str(tmp_path / "project"), "--from", t4, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    # linux-64 locks pytorch 2.8.0 cuda129_... (win-64's cuda128 and osx-arm64's cpu build are not the server's):
    # conda-forge's own CUDA 12.9 build, whose driver floor is judged and whose arch list (conda-forge's
    # TORCH_CUDA_ARCH_LIST, not the PyPI wheel's) is said to be unknown
    assert document["project"]["targets"] == ["torch==2.8.0+cu129.conda"]
    torch = document["targets"][0]
    assert torch["verdict"] == "fail" and "driver_too_old" in [f["code"] for f in torch["findings"]]
    assert code == 1
    code = main(["check", "--project", str(tmp_path / "project"), "--from", A10, "--no-network", "-f", "json"])
    torch = json.loads(capsys.readouterr().out)["targets"][0]
    assert [link["verdict"] for link in torch["chain"] if link["layer"] == "driver"] == ["pass"]
    assert torch["verdict"] == "unknown" and code == 3
    unknown = next(f for f in torch["findings"] if f["code"] == "arch_list_unknown")
    assert unknown["fix"]["commands"] == ["gpuvet archs $(pixi run python -c 'import sys; print(sys.prefix)')/lib/libtorch_cuda.so"]


@pytest.mark.parametrize("project, lock, named", [
    # uv's conflicting extras (cpu / cu126): neither build is what a plain `uv sync` installs
    ("uv-lock-conflicting-extras", "uv.lock", {
        "torch==2.6.0+cpu": "installed by uv sync --extra cpu (the lock has 2 builds of torch for Linux): check it "
                            "with gpuvet check torch==2.6.0+cpu",
        "torch==2.6.0+cu126": "installed by uv sync --extra cu126 (the lock has 2 builds of torch for Linux): check "
                              "it with gpuvet check torch==2.6.0+cu126"}),
    # a pixi.lock (format 5) whose default environment has no torch, one environment per Python/CUDA pair
    ("pixi-lock-environments", "pixi.lock", {
        "torch==1.11.0+cu115.conda": "not in the default environment: installed by pixi install -e py310cu115 (also in "
                                     "py39cu115); check it with gpuvet check torch==1.11.0+cu115.conda",
        "torch==2.3.0+cu121.conda": "not in the default environment: installed by pixi install -e py310cu121; check it "
                                    "with gpuvet check torch==2.3.0+cu121.conda",
        "torch==1.7.1+cu101.conda": "not in the default environment: installed by pixi install -e py38cu101; check it "
                                    "with gpuvet check torch==1.7.1+cu101.conda"}),
])
def test_builds_another_extra_or_environment_installs_are_named_with_their_option(project, lock, named, capsys):
    """Real locks holding one build per choice made at install time: none is assumed; each is named once, with the
    option that installs it and the check line for it."""
    code = main(["check", "--project", str(PROJECTS / project), "--from", A10, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["project"]["targets"] == [] and code == 0
    assert {s["line"]: s["why"] for s in document["project"]["skipped"] if s["file"] == lock} == named


def test_what_a_project_did_not_read_is_in_the_text_report_and_a_named_conda_build_is_checked(capsys):
    assert main(["check", "--project", str(PROJECTS / "uv-lock-conflicting-extras"), "--from", A10, "--no-network"]) == 0
    out = capsys.readouterr().out
    assert "not read: uv.lock: torch==2.6.0+cpu (installed by uv sync --extra cpu" in out
    # a line whose marker is false on Linux is not an unknown, and is not shown
    assert main(["check", "--project", str(PROJECTS / "vllm-cpu"), "--from", A10, "--no-network"]) in (0, 1, 3)
    out = capsys.readouterr().out
    assert "not read: requirements/cpu.txt: -r common.txt (the included file is not there)" in out
    assert "marker is false" not in out
    # the check line named for a pixi environment: the pytorch channel's CUDA 12.1 build, its driver floor judged on
    # this driver (550: CUDA 12.4), its arch list unknown
    code = main(["check", "torch==2.3.0+cu121.conda", "--from", A10, "--no-network", "-f", "json"])
    torch = json.loads(capsys.readouterr().out)["targets"][0]
    assert [link["verdict"] for link in torch["chain"] if link["layer"] == "driver"] == ["pass"]
    assert torch["verdict"] == "unknown" and code == 3


@pytest.mark.parametrize("name, text, message", [
    ("uv.lock", "version = 1\n[[package]\nname = \"torch\"\n", "not valid TOML"),
    ("pixi.lock", "version: 6\nenvironments: [default:\n  - {conda: x\n", "not valid YAML"),
])
def test_a_lockfile_that_does_not_parse_is_one_line(tmp_path, capsys, name, text, message):
    (tmp_path / name).write_text(text)
    assert main(["check", "--project", str(tmp_path), "--from", A10, "--no-network"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and name in err and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2  # the error line, and at most its hint


def test_lockfile_entries_gpuvet_cannot_read_are_named_in_the_report(tmp_path, capsys):
    (tmp_path / "uv.lock").write_text(
        'version = 1\n[[package]]\nname = "torch"\nversion = "2.5.0"\nsource = { git = "https://github.com/pytorch/pytorch" }\n'
        '[[package]]\nversion = "1"\n')
    (tmp_path / "pixi.lock").write_text("version: 6\nenvironments:\n  default:\n    packages:\n      linux-64:\n"
                                        "      - conda: https://registry.invalid/conda-forge/linux-64/tensorflow-2.17.0-cuda120py312h02ad488_203.conda\n")
    code = main(["check", "--project", str(tmp_path), "--from", A10, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    skipped = {(s["file"], s["line"]) for s in document["project"]["skipped"]}
    assert {("uv.lock", "torch 2.5.0"), ("uv.lock", "[[package]] #2"),
            ("pixi.lock", "tensorflow 2.17.0 cuda120py312h02ad488_203 (conda-forge)")} <= skipped
    assert document["project"]["targets"] == [] and code == 0


def test_a_dataloader_that_would_use_cuda_in_forked_workers_is_a_warning_with_the_fix(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\n")
    (tmp_path / "data.py").write_text("import torch\nfrom torch.utils.data import Dataset\n\n\nclass Frames(Dataset):\n"
                                      "    def __getitem__(self, index):\n        return torch.load(index).cuda()\n")
    (tmp_path / "train.py").write_text("from torch.utils.data import DataLoader\nfrom data import Frames\n\n"
                                       "if __name__ == '__main__':\n    loader = DataLoader(Frames(), batch_size=8, num_workers=4)\n")
    code = main(["check", "--project", str(tmp_path), "--from", A10, "--no-network", "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["project"]["lint"] == [{"file": "train.py", "problem": "dataloader_fork", "line":
        "5: DataLoader(num_workers=4) over Frames, which puts data on the GPU: .cuda() in __getitem__ (data.py:7)"}]
    finding = next(f for f in document["machine"] if "DataLoader" in f["title"])
    assert finding["code"] == "platform_unsupported" and finding["severity"] == "warn"
    assert "Cannot re-initialize CUDA in forked subprocess" in finding["detail"]
    assert 'multiprocessing_context="spawn"' in finding["fix"]["summary"]
    assert "https://pytorch.org/docs/stable/notes/multiprocessing.html#cuda-in-multiprocessing" in finding["sources"]
    assert code == 0 and document["verdict"] == "warn"


@pytest.mark.parametrize("target, cuda", [("torch==2.8.0+cu129.conda", "12.9"), ("torch==2.1.0+cu118.conda", "11.8"),
                                          ("torch==2.8.0+cpu.conda", None)])
def test_a_conda_build_is_judged_for_its_cuda_with_its_archs_unknown(target, cuda):
    """A conda build (``+cu129.conda``): the CUDA version is the build string's; the arch lists, Python range, glibc
    floor, cuDNN and NCCL are the conda environment's own, so none of PyPI's wheel is borrowed."""
    from gpuvet.checks.resolve import resolve
    from gpuvet.checks.targets import parse_target
    from gpuvet.kb import load
    from gpuvet.snapshot import SnapshotView, new_snapshot

    candidate = resolve(SnapshotView(new_snapshot("stated")), parse_target(target), load()).candidate
    assert candidate is not None and candidate.variant.cuda == cuda
    assert (candidate.variant.sass, candidate.variant.ptx, candidate.variant.cudnn, candidate.variant.nccl) == ((), (), None, None)
    assert candidate.release.python == "" and candidate.release.glibc_min is None
    pypi = load().framework("torch").release(candidate.release.version)
    assert pypi.glibc_min is not None and pypi.python  # the shipped record itself is untouched
    assert resolve(SnapshotView(new_snapshot("stated")), parse_target("torch==2.8.0+rocm6.3x.conda"), load()).candidate is None


def test_a_lock_replaces_its_own_manifests_range_and_leaves_other_install_paths(tmp_path):
    """uv.lock resolves pyproject.toml: its pin replaces the range there; a requirements.txt (another way to install,
    pip's) keeps its own target."""
    from gpuvet.sources.project import read_project

    (tmp_path / "requirements.txt").write_text("torch==2.1.2\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\ndependencies = ["torch>=2.5"]\n')
    (tmp_path / "uv.lock").write_text('version = 1\n[[package]]\nname = "torch"\nversion = "2.5.1+cu124"\n'
                                      'source = { registry = "https://download.pytorch.org/whl/cu124" }\n')
    declared = read_project(str(tmp_path))
    assert declared["targets"] == ["torch==2.1.2", "torch==2.5.1+cu124"]
    assert declared["files"] == ["requirements.txt", "pyproject.toml", "uv.lock"]

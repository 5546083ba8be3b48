"""gpuvet capture keeps the CUDA archs of each distribution's binaries, and gpuvet replay judges them on the GPU
there: a real nvcc-built library (SASS sm_80, PTX compute_86: ``libplain.so`` of conftest.BUILDS) inside a fake
torch distribution (its dist-info RECORD lists it) in a temporary site dir. No network."""

import json
import shutil
from pathlib import Path

import pytest

from gpuvet.checks.replay import replay
from gpuvet.cli import main
from gpuvet.kb import load
from gpuvet.probe.binaries import find_cuda_binaries
from gpuvet.sources.capture import distribution_homes, with_cuda_archs
from tests.snapshots import gpu, snapshot

from .conftest import BUILDS

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"

SASS, PTX = BUILDS["libplain.so"][2], BUILDS["libplain.so"][3]  # ["sm_80"], ["compute_86"]
# its code units as the capture keeps them: nvcc's device-link unit (the cubins, no kernels) and the kernel's own,
# whose PTX is written by this machine's nvcc 13.0 (PTX ISA 9.0)
UNITS = [{"count": 1, "sass": SASS, "ptx": []}, {"count": 1, "sass": SASS, "ptx": PTX, "isa": {PTX[0]: "9.0"}}]


@pytest.fixture()
def site(tmp_path, cuda_builds):
    """A site dir holding torch 2.5.1+cu124 whose libtorch_cuda.so is the nvcc build (a custom build of torch
    for Ampere only)."""
    folder = tmp_path / "site"
    lib = folder / "torch" / "lib"
    lib.mkdir(parents=True)
    shutil.copy(str(cuda_builds["libplain.so"]), str(lib / "libtorch_cuda.so"))
    (folder / "torch" / "__init__.py").write_text("")
    info = folder / "torch-2.5.1+cu124.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\n\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("torch/__init__.py,,\ntorch/lib/libtorch_cuda.so,,\n"
                                 "torch-2.5.1+cu124.dist-info/METADATA,,\n")
    return folder


def _machine(name, cc, driver="535.161.07", cuda="12.2"):
    return snapshot(driver=driver, cuda_max=cuda, gpus=[gpu(name, cc)], probed=False, source="nvidia-smi")


def _capture(site):
    lock = [{"name": "torch", "version": "2.5.1+cu124", "installer": "pip", "source": None},
            {"name": "packaging", "version": "24.0", "installer": "pip", "source": None}]
    return {"kind": "capture", "lock": with_cuda_archs(lock, find_cuda_binaries([str(site)])),
            "targets": ["torch==2.5.1+cu124"], "snapshot": _machine("NVIDIA A100-SXM4-80GB", "8.0")}


def test_capture_keeps_each_distributions_archs(site):
    lock = {entry["name"]: entry for entry in _capture(site)["lock"]}
    assert lock["torch"]["cuda_archs"] == [{"file": "libtorch_cuda.so", "sass": SASS, "ptx": PTX, "units": UNITS}]
    assert "cuda_archs" not in lock["packaging"]


def test_a_shadowed_copy_lends_no_archs_to_the_imported_one(site, tmp_path, monkeypatch):
    """Two torch distributions on sys.path: the lock names the first, and only its libraries are its archs."""
    shadowed = tmp_path / "shadowed"
    shutil.copytree(str(site), str(shadowed))
    (shadowed / "torch" / "lib" / "libtorch_cuda_extra.so").write_bytes((site / "torch" / "lib" / "libtorch_cuda.so").read_bytes())
    with (shadowed / "torch-2.5.1+cu124.dist-info" / "RECORD").open("a") as record:
        record.write("torch/lib/libtorch_cuda_extra.so,,\n")
    monkeypatch.syspath_prepend(str(shadowed))
    monkeypatch.syspath_prepend(str(site))
    homes = distribution_homes()
    assert homes["torch"] == str(site.resolve())
    binaries = find_cuda_binaries([str(site), str(shadowed)])
    assert sorted(Path(b["path"]).name for b in binaries) == ["libtorch_cuda.so", "libtorch_cuda.so",
                                                                "libtorch_cuda_extra.so"]
    lock = [{"name": "torch", "version": "2.5.1+cu124", "installer": "pip", "source": None}]
    (torch,) = with_cuda_archs(lock, binaries, homes)
    assert [entry["file"] for entry in torch["cuda_archs"]] == ["libtorch_cuda.so"]


def test_replay_on_a_gpu_the_build_cannot_reach_names_the_build_that_does(site):
    kb = load()
    # GTX 1050 Ti, compute capability 6.1: no SASS sm_6x and PTX compute_86 is newer than the GPU
    report, summary = replay(_capture(site), _machine("NVIDIA GeForce GTX 1050 Ti", "6.1"), kb)
    gap = [d for d in summary["differences"] if d["fact"] == "cuda_archs torch"]
    assert gap and "sm_80" in gap[0]["captured"] and "6.1" in gap[0]["here"] and summary["drift"] is True
    step = [s for s in summary["plan"] if s["target"] == "torch==2.5.1+cu124"][0]
    assert step["archs"] == {"gpu": "NVIDIA GeForce GTX 1050 Ti", "cc": "6.1", "carried": " ".join(SASS + PTX)}
    alternative = step["alternative"]
    assert alternative and alternative["version"].startswith("2.5.1")
    # the build the plan names reaches sm_61 by the knowledge base's arch lists (the one compatibility model)
    from gpuvet.kb.compat import match_archs

    variant = kb.framework("torch").release("2.5.1").variant(alternative["build"].split("(")[1].rstrip(")"))
    assert match_archs("6.1", variant.sass, variant.ptx).runs


def test_replay_on_a_gpu_the_build_covers_is_no_arch_difference(site):
    # A10, compute capability 8.6: SASS sm_80 runs there
    _report, summary = replay(_capture(site), _machine("NVIDIA A10", "8.6"), load())
    assert not [d for d in summary["differences"] if d["fact"].startswith("cuda_archs")]
    assert not [s for s in summary["plan"] if s["target"] == "torch==2.5.1+cu124"]


def test_capture_and_replay_end_to_end(site, tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(site))
    path = tmp_path / "env.json"
    assert main(["capture", "-o", str(path)]) == 0
    document = json.loads(path.read_text())
    torch = [e for e in document["lock"] if e["name"] == "torch"][0]
    assert torch["cuda_archs"] == [{"file": "libtorch_cuda.so", "sass": SASS, "ptx": PTX, "units": UNITS}]
    smi = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
              / "gtx-1050ti-1gpu_drv535.161.07.txt")
    assert main(["replay", str(path), "--from", smi, "-f", "json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert "cuda_archs torch" in {d["fact"] for d in replayed["differences"]}
    assert any(s["target"] == "torch==2.5.1+cu124" and s["alternative"] for s in replayed["plan"])


# The captured build's own binaries decide the target's verdict, not only the arch-gap line: libtorch_cuda.so of the
# fake torch 2.5.1+cu124 (CUDA 12.4) carries SASS sm_80 and PTX compute_86, where the knowledge base's cu124 wheel
# carries sm_50..sm_90 (it would pass everywhere below). Each row is a real pasted nvidia-smi (tests/fixtures).
# Rules: a cubin runs on the same major with an equal or higher minor, PTX is JIT-compiled for an equal or newer
# capability (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility, #ptx-compatibility),
# but only by a driver at least as new as the toolkit that wrote it -- the toolkit its PTX ISA names (9.0: CUDA 13.0, R580) -- minor-version
# compatibility not covering PTX (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html;
# https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html, Table 3).
REPLAY_CASES = [
    # compute capability 6.1: no sm_6x cubin, compute_86 is newer than the GPU
    ("gtx-1050ti-1gpu_drv535.161.07.txt", "fail", "arch_not_in_build"),
    # compute capability 9.0: no sm_9x cubin; the compute_86 PTX is ISA 9.0 (CUDA 13.0 wrote it, whatever the build's
    # CUDA 12.4 says): a driver of CUDA 13.0 (R580) is needed to JIT-compile it, this is R525 ...
    ("h800-8gpu_drv525.105.17_training.txt", "fail", "driver_too_old"),
    # ... and R550 (CUDA 12.4) cannot either: the capture's own PTX ISA decides, not the build's CUDA
    ("h100-nvl-2gpu_drv550.54.14.txt", "fail", "driver_too_old"),
    # compute capability 8.6: the sm_80 cubin runs
    ("a10-1gpu_drv550.90.12.txt", "pass", None),
]


@pytest.fixture()
def capture_json(site, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(site))
    path = tmp_path / "env.json"
    assert main(["capture", "-o", str(path)]) == 0
    return path


@pytest.mark.parametrize("machine, verdict, code", REPLAY_CASES)
def test_replay_target_verdict_is_judged_on_the_captured_binaries(capture_json, capsys, machine, verdict, code):
    smi = str(SMI / machine)
    main(["replay", str(capture_json), "--from", smi, "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    target = [t for t in document["targets"] if t["target"] == "torch==2.5.1+cu124"][0]
    assert target["verdict"] == verdict
    gap = [d for d in document["differences"] if d["fact"] == "cuda_archs torch"]
    assert bool(gap) == (verdict == "fail")  # the per-target line and the arch-gap line say the same
    codes = {f["code"]: f for f in target["findings"]}
    if code is not None:
        assert code in codes
    if verdict == "fail":
        assert "libtorch_cuda.so" in codes[code]["detail"]  # the file without code for the GPU is named
        assert [s["verdict"] for s in document["plan"] if s["target"] == "torch==2.5.1+cu124"] == ["fail"]
    else:
        assert not {"arch_not_in_build", "driver_too_old"} & set(codes)


@pytest.mark.parametrize("lang, verdict_line, title", [
    ("en", "FAIL  torch==2.5.1+cu124", "has no kernels for NVIDIA GeForce GTX 1050 Ti"),
    ("zh", "FAIL  torch==2.5.1+cu124", "没有适用于 NVIDIA GeForce GTX 1050 Ti"),
])
def test_replay_text_says_fail_for_a_target_the_captured_archs_miss(capture_json, capsys, lang, verdict_line, title):
    code = main(["replay", str(capture_json), "--from", str(SMI / "gtx-1050ti-1gpu_drv535.161.07.txt"), "--lang", lang])
    out = capsys.readouterr().out
    assert code == 1
    line = [row for row in out.splitlines() if row.strip().endswith(("torch==2.5.1+cu124 -> torch==2.5.1 (cu124)",))][0]
    assert verdict_line in line and "PASS" not in line
    assert title in out and "libtorch_cuda.so" in out

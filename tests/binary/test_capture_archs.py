"""gpuvet capture keeps the CUDA archs of each distribution's binaries, and gpuvet replay judges them on the GPU
there: a real nvcc-built library (SASS sm_80, PTX compute_86: ``libplain.so`` of conftest.BUILDS) inside a fake
torch distribution (its dist-info RECORD lists it) in a temporary site dir. No network."""

import json
import shutil

import pytest

from gpuvet.checks.replay import replay
from gpuvet.cli import main
from gpuvet.kb import load
from gpuvet.probe.binaries import find_cuda_binaries
from gpuvet.sources.capture import with_cuda_archs
from tests.snapshots import gpu, snapshot

from .conftest import BUILDS

SASS, PTX = BUILDS["libplain.so"][2], BUILDS["libplain.so"][3]  # ["sm_80"], ["compute_86"]


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
    assert lock["torch"]["cuda_archs"] == [{"file": "libtorch_cuda.so", "sass": SASS, "ptx": PTX}]
    assert "cuda_archs" not in lock["packaging"]


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
    assert torch["cuda_archs"] == [{"file": "libtorch_cuda.so", "sass": SASS, "ptx": PTX}]
    smi = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
              / "gtx-1050ti-1gpu_drv535.161.07.txt")
    assert main(["replay", str(path), "--from", smi, "-f", "json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert "cuda_archs torch" in {d["fact"] for d in replayed["differences"]}
    assert any(s["target"] == "torch==2.5.1+cu124" and s["alternative"] for s in replayed["plan"])

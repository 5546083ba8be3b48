"""``gpuvet recommend``: newest fitting builds first, then the smallest change that buys a newer one."""

from __future__ import annotations

import json

from snapshots import gpu, snapshot

from gpuvet.cli import main
from gpuvet.kb import load
from gpuvet.recommend import recommend
from gpuvet.snapshot import SnapshotView

T4 = gpu("Tesla T4", "7.5", memory_mib=15360)


def test_old_driver_gets_the_newest_cuda_11_build_first():
    kb = load()
    view = SnapshotView(snapshot(driver="470.182.03", gpus=[T4], python="3.10.12"))
    picks = recommend(view, kb.framework("torch"), kb)
    first = picks[0]
    assert first.needs == () and first.verdict == "pass"
    # 470 runs CUDA 11.x through minor-version compatibility (>= 450.80.02), never CUDA 12 (>= 525.60.13).
    assert first.candidate.variant.cuda.startswith("11.")
    newer = [p for p in picks if p.needs]
    assert newer and all(any("driver >=" in n for n in p.needs) for p in newer)
    assert all(p.candidate.release.version != first.candidate.release.version for p in newer)


def test_nothing_fits_on_a_gpu_no_build_supports():
    kb = load()
    kepler = gpu("GRID K520", "3.0", memory_mib=4096)
    view = SnapshotView(snapshot(driver="470.182.03", gpus=[kepler], python="3.10.12"))
    assert recommend(view, kb.framework("torch"), kb) == []


def test_cli_planning_from_stated_gpu_and_driver(capsys):
    code = main(["recommend", "torch", "--gpu", "H100", "--driver", "535.104.05", "--python", "3.11", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    first = document["recommendations"][0]
    assert first["verdict"] == "pass" and first["needs"] == []
    assert first["install"][0].startswith("pip install torch==")
    # A 535 driver supports CUDA 12.2: the first pick is a CUDA 12 build, never CUDA 13.
    assert first["cuda"].startswith("12.")


def test_unknown_framework_and_gpu_are_usage_errors(capsys):
    assert main(["recommend", "notaframework", "--gpu", "H100", "--driver", "535.104.05"]) == 2
    assert main(["recommend", "torch", "--gpu", "Voodoo5", "--driver", "535.104.05"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 2 and "Traceback" not in err

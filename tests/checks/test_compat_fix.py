"""The driver-too-old fix offers NVIDIA's forward-compatibility package only where it can work.

NVIDIA, https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html: forward compatibility applies
to data-center GPUs only, and "the CUDA driver's compatibility package only supports particular drivers": 470.57+
(R470), 525.85+ (R525), 535.86+ (R535) or 550.54+ (R550), as NVIDIA's container release notes list them
(https://docs.nvidia.com/deeplearning/frameworks/sglang-release-notes/rel-25-10.html). A data-center GPU on another
branch (an A100 on R450) gets the driver move alone; a GeForce never gets cuda-compat.
"""

import pytest

from gpuvet.checks import run_checks
from gpuvet.ingest import detect_kind, parse
from gpuvet.report.findings import check_to_dict

FIXTURES = "tests/fixtures/nvidia-smi/"


def _fix_summaries(paste: str, target: str):
    with open(FIXTURES + paste) as handle:
        text = handle.read()
    document = check_to_dict(run_checks(parse(detect_kind(text), text, paste), [target]), "en")
    return [f["fix"]["summary"] for t in document["targets"] for f in t["findings"]
            if f["code"] == "driver_too_old" and f.get("fix")]


@pytest.mark.parametrize("paste,target,offers_compat", [
    ("a100-sxm4-40gb-1gpu_drv450.80.02_mig-disabled.txt", "torch==2.5.1+cu124", False),  # R450: no cuda-compat branch
    ("tesla-t4-1gpu_drv535.86.10.txt", "torch==2.9.0+cu130", True),  # R535 >= 535.86: a listed branch
    ("h100-nvl-2gpu_drv550.54.14.txt", "torch==2.9.0+cu130", True),  # R550 >= 550.54
])
def test_cuda_compat_is_offered_only_on_a_branch_it_serves(paste, target, offers_compat):
    summaries = _fix_summaries(paste, target)
    assert summaries, "the driver is too old for %s, so there is a fix" % target
    assert all(("cuda-compat" in s) == offers_compat for s in summaries), summaries

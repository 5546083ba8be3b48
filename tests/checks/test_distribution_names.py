"""The distribution names people still type (issue #30): what each name gives per release is data, the
``[[distribution_note]]`` records of the framework files, read by one rule (gpuvet.checks.resolve.distribution_named).

Each row: (pasted nvidia-smi, target) -> verdict, exit code, the failing finding codes, the command the fix must carry,
the build the target resolves to, and the source of the expectation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli import main

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
H100 = SMI / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"
T4 = SMI / "tesla-t4-1gpu_drv510.47.03.txt"

# tensorflow-gpu 2.12.0 on PyPI is an sdist whose setup.py raises on install ("The "tensorflow-gpu" package has been
# removed! Please install "tensorflow" instead."; sdist sha256 51cc5649..., read 2026-12-05); 2.11.0 is the last
# tensorflow-gpu with wheels, and its README says tensorflow and tensorflow-gpu were the same build since 2.1.
TF_GPU_STUB = "PyPI: tensorflow-gpu 2.12.0 sdist (setup.py, README.md)"
# Paddle's install guide: the CPU build is `paddlepaddle`, the GPU builds `paddlepaddle-gpu`.
PADDLE_DOCS = "https://github.com/PaddlePaddle/docs/blob/release/2.6/docs/install/pip/linux-pip.md"

ROWS = [
    # smi, target, verdict, exit, failing codes, a fix command, resolved, source
    (H100, "tensorflow-gpu==2.12.0", "fail", 1, {"distribution_removed"}, 'pip install "tensorflow[and-cuda]==2.12.0"',
     "tensorflow==2.12.0 (cuda11)", TF_GPU_STUB),
    (H100, "tensorflow-gpu", "fail", 1, {"distribution_removed"}, 'pip install "tensorflow[and-cuda]==2.21.0"',
     "tensorflow==2.21.0 (cuda12)", TF_GPU_STUB),
    (T4, "tensorflow-gpu==2.10.0", "pass", 0, set(), None, "tensorflow==2.10.0 (cuda11)", TF_GPU_STUB),
    # its CUDA build is no fix here: 2.6.1's GPU wheel has no sm_90 code either (the next row), so none is printed
    (H100, "paddlepaddle==2.6.1", "fail", 1, {"cpu_only_build"}, None,
     "paddlepaddle==2.6.1 (cpu)", PADDLE_DOCS),
    # the GPU distribution itself is judged as its CUDA build (2.6.1 has no sm_90 code: arch_not_in_build)
    (H100, "paddlepaddle-gpu==2.6.1", "fail", 1, {"arch_not_in_build"}, None, "paddlepaddle==2.6.1 (cu118)", PADDLE_DOCS),
    # tensorflow itself is unchanged
    (H100, "tensorflow==2.21.0", "pass", 0, set(), None, "tensorflow==2.21.0 (cuda12)", TF_GPU_STUB),
]


@pytest.mark.parametrize("smi, target, verdict, code, fails, command, resolved, source", ROWS,
                         ids=[row[1] for row in ROWS])
def test_a_distribution_name_is_judged_as_what_it_installs(capsys, smi, target, verdict, code, fails, command,
                                                          resolved, source):
    assert main(["check", target, "--from", str(smi), "--no-network", "-f", "json"]) == code, source
    (result,) = json.loads(capsys.readouterr().out)["targets"]
    failing = {f["code"] for f in result["findings"] if f["severity"] == "fail"}
    assert (result["verdict"], failing, result["resolved"]) == (verdict, fails, resolved), (source, result["findings"])
    if command is not None:
        commands = [c for f in result["findings"] if f["severity"] == "fail" for c in (f.get("fix") or {}).get("commands", ())]
        assert any(command in c for c in commands), (source, commands)


@pytest.mark.parametrize("lang, says", [
    ("en", ("installs nothing", "retired after 2.11.0", 'pip install "tensorflow[and-cuda]==2.12.0"')),
    ("zh", ("什么也装不上", "2.11.0 之后就停用了", 'pip install "tensorflow[and-cuda]==2.12.0"')),
])
def test_the_removed_name_is_said_in_both_languages(capsys, lang, says):
    assert main(["check", "tensorflow-gpu==2.12.0", "--from", str(H100), "--no-network", "--lang", lang]) == 1
    out = capsys.readouterr().out
    assert all(part in out for part in says), out

"""A library caller of ``run_checks`` gets the report ``gpuvet check`` prints: for real pasted machines and each
option the command has (an installer, a rental platform, a project's files, image targets), the JSON the report
renderer writes from ``run_checks(snapshot, CheckOptions(...))`` is the command's ``--format json`` output, byte for
byte once the times of day are taken out."""

import re
from pathlib import Path

import pytest

from gpuvet.checks import CheckOptions, run_checks
from gpuvet.cli import main
from gpuvet.ingest import read_input
from gpuvet.report.check import RenderOptions, render_check
from gpuvet.snapshot import SnapshotView, merge_all
from gpuvet.sources.project import read_project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
A10 = [str(FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")]
H100_VLLM = [str(FIXTURES / "vllm-collect-env" / "h100_vllm0.8.4_cu124_drv550.127.txt")]
T4_TORCH = [str(FIXTURES / "nvidia-smi" / "tesla-t4-1gpu_drv510.47.03.txt"),
            str(FIXTURES / "pip-freeze" / "torch2.13.0-cpu_local-venv.txt")]
KOHYA = FIXTURES / "projects" / "kohya-ss"
DETECTRON = FIXTURES / "projects" / "detectron2-docker"

# an ISO date-time (a snapshot's reading time, the knowledge base's age) is the only thing two runs may differ in
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")

CASES = [
    # (machine pasted, command-line options, the same as CheckOptions fields)
    (A10, ["torch==2.4.1"], {"targets": ("torch==2.4.1",)}),
    (A10, [], {}),
    (A10, ["torch==2.7.0", "--installer", "uv"], {"targets": ("torch==2.7.0",), "installer": "uv"}),
    (T4_TORCH, ["torch==2.5.1", "--installer", "conda"], {"targets": ("torch==2.5.1",), "installer": "conda"}),
    (A10, ["vllm", "--platform", "autodl"], {"targets": ("vllm",), "platform": "autodl"}),
    (H100_VLLM, ["--platform", "runpod", "--installer", "pixi"], {"platform": "runpod", "installer": "pixi"}),
    (A10, ["--project", str(KOHYA)], {"project": KOHYA}),
    (T4_TORCH, ["xformers", "--project", str(DETECTRON), "--installer", "uv"],
     {"targets": ("xformers",), "project": DETECTRON, "installer": "uv"}),
    (A10, ["image:pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"],
     {"targets": ("image:pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime",)}),
    (H100_VLLM, ["image:nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04", "torch==2.1.2"],
     {"targets": ("image:nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04", "torch==2.1.2")}),
]


def _command_json(files, argv, capsys):
    line = ["check", *argv, "--no-network", "-f", "json"]
    for path in files:
        line += ["--from", path]
    code = main(line)
    captured = capsys.readouterr()
    assert captured.err == "" and code in (0, 1, 3), captured.err
    return captured.out


def _library_json(files, fields):
    snapshot = merge_all([read_input(path) for path in files])
    if "project" in fields:  # the caller reads the project's files, as the command does
        fields = dict(fields, project=read_project(str(fields["project"]), SnapshotView(snapshot).python_version))
    report = run_checks(snapshot, CheckOptions(**fields))
    return render_check(report, RenderOptions(format="json", lang="en"))


@pytest.mark.parametrize("files, argv, fields", CASES, ids=[" ".join(argv) or "installed" for _, argv, _ in CASES])
def test_run_checks_gives_the_report_check_prints(files, argv, fields, capsys):
    command = _command_json(files, argv, capsys)
    library = _library_json(files, fields) + "\n"  # what the command writes ends its last line
    assert _TIME.sub("<time>", library) == _TIME.sub("<time>", command)
    if set(fields) - {"targets"}:  # and each option is applied: the report differs from the one of the targets alone
        plain = _library_json(files, {"targets": fields.get("targets", ())}) + "\n"
        assert _TIME.sub("<time>", plain) != _TIME.sub("<time>", command)


def test_a_target_list_is_the_same_check_with_default_options():
    snapshot = merge_all([read_input(path) for path in A10])
    options = RenderOptions(format="json")
    as_list = render_check(run_checks(snapshot, ["torch==2.4.1", "vllm"]), options)
    as_options = render_check(run_checks(snapshot, CheckOptions(targets=("torch==2.4.1", "vllm"))), options)
    assert _TIME.sub("<time>", as_list) == _TIME.sub("<time>", as_options)


def test_the_caller_snapshot_is_left_as_it_was():
    snapshot = merge_all([read_input(path) for path in A10])
    before = repr(snapshot)
    report = run_checks(snapshot, CheckOptions(platform="autodl"))
    assert repr(snapshot) == before
    assert report.snapshot["host"]["platform"]["value"]["name"] == "autodl"

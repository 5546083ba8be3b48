"""check --prolog, as a Slurm prolog runs it: silent and exit 0 on a healthy node; exit 1 and one line on stderr that
names the failure (Slurm's drain reason) on a broken one; a warning or an undecided target never drains a node."""

from pathlib import Path

from gpuvet.cli import main

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"


def test_a_failing_node_is_one_line_and_exit_1(capsys):
    assert main(["check", "--prolog", "torch==2.5.1", "--from", str(SMI / "tesla-t4-1gpu_drv450.51.06.txt")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("gpuvet: drain: Driver 450.51.06 is too old for torch==2.5.1") and "[driver_too_old]" in line


def test_a_healthy_node_is_silent(capsys):
    assert main(["check", "--prolog", "torch==2.1.2", "--from", str(SMI / "a10-1gpu_drv550.90.12.txt")]) == 0
    assert capsys.readouterr() == ("", "")


def test_an_undecided_target_does_not_drain(capsys):
    assert main(["check", "--prolog", "vllm==0.0.1", "--from", str(SMI / "a10-1gpu_drv550.90.12.txt")]) == 0
    assert capsys.readouterr() == ("", "")

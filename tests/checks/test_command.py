"""``gpuvet check`` end to end through ``gpuvet.cli.main``: documents, renderings and exit codes."""

from __future__ import annotations

import json

import pytest
from snapshots import gpu, snapshot

from gpuvet.cli import main

H100 = gpu("NVIDIA H100 80GB HBM3", "9.0")


@pytest.fixture
def write_snapshot(tmp_path):
    def write(snap, name="snap.json"):
        path = tmp_path / name
        path.write_text(json.dumps(snap))
        return str(path)

    return write


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_document_follows_the_contract(capsys, write_snapshot):
    a100 = gpu("NVIDIA A100-SXM4-80GB", "8.0")  # a GPU driver 470 drives: the runtime floor is what fails
    path = write_snapshot(snapshot(driver="470.182.03", cuda_max="11.4", gpus=[a100], python="3.10.12"))
    code, out, _ = run(capsys, "check", "--snapshot", path, "--format", "json", "torch==2.1.2+cu121")
    assert code == 1
    document = json.loads(out)
    assert document["schema_version"] == 1 and document["gpuvet_version"]
    assert set(document["kb"]) == {"version", "updated"}
    assert document["verdict"] == "fail"
    target = document["targets"][0]
    assert target["target"] == "torch==2.1.2+cu121" and target["resolved"] == "torch==2.1.2 (cu121)"
    finding = next(f for f in target["findings"] if f["code"] == "driver_too_old")
    assert set(finding) >= {"code", "severity", "layer", "title", "detail", "expected", "actual", "fix", "sources"}
    assert finding["severity"] == "fail" and finding["layer"] == "driver"
    assert finding["fix"]["summary"] and finding["fix"]["commands"]


def test_exit_codes(capsys, write_snapshot):
    good = write_snapshot(snapshot(driver="535.104.05", gpus=[H100], python="3.10.12"), "good.json")
    assert run(capsys, "check", "--snapshot", good, "torch==2.1.2+cu121")[0] == 0
    assert run(capsys, "check", "--snapshot", good, "torch==2.99.0")[0] == 3
    assert run(capsys, "check", "--snapshot", good, "torch==2.1.2", "torch==2.99.0", "--format", "json")[0] == 3
    bad = write_snapshot(snapshot(driver="470.182.03", gpus=[H100], python="3.10.12"), "bad.json")
    assert run(capsys, "check", "--snapshot", bad, "torch==2.1.2+cu121", "torch==2.99.0")[0] == 1


def test_text_is_plain_when_not_a_terminal_and_chinese_on_request(capsys, write_snapshot):
    path = write_snapshot(snapshot(driver="470.182.03", gpus=[H100], python="3.10.12"))
    _, out, _ = run(capsys, "check", "--snapshot", path, "torch==2.1.2+cu121")
    assert "\x1b[" not in out
    assert "Driver 470.182.03 is too old" in out and "driver >= 525.60.13" in out
    _, out_zh, _ = run(capsys, "check", "--snapshot", path, "--lang", "zh", "torch==2.1.2+cu121")
    assert "驱动 470.182.03 太旧" in out_zh


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["check", "--snapshot", "/nonexistent.json"], "error:"),
        (["check", "torch===="], "error:"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_garbage_snapshot_is_an_input_error(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    code, _, err = run(capsys, "check", "--snapshot", str(path))
    assert code == 2 and err.startswith("error:")


def test_output_file_is_written(capsys, write_snapshot, tmp_path):
    path = write_snapshot(snapshot(driver="535.104.05", gpus=[H100], python="3.10.12"))
    target = tmp_path / "report.json"
    code, out, _ = run(capsys, "check", "--snapshot", path, "--format", "json", "-o", str(target), "torch==2.1.2+cu121")
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["verdict"] == "pass"

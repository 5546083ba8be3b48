"""`gpuvet diagnose` end to end through cli.main: files, stdin, --from with real captured tool output, JSON, errors."""

from __future__ import annotations

import io
import json
import sys

import pytest

from gpuvet.cli import main

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
FLASH = "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"


@pytest.fixture
def log(tmp_path):
    def write(text: str, name: str = "error.log"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def test_text_report_is_plain_when_not_a_terminal(log, capsys):
    code = main(["diagnose", log(NO_KERNEL), "--lang", "en"])
    out = capsys.readouterr().out
    assert code == 1  # a stack cause was found
    assert "arch_not_in_build" in out and "line 1:" in out and "Fix:" in out
    assert "\033[" not in out


def test_json_follows_the_contract(log, capsys):
    assert main(["diagnose", log(NO_KERNEL), "--format", "json", "--snapshot", _snapshot_file(log)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["schema_version"] == 1 and document["gpuvet_version"]
    (first, *_rest) = document["diagnoses"]
    assert set(first) >= {"code", "confidence", "title", "explanation", "evidence", "fix", "sources"}
    assert first["code"] == "arch_not_in_build" and 0 < first["confidence"] <= 1
    assert first["evidence"] == [{"line": 1, "text": NO_KERNEL.strip(), "signature": "no_kernel_image"}]
    assert set(first["fix"]) == {"summary", "commands"}
    assert first["snapshot"][0]["verdict"] == "confirms"  # RTX 5090 + a build up to sm_90


def _snapshot_file(log):
    from gpuvet.probe.facts import found
    from tests.snapshots import gpu, snapshot

    snap = snapshot(driver="570.124.04", cuda_max="12.8", gpus=[gpu("NVIDIA GeForce RTX 5090", "12.0", 32607)],
                    binaries=found([{"package": "torch", "path": "libtorch_cuda.so", "sass": ["sm_80", "sm_90"],
                                     "ptx": [], "error": None}], "elf"))
    return log(json.dumps(snap), "snap.json")


def test_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(FLASH.encode())))
    assert main(["diagnose", "-", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["diagnoses"][0]["code"] == "feature_arch_unsupported"


def test_from_a_real_nvidia_smi_capture_confirms_the_old_gpu(log, fixtures, capsys):
    smi = fixtures / "nvidia-smi" / "v100-sxm2-16gb-8gpu_drv550.127.05.txt"
    assert main(["diagnose", log(FLASH), "--from", str(smi), "--format", "json"]) == 1
    (top,) = json.loads(capsys.readouterr().out)["diagnoses"]
    assert top["code"] == "feature_arch_unsupported"
    assert top["snapshot"][0]["verdict"] == "confirms" and "7.0" in top["snapshot"][0]["text"]


def test_nothing_found_says_so_and_exits_0(log, capsys):
    assert main(["diagnose", log("training finished\n"), "--snapshot", _snapshot_file(log)]) == 0
    assert "No known cause" in capsys.readouterr().out


def test_a_user_bug_alone_exits_0(log, capsys):
    assert main(["diagnose", log("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 9x2)\n"),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnoses"][0]["code"] == "not_a_stack_problem"


@pytest.mark.parametrize("content, message", [(b"", "is empty"), (b"\x7fELF\x00\x01\x02", "looks binary")])
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    assert main(["diagnose", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_missing_file_and_missing_argument_exit_2(capsys):
    assert main(["diagnose", "/nonexistent/error.log"]) == 2
    assert "/nonexistent/error.log does not exist" in capsys.readouterr().err
    assert main(["diagnose"]) == 2
    assert "no log given" in capsys.readouterr().err


def test_secrets_in_the_log_never_reach_the_output(log, capsys):
    text = ("Looking in indexes: https://alice:s3cr3tpw@mirror.example.com/simple\n"
            "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 python train.py\n"
            "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory token=abc123\n"
            "ERROR: No matching distribution found for torch from https://bob:hunter2@mirror.example.com/simple\n")
    main(["diagnose", log(text), "--format", "json"])
    out = capsys.readouterr().out
    for secret in ("s3cr3tpw", "hf_abcdefghijklmnopqrstuvwxyz0123", "abc123", "hunter2"):
        assert secret not in out


def test_markdown_and_chinese(log, capsys):
    main(["diagnose", log(NO_KERNEL), "--format", "markdown", "--lang", "zh"])
    out = capsys.readouterr().out
    assert out.startswith("# ") and "框架或扩展中没有针对此 GPU 计算能力的内核" in out


def test_output_file(log, tmp_path, capsys):
    target = tmp_path / "out.json"
    main(["diagnose", log(NO_KERNEL), "--format", "json", "--output", str(target)])
    assert json.loads(target.read_text())["diagnoses"][0]["code"] == "arch_not_in_build"


def test_redact_host_removes_addresses_and_uuids(log, capsys):
    text = ("node7:1234:1300 [0] NCCL WARN Connect to 10.0.3.17<45123> failed : Connection refused\n"
            "GPU-5c4e0c1e-3b1a-4f0e-9d2a-0123456789ab fell off: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    main(["diagnose", log(text), "--format", "json", "--redact-host"])
    out = capsys.readouterr().out
    assert "10.0.3.17" not in out and "5c4e0c1e" not in out
    assert "health_problem" in out and "nccl_comm_failure" in out


def test_one_paste_of_a_whole_issue_report_is_enough(log, fixtures, capsys):
    env = (fixtures / "torch-collect-env" / "torch2.13.0-cpu_debian12_local-venv.txt").read_text()
    paste = env + "\nTraceback (most recent call last):\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert main(["diagnose", log(paste), "--lang", "en"]) == 1
    out = capsys.readouterr().out
    assert "+ torch 2.13.0+cpu is a CPU-only build" in out
    assert "live probe" not in out  # judged against the paste's own environment, not this machine

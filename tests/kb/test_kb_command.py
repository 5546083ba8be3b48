import json

from gpuvet.cli import main
from gpuvet.kb import load


def test_kb_list_json(capsys):
    assert main(["kb", "list", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1 and doc["kb"]["version"] == load().version
    names = {row["name"]: row["records"] for row in doc["files"]}
    assert names["torch"] > 32 and names["gpus"] > 40


def test_kb_show_text(capsys):
    assert main(["kb", "show", "cuda_driver"]) == 0
    out = capsys.readouterr().out
    assert "family[12]" in out and "525.60.13" in out


def test_kb_show_unknown_name_is_one_line_error(capsys):
    assert main(["kb", "show", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and "torch" in err


def test_kb_sources_json(capsys):
    assert main(["kb", "sources", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any(s["source"].startswith("https://docs.nvidia.com/deploy/cuda-compatibility") for s in doc["sources"])


def test_kb_list_chinese(capsys):
    assert main(["kb", "list", "--lang", "zh"]) == 0
    assert "知识库" in capsys.readouterr().out


def test_show_a_framework_reads_as_releases_with_their_builds_and_sources(capsys):
    assert main(["kb", "show", "torch", "2.1.2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("PyTorch (torch): ")
    assert "2.1.2  ·  Python >=3.8,<3.12  ·  plain pip install: cu121" in out
    assert "CUDA 12.1, cuDNN 8.9.2.26, NCCL 2.18.1, SASS " in out
    assert "$ pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118" in out
    assert "Sources: " in out and "..." not in out  # nothing cut mid-word
    assert "2.3.0" not in out  # only the release asked for


def test_show_takes_a_distribution_name_and_says_when_a_release_is_unknown(capsys):
    assert main(["kb", "show", "paddlepaddle-gpu"]) == 0
    assert capsys.readouterr().out.startswith("PaddlePaddle (paddlepaddle): ")
    assert main(["kb", "show", "torch", "9.9"]) == 2
    err = capsys.readouterr().err
    assert "no release 9.9" in err and "1.0.0 to" in err


def test_sources_of_one_framework_are_only_its_own(capsys):
    assert main(["kb", "sources", "vllm", "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    records = [r for entry in doc["sources"] for r in entry["records"]]
    assert records and all(r.startswith("vllm:") for r in records)

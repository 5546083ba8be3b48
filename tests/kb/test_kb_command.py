import json

from gpuvet.cli import main


def test_kb_list_json(capsys):
    assert main(["kb", "list", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1 and doc["kb"]["version"] == "2026.11"
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

"""gpuvet capture / gpuvet replay end to end: a real capture of this test environment, replayed here (no drift)
and against a pasted older GPU machine (drift, the smallest change, files that rebuild it)."""

import json
import sys
from importlib import metadata
from pathlib import Path

import pytest
from installed_torch import installed_torch

from gpuvet.cli import main
from gpuvet.sources.capture import _direct_source

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GTX1050TI_535 = str(FIXTURES / "nvidia-smi" / "gtx-1050ti-1gpu_drv535.161.07.txt")


@pytest.fixture(scope="module")
def capture_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("capture") / "env.json"
    assert main(["capture", "-o", str(path)]) == 0
    return path


def test_capture_records_the_environment_exactly(capture_file):
    document = json.loads(capture_file.read_text())
    assert document["kind"] == "capture" and document["schema_version"] == 1 and document["captured_at"]
    lock = {entry["name"].lower(): entry for entry in document["lock"]}
    assert lock["packaging"]["version"] == metadata.version("packaging")  # what the metadata says, exactly
    assert document["snapshot"]["python"]["value"]["version"].startswith("%d.%d" % sys.version_info[:2])
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return
    assert lock["torch"]["version"] == torch_version  # what the metadata says, local label (+cpu) and all
    # the target names the build torch says it is (torch.__version__): PyPI's CUDA wheel is 2.13.0 in its metadata
    # and 2.13.0+cu130 in torch.__version__
    assert "torch==%s" % installed_torch().version in document["targets"]


@pytest.mark.parametrize("direct_url, source", [
    # PEP 610's own examples: an archive URL, a VCS checkout, a local directory
    ('{"url": "https://github.com/pypa/pip/archive/1.3.1.zip", "archive_info": {"hashes": {"sha256": "2dc6b5a470a1bde68946f263f1af1515a2574a150a30d6ce02c6ff742fcc0db8"}}}',
     {"kind": "url", "url": "https://github.com/pypa/pip/archive/1.3.1.zip"}),
    ('{"url": "https://github.com/pypa/pip.git", "vcs_info": {"vcs": "git", "requested_revision": "1.3.1", "commit_id": "7921be1537eac1e97bc40179a57f0349c2aee67d"}}',
     {"kind": "vcs", "url": "https://github.com/pypa/pip.git", "commit": "7921be1537eac1e97bc40179a57f0349c2aee67d"}),
    ('{"url": "file:///home/user/project", "dir_info": {"editable": true}}',
     {"kind": "dir", "url": "file:///home/user/project", "editable": True}),
    # a private index token in the URL never enters the capture
    ('{"url": "https://user:s3cr3t-token@pkgs.example.com/wheels/x-1.0-py3-none-any.whl", "archive_info": {}}',
     {"kind": "url", "url": "https://***@pkgs.example.com/wheels/x-1.0-py3-none-any.whl"}),
    ("not json", None),
    ("", None),
])
def test_direct_url_sources(direct_url, source):
    assert _direct_source(direct_url) == source


def test_replay_here_is_no_drift(capture_file, capsys):
    """Nothing changed on the machine. What the capture installed runs here, unless it is a CUDA build on this
    GPU-less machine (PyPI's torch, where PyTorch's CPU index cannot be reached): then replay says that, and only
    that, does not run here."""
    code = main(["replay", str(capture_file), "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["differences"] == []
    failing = {t["target"] for t in document["targets"] if t["verdict"] == "fail"}
    torch = installed_torch()
    driver = json.loads(capture_file.read_text())["snapshot"]["driver"]["version"]["status"]
    if torch is None or torch.cuda is None or driver == "found":
        assert code == 0 and failing == set() and document["drift"] is False and document["plan"] == []
    else:
        assert "torch==%s" % torch.version in failing
        assert code == 1 and document["drift"] is True and {s["target"] for s in document["plan"]} == failing


def test_replay_on_an_older_gpu_box_plans_and_rebuilds(capture_file, capsys, tmp_path):
    out = tmp_path / "rebuild"
    code = main(["replay", str(capture_file), "--from", GTX1050TI_535, "--emit", str(out), "-f", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["drift"] is True
    facts = {item["fact"]: item for item in document["differences"]}
    assert facts["driver"]["here"] == "535.161.07" and facts["gpu_model"]["here"] == "NVIDIA GeForce GTX 1050 Ti"
    assert "python" in {item["fact"] for item in document["not_known_here"]}  # a pasted nvidia-smi cannot tell
    requirements = (out / "requirements.txt").read_text()
    assert "packaging==%s" % metadata.version("packaging") in requirements.splitlines()
    assert "FROM python:%d.%d-slim" % sys.version_info[:2] in (out / "Dockerfile").read_text()
    yaml = pytest.importorskip("yaml")
    environment = yaml.safe_load((out / "environment.yml").read_text())
    pip_lines = [d for d in environment["dependencies"] if isinstance(d, dict)][0]["pip"]
    assert "packaging==%s" % metadata.version("packaging") in pip_lines
    if not any(t.startswith("torch==") for t in json.loads(capture_file.read_text())["targets"]):
        return
    step = [s for s in document["plan"] if s["target"].startswith("torch==")][0]
    build = step["alternative"]["build"]  # e.g. "torch==2.13.0 (cu126)": the same release, a build that fits
    version, variant = build.split("==")[1].split(" (")
    assert step["alternative"]["change"] == "variant"
    assert main(["check", "torch==%s+%s" % (version, variant.rstrip(")")), "--from", GTX1050TI_535,
                 "--no-network"]) == 0  # what the plan proposes passes check on that machine
    capsys.readouterr()
    # The emitted files carry the plan's build, from the index that serves it, in place of the captured one.
    assert "torch==%s" % step["alternative"]["version"] in requirements.splitlines()
    if "+" in step["alternative"]["version"]:
        label = step["alternative"]["version"].split("+")[1]
        assert "--extra-index-url https://download.pytorch.org/whl/%s" % label in requirements.splitlines()


def test_requirement_lines_take_each_index_from_the_packages_own_framework():
    from gpuvet.kb import load
    from gpuvet.report.replay import requirement_lines

    lock = [{"name": "torch", "version": "2.5.1+cu124"}, {"name": "torchvision", "version": "0.20.1+cu124"},
            {"name": "pip", "version": "24.0"}, {"name": "numpy", "version": "1.26.4"},
            {"name": "mylib", "version": "0.1", "source": {"kind": "dir", "url": "file:///src/mylib", "editable": True}},
            {"name": "tool", "version": "1.0", "source": {"kind": "vcs", "url": "https://github.com/o/tool.git", "commit": "abc123"}}]
    indexes, lines = requirement_lines(lock, load())
    assert indexes == ["--extra-index-url https://download.pytorch.org/whl/cu124"]  # one line, PyTorch's own
    assert lines[:3] == ["torch==2.5.1+cu124", "torchvision==0.20.1+cu124", "numpy==1.26.4"]  # pip left out
    assert lines[3].startswith("# mylib 0.1 was installed from a local directory")
    assert lines[4] == "tool @ git+https://github.com/o/tool.git@abc123"


@pytest.mark.parametrize("content, needle", [
    ('{"schema_version": 1, "kind": "snapshot"}', "not a gpuvet capture"),
    ("{not json", "not a gpuvet capture"),
])
def test_replay_refuses_what_is_not_a_capture(tmp_path, capsys, content, needle):
    path = tmp_path / "x.json"
    path.write_text(content)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2


def test_capture_refuses_a_smoke_file_that_is_not_one(tmp_path, capsys):
    path = tmp_path / "smoke.json"
    path.write_text("[1, 2]")
    assert main(["capture", "--smoke", str(path)]) == 2
    assert "not a smoke JSON report" in capsys.readouterr().err

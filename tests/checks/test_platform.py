"""GPU rental platforms (kb/data/platforms.toml): recognised only from the evidence their documentation gives
(gpuvet.probe.rental), or named with --platform; `check` says what each disk keeps and where the environment
survives, `plan --platform` answers the storage questions. Facts and their sources are the platforms' own pages."""

import json

import pytest

from gpuvet.checks.platform import advice, platform_findings
from gpuvet.cli import main
from gpuvet.i18n import has_message, render
from gpuvet.kb import load
from gpuvet.probe import rental
from gpuvet.probe.facts import found
from gpuvet.snapshot import SnapshotView

SMI = "tests/fixtures/nvidia-smi/a10-1gpu_drv550.90.12.txt"


@pytest.mark.parametrize("environ, folders, expected", [
    ({"RUNPOD_POD_ID": "abc123"}, set(), "runpod"),  # RunPod's environment-variable reference
    ({"VAST_CONTAINERLABEL": "C.42"}, set(), "vastai"),  # Vast.ai: set "in every instance"
    ({"DSW_INSTANCE_ID": "dsw-1"}, set(), "pai-dsw"),  # what Alibaba's own PAI SDK tests
    ({}, {"/root/autodl-tmp", "/root/autodl-fs"}, "autodl"),  # AutoDL's documented data disk and file storage
    ({}, {"/root/autodl-tmp"}, None),  # one of the two: not enough
    ({"RUNPOD_POD_ID": "x", "VAST_CONTAINERLABEL": "y"}, set(), None),  # two platforms' evidence: no answer
    ({"HOME": "/root"}, set(), None),
])
def test_a_platform_is_named_only_from_its_complete_documented_evidence(environ, folders, expected):
    fact = rental.collect(environ, isdir=lambda path: path in folders)
    if expected is None:
        assert fact["status"] == "missing"
    else:
        assert fact["value"]["name"] == expected and fact["evidence_source"].startswith("https://")
        assert "abc123" not in json.dumps(fact)  # the variable's name is the evidence, never its value


@pytest.mark.parametrize("name, expected_key, where", [
    ("runpod", "advice_move_env", "/workspace"),  # pip's container disk is "lost on stop/restart"
    ("autodl", "advice_image", "/root/autodl-tmp"),  # the system disk is in a saved image, the data disk is not
    ("lambda", "advice_release", "/home/ubuntu/<filesystem>"),  # only the persistent filesystem outlives terminate
    ("gpushare", "advice_unknown", None),  # its docs were not read: no advice is invented
])
def test_the_advice_follows_from_the_documented_disks(name, expected_key, where):
    message = advice(load().platform(name))
    assert message.id == "checks.platform." + expected_key
    if where:
        assert where in render(message, "en")


def test_every_profile_is_sourced_and_every_sentence_exists_in_both_languages():
    kb = load()
    for name in kb.platform_names():
        profile = kb.platform(name)
        assert profile["source"].startswith("https://") and profile["disk"], name
        for disk in profile["disk"]:
            assert disk["source"].startswith("https://"), (name, disk["path"])
            assert disk["role"] in ("system", "data", "volume", "shared")
            for key in ("kept_on_stop", "in_saved_image", "kept_on_release", "pip_default"):
                assert disk.get(key) in (None, True, False), (name, key)
        keys = ["checks.platform.note." + n for n in profile.get("notes", [])]
        keys += ["checks.platform.note." + d["note"] for d in profile["disk"] if d.get("note")]
        for key in keys:
            assert has_message(key, "en") and has_message(key, "zh"), key


def _machine(capsys, *extra):
    assert main(["check", "--from", SMI, "--no-network", "-f", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)["machine"]


def test_check_with_platform_says_what_each_disk_keeps(capsys):
    (note,) = [f for f in _machine(capsys, "--platform", "autodl") if f["code"] == "platform_note"]
    assert note["severity"] == "info" and note["title"] == "On AutoDL: what each disk keeps"
    assert "/root/autodl-tmp (data disk, 50 GB+) yes/no/?" in note["detail"]
    assert "released after 15 days" in note["detail"]
    assert "/root/autodl-tmp is not in the image" in note["fix"]["summary"]
    assert any(s.startswith("https://www.autodl.com/docs/env/") for s in note["sources"])
    assert [f for f in _machine(capsys) if f["code"] == "platform_note"] == []  # a paste says nothing of a platform


def test_the_note_is_in_chinese_too(capsys):
    (note,) = [f for f in _machine(capsys, "--platform", "runpod", "--lang", "zh") if f["code"] == "platform_note"]
    assert "各磁盘保留什么" in note["title"] and "/workspace" in note["fix"]["summary"] and "停止" in note["fix"]["summary"]


def test_an_unknown_platform_is_a_usage_error_naming_the_known_ones(capsys):
    assert main(["check", "--from", SMI, "--no-network", "--platform", "azure-ml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --platform azure-ml") and "autodl" in err and "Traceback" not in err


def test_evidence_from_the_probe_names_the_platform_in_the_note():
    snapshot = {"host": {"platform": found({"name": "vastai", "evidence": ["VAST_CONTAINERLABEL"]}, "platform evidence")},
                "gpus": found([], "test")}
    (note,) = platform_findings(SnapshotView(snapshot), load())
    assert "Recognised from VAST_CONTAINERLABEL" in render(note.detail, "en")
    assert "no GPU reservation" in render(note.detail, "en")


def test_plan_on_a_platform_answers_the_storage_questions(capsys):
    assert main(["plan", "--framework", "torch==2.5.1", "--model-size", "7B", "--task", "lora", "-f", "json",
                 "--platform", "autodl"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    platform = plan["platform"]
    assert platform["name"] == "autodl" and platform["weights_fit_on"] == ["/root/autodl-tmp", "/root/autodl-fs"]
    assert len(platform["answers"]) == 2 and not set(platform["answers"]) & set(plan["questions"])
    assert main(["plan", "--framework", "torch==2.5.1", "--model-size", "7B", "--task", "lora", "--platform", "autodl"]) == 0
    out = capsys.readouterr().out
    assert "On AutoDL" in out and "/root/autodl-tmp (50 GB+): yes / no / ?" in out

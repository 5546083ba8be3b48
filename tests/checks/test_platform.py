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


# Where each platform keeps its own documentation: a profile is verified only while every URL it cites is one of these.
# GPUhub is AutoDL's international edition; RunPod, Vast.ai and Lambda keep their documentation sites in these repositories.
OWN_DOCUMENTATION = {
    "autodl": ("autodl.com/", "docs.gpuhub.com/", "gpuhub.com/"),
    "runpod": ("github.com/runpod/",),
    "vastai": ("github.com/vast-ai/",),
    "pai-dsw": ("alibabacloud.com/", "help.aliyun.com/"),
    "lambda": ("github.com/LambdaLabs/",),
    "gpushare": ("gpushare.com/",),
    "matpool": ("matpool.com/",),
    "tencent-cvm": ("tencentcloud.com/", "intl.cloud.tencent.com/", "cloud.tencent.com/"),
}


def _urls(profile):
    import re

    from gpuvet.checks.platform import profile_sources

    urls = [u for s in profile_sources(profile) for u in re.findall(r"https?://[^\s;,()\"]+", s)]
    return [re.sub(r"^https?://(www\.)?", "", u) for u in urls]


@pytest.mark.parametrize("name", sorted(OWN_DOCUMENTATION))
def test_a_profile_is_unverified_exactly_when_it_cites_pages_other_than_the_platforms_own(name):
    profile = load().platform(name)
    urls = _urls(profile)
    assert urls, name
    foreign = [u for u in urls if not u.startswith(OWN_DOCUMENTATION[name])]
    assert bool(profile.get("unverified")) == bool(foreign), (name, foreign)


def test_the_known_platforms_are_the_table_above():
    assert set(load().platform_names()) == set(OWN_DOCUMENTATION)


@pytest.mark.parametrize("name, driver, images", [
    # RunPod: "Additional filters → CUDA Versions", runpodctl --min-cuda-version; its PyTorch base image's stated contents
    ("runpod", {"filter_by_cuda"}, {"runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404": ["PyTorch 2.8.0", "CUDA 12.8.1", "Ubuntu 24.04"]}),
    # Vast.ai: cuda_vers is the "machine max supported cuda version (based on driver version)", a search filter; the
    # FAQ: "CUDA version depends on the Docker image"
    ("vastai", {"shown_cuda_is_max", "filter_by_cuda", "cuda_from_image"}, {"vastai/pytorch": ["PyTorch"]}),
    ("lambda", set(), {"Lambda Stack": ["PyTorch", "TensorFlow"]}),  # cuDNN only for Lambda Stack's PyTorch/TensorFlow
    ("autodl", set(), {}),  # its driver, image and network_turbo pages were not found in a readable copy: nothing said
    ("gpushare", {"shown_cuda_is_max", "cuda_from_image"}, {}),  # from a copy of its FAQ: still unverified
])
def test_driver_and_image_facts_are_the_documented_ones(name, driver, images):
    from gpuvet.checks.platform import driver_keys

    profile = load().platform(name)
    assert {key.rsplit(".", 1)[1] for key in driver_keys(profile)} == driver
    named = {i["name"]: i.get("contents", []) for i in profile.get("image", [])}
    assert {n: named.get(n) for n in images} == images


def test_every_driver_and_image_fact_is_sourced_and_worded_in_both_languages():
    from gpuvet.checks.platform import DRIVER_FACTS

    kb = load()
    for name in kb.platform_names():
        profile = kb.platform(name)
        driver = profile.get("driver")
        if driver:
            assert driver["source"].startswith("https://"), name
            assert set(driver) - {"source"} <= set(DRIVER_FACTS) and all(v is True for k, v in driver.items() if k != "source")
        for image in profile.get("image", []):
            assert image["name"] and image["source"].startswith("https://"), (name, image)
            assert all(isinstance(c, str) and c for c in image.get("contents", [])), (name, image)
    for key in ["checks.platform.driver." + f for f in DRIVER_FACTS] + ["checks.platform.images", "checks.platform.image",
                                                                        "checks.platform.image_bare", "checks.platform.list"]:
        assert has_message(key, "en") and has_message(key, "zh"), key


def test_check_on_vastai_says_what_the_shown_cuda_means_and_names_its_images(capsys):
    (note,) = [f for f in _machine(capsys, "--platform", "vastai") if f["code"] == "platform_note"]
    assert "The CUDA version shown for a machine is the highest its driver supports" in note["detail"]
    assert "Images its documentation names: vastai/pytorch (PyTorch); vastai/base-image:" in note["detail"]
    assert any("search-offers.mdx" in s for s in note["sources"]) and any("advanced-setup.mdx" in s for s in note["sources"])
    (note,) = [f for f in _machine(capsys, "--platform", "vastai", "--lang", "zh") if f["code"] == "platform_note"]
    assert "驱动支持的最高版本" in note["detail"] and "vastai/pytorch（PyTorch）；" in note["detail"]


def test_plan_on_runpod_gives_the_driver_rule_and_the_image_with_its_contents(capsys):
    args = ["plan", "--framework", "torch==2.5.1", "--model-size", "7B", "--task", "lora", "--platform", "runpod"]
    assert main([*args, "-f", "json"]) == 0
    platform = json.loads(capsys.readouterr().out)["plan"]["platform"]
    assert platform["images"] == [{"name": "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
                                   "contents": ["PyTorch 2.8.0", "CUDA 12.8.1", "Ubuntu 24.04"]}]
    assert len(platform["driver"]) == 1 and "CUDA version their driver supports" in platform["driver"][0]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "  Images its documentation names: runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404 (PyTorch 2.8.0, CUDA 12.8.1, Ubuntu 24.04)." in out
    assert main([*args[:-1], "autodl"]) == 0  # AutoDL documents neither: no such line is invented
    out = capsys.readouterr().out
    assert "Images its documentation names" not in out and "driver supports" not in out

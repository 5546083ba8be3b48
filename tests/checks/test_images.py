"""``gpuvet check image:REF`` for the images the knowledge base knows by tag (kb/data/images.toml), on real pasted
machines (tests/fixtures/nvidia-smi*, see their PROVENANCE), and the base image ``gpuvet replay --emit`` chooses.

Facts each row rests on, from their sources:
- nvidia/cuda NVIDIA_REQUIRE_CUDA: dist/<version>/<os>/base/Dockerfile of https://gitlab.com/nvidia/container-images/cuda
  (12.4.1: "cuda>=12.4" plus brand clauses for the R470, R525 and R535 branches, GeForce included; 12.6.3 and 13.0.0:
  brands without geforce, 12.6.3 for R470/R535/R550, 13.0.0 for R535/R550/R565/R570/R575; 11.0.3: "cuda>=11.0
  brand=tesla,driver>=418,driver<419").
- The container runtime ORs the space-separated alternatives and ANDs the comma-separated constraints (NVIDIA
  Container Toolkit, "Specialized Configurations with Docker").
- Driver 450.51.06 serves CUDA 11.0, 535.x CUDA 12.2, 550.x CUDA 12.4 (nvidia-smi banners of the fixtures); CUDA 12.x
  runs on an older 12.x driver through minor-version compatibility, a newer major only through the cuda-compat
  package on a data-center GPU of a supported branch (R550 >= 550.54; CUDA Compatibility guide, kb/data/cuda_driver.toml).
- Product Brand: "NVIDIA" for the H100 NVL, "GeForce" for the GTX 1050 Ti and RTX 4090 (their nvidia-smi -q).
"""

import json
from pathlib import Path

import pytest

from gpuvet.checks import run_checks
from gpuvet.checks.images import replay_base
from gpuvet.cli import main
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.kb import compat, load
from gpuvet.kb.compat import _CONSTRAINT
from gpuvet.kb.images import describe
from gpuvet.probe.facts import found
from gpuvet.snapshot import merge_all

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T4_450 = "nvidia-smi/tesla-t4-1gpu_drv450.51.06.txt"  # an old driver, no brand in the table
H100_550_Q = "nvidia-smi-q/h100-nvl-2gpu_drv550.54.14.txt"  # data center, brand NVIDIA
H100_550 = "nvidia-smi/h100-nvl-2gpu_drv550.54.14.txt"  # the same machine without the brand
RTX4090_550_Q = "nvidia-smi-q/rtx-4090-8gpu_drv550.127.05.txt"  # consumer, GeForce
GTX1050TI_535_Q = "nvidia-smi-q/gtx-1050ti-1gpu_drv535.161.07.txt"  # consumer, GeForce
H800_525_Q = "nvidia-smi-q/h800-gpu0-of-8_drv525.105.17.txt"  # data center on R525
K80_375 = "nvidia-smi/tesla-k80-4gpu_drv375.66.txt"  # an nvidia-smi too old to print the driver's CUDA version


def _snapshot(name):
    text = (FIXTURES / name).read_text()
    return merge_all([parse(detect_kind(text), text)])


def _result(machine, image):
    (result,) = run_checks(_snapshot(machine), ["image:" + image]).targets
    return result


def _fix(result):
    fixes = [f.fix for f in result.findings if f.verdict.value == "fail" and f.fix]
    return render(fixes[0].summary, "en") if fixes else None


@pytest.mark.parametrize("machine, image, verdict, codes, choose, why", [
    (T4_450, "nvidia/cuda:12.4.1-runtime-ubuntu20.04", "fail", {"driver_too_old"},
     "nvidia/cuda:11.0.3-runtime-ubuntu20.04",
     "R450 is in no clause of 12.4.1 and below CUDA 12's floor; T4 forward compatibility needs R470+. Of the "
     "ubuntu20.04 runtime tags only 11.0.3 ('cuda>=11.0') starts on a CUDA 11.0 driver without a brand"),
    (H100_550_Q, "nvidia/cuda:13.0.0-base-ubuntu24.04", "pass", {"forward_compat"}, None,
     "brand=nvidia,driver>=550,driver<551 starts it; CUDA 13.0 then runs through its own cuda-compat on a data-center "
     "GPU on R550 >= 550.54"),
    (RTX4090_550_Q, "nvidia/cuda:13.0.0-base-ubuntu22.04", "fail", {"driver_too_old"},
     "nvidia/cuda:12.4.1-base-ubuntu22.04",
     "GeForce is in no 13.0.0 clause and CUDA 12.4 < 13.0; no forward compatibility on a consumer GPU. 12.4.1 is the "
     "newest ubuntu22.04 base tag whose 'cuda>=' a CUDA 12.4 driver meets (12.5+ list no geforce)"),
    (GTX1050TI_535_Q, "nvidia/cuda:12.6.3-runtime-ubuntu22.04", "fail", {"driver_too_old", "minor_version_compat"},
     "nvidia/cuda:12.4.1-runtime-ubuntu22.04",
     "CUDA 12.6 would run on R535 (minor-version compatibility) but the runtime refuses to start it: 12.6.3 lists "
     "no geforce; 12.4.1 lists brand=geforce,driver>=535,driver<536"),
    (GTX1050TI_535_Q, "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "pass", {"forward_compat", "minor_version_compat"},
     None, "started through brand=geforce,driver>=535,driver<536, run through minor-version compatibility"),
    (H100_550, "nvidia/cuda:12.6.3-runtime-ubuntu22.04", "unknown", {"unknown_version", "minor_version_compat"}, None,
     "CUDA 12.4 < 12.6: only a brand clause for R550 can start it, and the plain nvidia-smi table has no brand"),
    (H800_525_Q, "nvcr.io/nvidia/pytorch:25.12-py3", "unknown", {"forward_compat"}, None,
     "PyTorch 25.12 is based on CUDA 13.1.0 (its release notes); R525 alone is too old, and which branches "
     "cuda-compat 13.1 supports is not recorded (NVIDIA's 13.0 image already drops R525: "
     "https://gitlab.com/nvidia/container-images/cuda/-/blob/7ad4b0af70e5af9fb82ab990df382a0dd7d494dc/dist/13.0.0/"
     "ubuntu2404/base/Dockerfile), so the forward-compatibility path is unknown, not a pass"),
    (RTX4090_550_Q, "nvcr.io/nvidia/pytorch:25.12-py3", "fail", {"driver_too_old"}, None,
     "CUDA 13.1 on a consumer GPU needs a 13.x driver; the other listed PyTorch releases (CUDA 10.x) cannot compile "
     "for compute capability 8.9, so none is proposed"),
    (K80_375, "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "fail", {"driver_too_old"}, None,
     "nvidia-smi 375 prints no CUDA version: R375 serves CUDA 8.0 (driver table), below every cuda>= and clause; no "
     "listed tag is that old"),
    (RTX4090_550_Q, "nvidia/cuda:11.0.3-base-ubuntu20.04", "unknown", {"gpu_unsupported_by_cuda"}, None,
     "the driver starts and runs CUDA 11.0, but CUDA 11.0 has no code generation for the Ada GPU (8.9)"),
])
def test_an_image_tag_on_a_machine(machine, image, verdict, codes, choose, why):
    result = _result(machine, image)
    assert result.verdict.value == verdict, why
    assert codes <= {f.code for f in result.findings}, why
    fix = _fix(result)
    if choose:
        assert fix.startswith("Choose " + choose), why
        assert any(cmd == "docker pull " + choose for f in result.findings if f.fix for cmd in f.fix.commands)
    elif verdict == "fail":
        assert not (fix or "").startswith("Choose nv"), why


def test_a_tag_the_data_does_not_list_is_unknown_and_named():
    result = _result(H100_550_Q, "nvidia/cuda:12.7.0-base-ubuntu22.04")  # CUDA 12.7 was never released
    assert result.verdict.value == "unknown"
    (finding,) = result.findings
    assert finding.code == "unknown_version" and "nvidia/cuda:12.7.0-base-ubuntu22.04" in render(finding.title, "en")
    assert _result(H100_550_Q, "nvcr.io/nvidia/pytorch:24.05-py3").verdict.value == "unknown"  # notes not read


def test_ngc_tags_carry_the_suffixes_their_notes_name():
    # TensorFlow 21.05's notes: "Container image 21.05-tf1-py3 and 21.05-tf2-py3 contains Python 3.8", CUDA 11.3.0
    assert _result(H100_550_Q, "nvcr.io/nvidia/tensorflow:21.05-tf2-py3").resolved == "nvcr.io/nvidia/tensorflow:21.05-tf2-py3"
    unknown = _result(H100_550_Q, "nvcr.io/nvidia/tensorflow:21.05-py3")
    assert unknown.verdict.value == "unknown" and "21.05-tf2-py3" in render(unknown.findings[0].detail, "en")
    # MXNet 24.05: CUDA 12.4.1, which a 550 driver (CUDA 12.4) serves without any compatibility package
    mxnet = _result(H100_550_Q, "nvcr.io/nvidia/mxnet:24.05-py3")
    assert mxnet.verdict.value == "pass" and not {"forward_compat", "minor_version_compat"} & {f.code for f in mxnet.findings}


def test_a_vllm_image_is_unknown_and_points_to_the_release_wheel():
    result = _result(H100_550_Q, "vllm/vllm-openai:v0.6.3")
    assert result.verdict.value == "unknown"
    (finding,) = result.findings
    assert finding.fix.commands == ("gpuvet check vllm==0.6.3",)  # a release kb/data/frameworks/vllm.toml lists
    assert _result(H100_550_Q, "vllm/vllm-openai:latest").findings[0].fix.commands == ()


def test_the_data_reads_as_the_runtime_reads_it():
    """Every clause parses with the runtime's grammar, and the facts the rows above rest on are in the data."""
    kb = load()
    for release in kb.images()["nvidia_cuda"]["release"]:
        for flavor in release["flavors"]:
            image = describe("nvidia/cuda:%s-%s-%s" % (release["version"], flavor, release["os"][0]), kb)
            head, *alternatives = image.requirement.split()
            assert head == "cuda>=" + ".".join(release["version"].split(".")[:2])
            assert all(_CONSTRAINT.match(c) for a in alternatives for c in a.split(",")), release["version"]
    r1241 = describe("nvidia/cuda:12.4.1-runtime-ubuntu22.04", kb).requirement
    assert "brand=geforce,driver>=535,driver<536" in r1241 and "driver>=550" not in r1241
    assert "geforce" not in describe("nvidia/cuda:12.6.3-runtime-ubuntu22.04", kb).requirement
    assert describe("nvidia/cuda:11.0.3-base-ubuntu20.04", kb).requirement == "cuda>=11.0 brand=tesla,driver>=418,driver<419"
    assert describe("nvidia/cuda:12.4.1-base-ubuntu24.04", kb).cuda is None  # 12.4.1 had no ubuntu24.04 image


@pytest.mark.parametrize("reference", ["nvidia/cuda", "nvidia/cuda@sha256:" + "0" * 64,
                                       "registry.example.com/team/cuda:12.4.1-base-ubuntu22.04", "ubuntu:22.04"])
def test_a_reference_without_a_known_tag_is_one_usage_line(reference, capsys):
    assert main(["check", "--from", str(FIXTURES / H100_550_Q), "image:" + reference]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: image:" + reference) and "Traceback" not in "\n".join(err)


def test_check_image_end_to_end_names_the_image_to_choose(capsys):
    code = main(["check", "--from", str(FIXTURES / GTX1050TI_535_Q), "image:nvidia/cuda:12.6.3-runtime-ubuntu22.04"])
    out = capsys.readouterr().out
    assert code == 1
    assert "Fix: Choose nvidia/cuda:12.4.1-runtime-ubuntu22.04 (CUDA 12.4)" in out
    assert "$ docker pull nvidia/cuda:12.4.1-runtime-ubuntu22.04" in out


def _capture(lock=(), toolkit=None):
    snapshot = {"python": found({"version": "3.11.9"}, "test")}
    if toolkit:
        snapshot["cuda_toolkits"] = found([{"version": toolkit, "path": "/usr/local/cuda"}], "test")
    return {"snapshot": snapshot, "lock": [{"name": n, "version": v} for n, v in lock]}


def test_replay_keeps_a_python_image_when_the_wheels_carry_cuda():
    capture = _capture([("torch", "2.5.1"), ("nvidia-cuda-runtime-cu12", "12.4.127")], toolkit="12.4")
    base = replay_base(capture, _snapshot(H100_550_Q), load())
    assert base["image"] == "python:3.11-slim" and base["reason"] == "wheels"
    assert "nvidia-cuda-runtime-cu12==12.4.127" in base["wheels"]


def test_replay_bases_a_system_cuda_on_an_nvidia_cuda_tag_the_target_runs():
    capture = _capture([("cupy", "13.0.0")], toolkit="12.4.131")
    base = replay_base(capture, _snapshot(H100_550_Q), load())
    assert base["image"] == "nvidia/cuda:12.4.1-runtime-ubuntu22.04" and base["reason"] == "cuda_image"
    # R450 is below CUDA 12's floor (525.60.13): no CUDA 12.4 runtime runs there, in a tag or added by hand, and the
    # Dockerfile says so instead of "add the runtime yourself"
    from gpuvet.report.replay import dockerfile

    base = replay_base(capture, _snapshot(T4_450), load())
    assert base["reason"] == "driver_below_cuda" and base["minimum"] == "525.60.13"
    text = dockerfile(capture, base)
    assert "yourself" not in text and "below 525.60.13" in text and text.count("FROM ") == 1


def test_a_project_dockerfile_on_a_known_base_image_checks_that_image():
    from gpuvet.ingest.project import read_dockerfile

    declared = read_dockerfile("FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04 AS base\nFROM ubuntu:22.04\n")
    assert declared.targets == ["image:nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04"]
    assert [(line, render(why, "en")) for line, why in declared.skipped] == [
        ("FROM ubuntu:22.04", "a base image gpuvet does not read")]


def test_an_image_beside_a_framework_target_under_uv(capsys):
    """--installer uv weighs the framework targets only; the image is judged as an image beside them."""
    code = main(["check", "--installer", "uv", "--no-network", "--from", str(FIXTURES / H100_550_Q),
                 "image:nvidia/cuda:12.4.1-runtime-ubuntu22.04", "torch==2.5.1", "-f", "json"])


    document = json.loads(capsys.readouterr().out)
    assert [t["target"] for t in document["targets"]] == ["image:nvidia/cuda:12.4.1-runtime-ubuntu22.04", "torch==2.5.1"]
    assert code in (0, 1) and document["targets"][0]["verdict"] == "pass"


def test_the_gpu_brand_comes_from_nvidia_smi_q_text_and_xml():
    """nvidia-smi -q prints "Product Brand", -q -x <product_brand>: what brand= clauses are matched against."""
    assert {g["brand"] for g in _snapshot(RTX4090_550_Q)["gpus"]["value"]} == {"GeForce"}
    assert [g["brand"] for g in _snapshot("nvidia-smi-q-x/a10g-1gpu_drv515.105.01.xml")["gpus"]["value"]] == ["NVIDIA"]


@pytest.mark.parametrize("machine, image, choose, os_name, why", [
    (T4_450, "nvidia/cuda:12.6.3-runtime-ubuntu24.04", "nvidia/cuda:11.0.3-runtime-ubuntu20.04", "ubuntu20.04",
     "R450 without a brand meets only 'cuda>=11.0' (11.0.3, listed for ubuntu18.04 and ubuntu20.04); the first "
     "ubuntu24.04 tag is 12.5.1, so no tag of the same OS fits and the newer of the two OSes is named"),
    (GTX1050TI_535_Q, "nvidia/cuda:12.6.3-runtime-ubuntu24.04", "nvidia/cuda:12.4.1-runtime-ubuntu22.04",
     "ubuntu22.04", "every ubuntu24.04 tag (12.5.1+) is cuda>=12.5 with no geforce clause, so R535 on a GeForce starts "
     "none; 12.4.1 (ubuntu20.04 and ubuntu22.04) lists brand=geforce,driver>=535,driver<536"),
])
def test_when_no_tag_of_the_same_os_fits_the_fix_names_one_of_another_os(machine, image, choose, os_name, why):
    result = _result(machine, image)
    assert result.verdict.value == "fail", why
    fix = _fix(result)
    assert fix.startswith("Choose " + choose), (fix, why)
    assert os_name in fix and image.rsplit("-", 1)[-1] in fix, fix  # it says the OS differs
    assert any(cmd == "docker pull " + choose for f in result.findings if f.fix for cmd in f.fix.commands)
    zh = [render(f.fix.summary, "zh") for f in result.findings if f.verdict.value == "fail" and f.fix][0]
    assert choose in zh and os_name in zh, zh


RTX5090_570 = "nvidia-smi/rtx-5090-1gpu_drv570.124.06.txt"  # Blackwell (12.0), GeForce, CUDA 12.8 driver


@pytest.mark.parametrize("machine, image, verdict, codes, why", [
    # https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-24-01.html: "Release 24.01 is
    # based on CUDA 12.3.2, which requires NVIDIA Driver release 545 or later ... data center GPU ... 470.57 (or later
    # R470), 525.85 (or later R525), 535.86 (or later R535), or 545.23 (or later R545)"; "users should upgrade from all
    # R418, R440, R450, R460, R510, and R520 drivers, which are not forward-compatible with CUDA 12.3"
    (T4_450, "nvcr.io/nvidia/tritonserver:24.01-py3", "fail", {"driver_too_old"},
     "R450 is below CUDA 12's floor, and the notes list R450 among the branches cuda-compat 12.3 does not serve, so "
     "the T4 being a data-center GPU does not help"),
    (RTX4090_550_Q, "nvcr.io/nvidia/tritonserver:24.01-py3", "pass", set(),
     "driver 550 serves CUDA 12.4 >= 12.3 natively"),
    # https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-01.html: "Release 25.01 is
    # based on CUDA 12.8.0.038"; compute capability 7.5 and later, Blackwell included
    (RTX5090_570, "nvcr.io/nvidia/tritonserver:25.01-py3", "pass", set(),
     "driver 570 serves CUDA 12.8 natively and CUDA 12.8 generates code for Blackwell"),
    (RTX4090_550_Q, "nvcr.io/nvidia/tritonserver:25.01-py3", "pass", {"minor_version_compat"},
     "CUDA 12.8 on a CUDA 12.4 driver runs only through minor-version compatibility (no forward compatibility on "
     "GeForce); the notes' 'requires ... 560 or later' is their recommendation, not the runtime's floor"),
    # https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-10.html: "Release 25.10 is
    # based on CUDA 13.0.2.006 which requires NVIDIA Driver release 575 or later"
    (RTX4090_550_Q, "nvcr.io/nvidia/tritonserver:25.10-py3", "fail", {"driver_too_old"},
     "CUDA 13.0 on a CUDA 12.4 driver: a new major, and GeForce has no forward compatibility"),
    (RTX5090_570, "nvcr.io/nvidia/tritonserver:25.10-py3", "fail", {"driver_too_old"},
     "CUDA 13.0 on a CUDA 12.8 driver: a new major, and GeForce has no forward compatibility"),
])
def test_a_tritonserver_tag_on_a_machine(machine, image, verdict, codes, why):
    result = _result(machine, image)
    assert result.verdict.value == verdict, why
    assert codes <= {f.code for f in result.findings}, why


def test_tritonserver_records_carry_the_notes_cuda():
    kb = load()
    assert describe("nvcr.io/nvidia/tritonserver:24.01-py3", kb).cuda == "12.3.2"
    assert describe("nvcr.io/nvidia/tritonserver:25.01-py3", kb).cuda == "12.8.0.038"
    assert describe("nvcr.io/nvidia/tritonserver:24.01-py3-sdk", kb).cuda is None  # another variant: not read


T4_450_PLAIN = "nvidia-smi/tesla-t4-1gpu_drv450.51.06.txt"  # data center (Turing 7.5), R450: CUDA 11.0
RTX4090_550 = "nvidia-smi/rtx-4090-8gpu_drv550.127.05.txt"  # GeForce Ada (8.9), R550: CUDA 12.4
H100_590 = "nvidia-smi/h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"  # Hopper (9.0), R590: CUDA 13.1
GTX1050TI_535 = "nvidia-smi/gtx-1050ti-1gpu_drv535.161.07.txt"  # GeForce Pascal (6.1), R535: CUDA 12.2
NOTES_2401 = "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-24-01.html"
NOTES_2501 = "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-01.html"


# The same monthly NGC release on four machines. What decides each row, quoted from the release notes (NOTES_2401,
# NOTES_2501):
# 24.01: "Release 24.01 is based on CUDA 12.3.2 ... users should upgrade from all R418, R440, R450, R460, R510, and
#        R520 drivers, which are not forward-compatible with CUDA 12.3"; "Release 24.01 supports CUDA compute
#        capability 6.0 and later. This corresponds to GPUs in the NVIDIA Pascal, NVIDIA Volta, NVIDIA Turing, NVIDIA
#        Ampere architecture, NVIDIA Hopper, and NVIDIA Ada Lovelace architecture families."
# 25.01: "Release 25.01 is based on CUDA 12.8.0.038 ... users should upgrade from all R418, R440, R450, R460, R510,
#        R520, R530, R545 and R555 drivers"; "Release 25.01 supports CUDA compute capability 7.5 and later. This
#        corresponds to GPUs in the NVIDIA Turing, NVIDIA Ampere architecture, NVIDIA Hopper, NVIDIA Ada Lovelace, and
#        NVIDIA Blackwell architecture families."
@pytest.mark.parametrize("machine, image, verdict, codes, why", [
    (T4_450_PLAIN, "nvcr.io/nvidia/tritonserver:24.01-py3", "fail", {"driver_too_old"},
     "24.01: 'users should upgrade from all ... R450 ... drivers, which are not forward-compatible with CUDA 12.3'"),
    (T4_450_PLAIN, "nvcr.io/nvidia/tritonserver:25.01-py3", "fail", {"driver_too_old"},
     "25.01: 'users should upgrade from all R418, R440, R450 ...'; the T4 itself (Turing 7.5) is listed"),
    (RTX4090_550, "nvcr.io/nvidia/tritonserver:24.01-py3", "pass", set(),
     "24.01: 'based on CUDA 12.3.2', which a CUDA 12.4 driver serves; '... and NVIDIA Ada Lovelace architecture "
     "families' names the 4090"),
    (RTX4090_550, "nvcr.io/nvidia/tritonserver:25.01-py3", "pass", {"minor_version_compat"},
     "25.01: 'based on CUDA 12.8.0.038' runs on a CUDA 12.4 driver only through minor-version compatibility (GeForce: "
     "no forward compatibility); 'NVIDIA Ada Lovelace' is listed"),
    (H100_590, "nvcr.io/nvidia/tritonserver:24.01-py3", "pass", set(),
     "24.01: CUDA 12.3.2 on a CUDA 13.1 driver; 'NVIDIA Hopper' is listed"),
    (H100_590, "nvcr.io/nvidia/tritonserver:25.01-py3", "pass", set(),
     "25.01: CUDA 12.8 on a CUDA 13.1 driver; 'NVIDIA Hopper' is listed"),
    (RTX5090_570, "nvcr.io/nvidia/tritonserver:24.01-py3", "fail", {"gpu_unsupported_by_cuda"},
     "24.01: the families it names end at 'NVIDIA Ada Lovelace'; Blackwell is not among them and CUDA 12.3 cannot "
     "generate code for compute capability 12.0 (the driver part passes: CUDA 12.8 driver)"),
    (RTX5090_570, "nvcr.io/nvidia/tritonserver:25.01-py3", "pass", set(),
     "25.01: '... and NVIDIA Blackwell architecture families'; CUDA 12.8 on a CUDA 12.8 driver"),
    (GTX1050TI_535, "nvcr.io/nvidia/tritonserver:25.01-py3", "fail", {"gpu_unsupported_by_cuda"},
     "25.01: 'supports CUDA compute capability 7.5 and later'; a Pascal GPU (6.1) is below it, whatever the driver"),
])
def test_one_ngc_release_on_four_machines(machine, image, verdict, codes, why):
    result = _result(machine, image)
    assert result.verdict.value == verdict, why
    assert codes <= {f.code for f in result.findings}, why
    if "gpu_unsupported_by_cuda" in codes:  # the notes' own sentence is what the user reads, with its source
        (gpu,) = [f for f in result.findings if f.code == "gpu_unsupported_by_cuda"]
        assert gpu.verdict.value == "fail" and (NOTES_2401 in gpu.sources or NOTES_2501 in gpu.sources)
        assert "supports CUDA compute capability" in render(gpu.detail, "en")
        assert [link.verdict.value for link in result.chain if link.layer == "gpu"] == ["fail"]


def test_a_gpu_the_notes_do_not_support_is_offered_a_tag_that_supports_it():
    result = _result(RTX5090_570, "nvcr.io/nvidia/tritonserver:24.01-py3")
    fix = _fix(result)
    chosen = fix.split(" ")[1]
    assert fix.startswith("Choose nvcr.io/nvidia/tritonserver:") and "newer driver" not in fix
    assert _result(RTX5090_570, chosen).verdict.value == "pass"  # the tag offered itself passes on this machine


def test_a_release_that_names_its_gpus_without_the_one_at_hand():
    # The notes list Pascal only (as 20.xx releases did) and the toolkit can build for a Hopper GPU: the notes are
    # silent about it, not negative, so the part is unknown; with a toolkit that cannot build for it, it fails.
    kb = load()
    hopper = compat.Gpu(name="NVIDIA H100 80GB HBM3", cc="9.0", architecture="Hopper")
    assert compat.release_gpus(hopper, "6.0", ["Pascal"], "12.3.2", kb).status == compat.UNKNOWN
    assert compat.release_gpus(hopper, "6.0", ["Pascal"], "10.2.89", kb).status == compat.FAILS
    assert compat.release_gpus(hopper, "6.0", ["Pascal", "Hopper"], "10.2.89", kb).status == compat.RUNS
    assert compat.release_gpus(hopper, None, [], "12.3.2", kb) is None  # notes not read: nothing decided here
    assert compat.release_gpus(compat.Gpu(name="x", cc="6.1", architecture="Pascal"), "7.5", ["Pascal"], "12.8",
                               kb).reason == "release_gpu_floor"


@pytest.mark.parametrize("machine", [H100_590, RTX5090_570])
def test_pytorch_releases_whose_notes_were_not_read_stay_unknown(machine):
    # PyTorch 24.01 and 25.01's own release notes could not be read here; the Triton release of the same month is
    # a different image, so nothing is borrowed from it.
    for tag in ("24.01-py3", "25.01-py3"):
        result = _result(machine, "nvcr.io/nvidia/pytorch:" + tag)
        assert result.verdict.value == "unknown" and {f.code for f in result.findings} == {"unknown_version"}


def test_triton_llm_variants_carry_the_compatibility_matrix_row():
    # docs/introduction/compatibility.md of triton-inference-server/server: "| 25.01 |
    # nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3 | Python 3.12.3 | 2.6.0a0+ecf3bae40a.nv25.1 | 10.8.0.43 |
    # 0.17.0 | 12.8.0.038 | 570.86.10 |" and "| 24.04 | ...:24.04-vllm-python-py3 | Python 3.10.12 | 0.4.0 post1 |
    # 12.4.1 | 550.54.15 |"
    kb = load()
    trtllm = describe("nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3", kb)
    assert trtllm.cuda == "12.8.0.038" and ("tritonserver", "TensorRT-LLM 0.17.0") in trtllm.facts
    assert ("TensorRT", "10.8.0.43") in trtllm.facts and ("Python", "3.12") in trtllm.facts
    assert describe("nvcr.io/nvidia/tritonserver:24.04-vllm-python-py3", kb).cuda == "12.4.1"
    assert describe("nvcr.io/nvidia/tritonserver:24.03-trtllm-python-py3", kb).cuda is None  # no row: unknown
    # a variant tag names its own release: the plain -py3 record's GPU sentence is not carried over to it
    assert trtllm.min_cc is None and describe("nvcr.io/nvidia/tritonserver:25.01-py3", kb).min_cc == "7.5"
    # CUDA 13.0 on a CUDA 12.8 GeForce driver: no forward compatibility
    assert _result(RTX5090_570, "nvcr.io/nvidia/tritonserver:25.11-trtllm-python-py3").verdict.value == "fail"

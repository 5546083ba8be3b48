"""The non-torch framework knowledge base: every file parses, every record is sourced and well-formed, and the
well-known facts users rely on are what the sources say."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from gpuvet.tomlfile import load_toml

DATA = Path(__file__).resolve().parents[2] / "src" / "gpuvet" / "kb" / "data"
FRAMEWORK_FILES = ["tensorflow", "jax", "paddle", "mindspore", "vllm", "flash_attn", "xformers", "deepspeed",
                   "bitsandbytes", "tensorrt_llm", "sglang"]


def _load(name):
    return load_toml(DATA / "frameworks" / (name + ".toml"))


@pytest.fixture(scope="module", params=FRAMEWORK_FILES)
def framework_file(request):
    return request.param, _load(request.param)


def _release(name, version):
    for release in _load(name)["release"]:
        if release["version"] == version:
            return release
    raise AssertionError("%s %s not in the knowledge base" % (name, version))


def _variant(release, name):
    for variant in release["variant"]:
        if variant["name"] == name:
            return variant
    raise AssertionError("variant %s not in %s" % (name, release["version"]))


def _cc(text):
    major, minor = text.split(".")
    return int(major), int(minor)


# --- structure ------------------------------------------------------------------------------------------------------

def test_framework_header_is_complete(framework_file):
    _, data = framework_file
    fw = data["framework"]
    for key in ("name", "display", "distributions", "source"):
        assert fw[key], key
    assert fw["name"] == fw["name"].lower()


def test_every_record_has_a_source(framework_file):
    _, data = framework_file
    for release in data["release"]:
        assert release["source"].strip(), release["version"]
        assert release["variant"], "release %s has no variant" % release["version"]
        for variant in release["variant"]:
            assert variant["source"].strip(), (release["version"], variant["name"])
            assert variant["install"].strip(), (release["version"], variant["name"])


def test_versions_and_python_ranges_parse(framework_file):
    _, data = framework_file
    for release in data["release"]:
        Version(release["version"])
        SpecifierSet(release["python"])
        for key in ("numpy", "protobuf"):
            if key in release:
                SpecifierSet(release[key])
        for spec in release.get("requires", {}).values():
            SpecifierSet(spec)
        for variant in release["variant"]:
            for key in ("cuda", "cudnn", "nccl", "min_driver", "cuda_min"):
                if key in variant:
                    Version(variant[key])
            for arch in variant.get("sass", []):
                assert arch.startswith("sm_") and arch[3:].isdigit(), arch
            for arch in variant.get("ptx", []):
                assert arch.startswith("compute_") and arch[8:].isdigit(), arch


def test_releases_sorted_newest_first_without_duplicates(framework_file):
    _, data = framework_file
    versions = [Version(r["version"]) for r in data["release"]]
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions)


def test_default_variant_exists_and_variant_names_unique(framework_file):
    _, data = framework_file
    for release in data["release"]:
        names = [v["name"] for v in release["variant"]]
        assert len(set(names)) == len(names), release["version"]
        assert release["default_variant"] in names, release["version"]


def test_compute_capabilities_are_major_minor(framework_file):
    _, data = framework_file
    for release in data["release"]:
        for holder in [release] + release["variant"]:
            for key in ("min_compute_capability", "max_compute_capability"):
                if key in holder:
                    _cc(holder[key])
            for floor in holder.get("features", {}).values():
                _cc(floor)


def test_framework_names_are_unique_across_files():
    names = [_load(f)["framework"]["name"] for f in FRAMEWORK_FILES]
    assert len(set(names)) == len(names)
    distributions = [d for f in FRAMEWORK_FILES for d in _load(f)["framework"]["distributions"]]
    assert len(set(distributions)) == len(distributions)


# --- conflicts and precision ----------------------------------------------------------------------------------------

def test_conflicts_are_well_formed():
    conflicts = load_toml(DATA / "conflicts.toml")["conflict"]
    ids = [c["id"] for c in conflicts]
    assert len(set(ids)) == len(ids)
    for c in conflicts:
        for key in ("explanation", "fix", "source", "code"):
            assert c[key].strip(), (c["id"], key)
        assert c["code"] in ("package_conflict", "toolkit_mismatch")
        for side in ("when", "breaks"):
            assert c[side]["package"]
            SpecifierSet(c[side]["version"])


def test_numpy2_conflicts_match_the_sources():
    conflicts = {c["id"]: c for c in load_toml(DATA / "conflicts.toml")["conflict"]}
    torch = conflicts["numpy2-vs-torch-lt-2.3"]
    assert Version("2.0.0") in SpecifierSet(torch["when"]["version"])
    assert Version("2.2.2") in SpecifierSet(torch["breaks"]["version"])
    assert Version("2.3.0") not in SpecifierSet(torch["breaks"]["version"])
    tf = conflicts["numpy2-vs-tensorflow-lt-2.18"]
    assert Version("2.17.1") in SpecifierSet(tf["breaks"]["version"])
    assert Version("2.18.0") not in SpecifierSet(tf["breaks"]["version"])


def test_precision_features_are_well_formed_and_sourced():
    features = load_toml(DATA / "precision.toml")["feature"]
    ids = [f["id"] for f in features]
    assert len(set(ids)) == len(ids)
    for f in features:
        for key in ("display", "explanation", "alternative", "source", "code"):
            assert f[key].strip(), (f["id"], key)
        _cc(f["min_compute_capability"])


@pytest.mark.parametrize("feature, floor", [
    ("bf16", (8, 0)), ("tf32", (8, 0)), ("fp8", (8, 9)), ("fp16_tensor_cores", (7, 0)),
    ("int8_tensor_cores", (7, 2)), ("flash_attention_2", (8, 0)), ("flash_attention_3", (9, 0)),
    ("flash_attention_1", (7, 5)), ("bnb_llm_int8", (7, 5)),
])
def test_precision_floors(feature, floor):
    features = {f["id"]: f for f in load_toml(DATA / "precision.toml")["feature"]}
    assert _cc(features[feature]["min_compute_capability"]) == floor


# --- spot checks of well-known facts ------------------------------------------------------------------------------

def test_tensorflow_2_15_is_cuda_12_2_cudnn_8_9_python_3_9_to_3_11():
    release = _release("tensorflow", "2.15.0")
    variant = _variant(release, release["default_variant"])
    assert (variant["cuda"], variant["cudnn"]) == ("12.2", "8.9")
    python = SpecifierSet(release["python"])
    assert "3.9" in python and "3.11" in python
    assert "3.8" not in python and "3.12" not in python
    assert "and-cuda" in variant["install"]


@pytest.mark.parametrize("version, cuda, cudnn", [
    ("2.4.0", "11.0", "8.0"), ("2.10.0", "11.2", "8.1"), ("2.13.0", "11.8", "8.6"), ("2.14.0", "11.8", "8.7"),
    ("2.16.1", "12.3", "8.9"), ("2.18.0", "12.5", "9.3"), ("2.21.0", "12.5", "9.3"),
])
def test_tensorflow_build_table(version, cuda, cudnn):
    release = _release("tensorflow", version)
    variant = _variant(release, release["default_variant"])
    assert (variant["cuda"], variant["cudnn"]) == (cuda, cudnn)


def test_tensorflow_windows_gpu_ends_at_2_10_and_avx_is_required():
    # One rule for every framework: the file's [[windows]] records (compat.windows_build); TensorFlow 2.11.1 release
    # notes: "TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows".
    from gpuvet.kb.compat import windows_build

    records = _load("tensorflow")["windows"]
    assert windows_build(records, "2.10.1").cuda is True
    assert windows_build(records, "2.11.0").cuda is False
    assert all("avx" in r["cpu_isa"] for r in _load("tensorflow")["release"])


def test_tensorflow_numpy_pins_follow_the_metadata():
    assert Version("2.0") not in SpecifierSet(_release("tensorflow", "2.17.0")["numpy"])
    assert Version("2.0") in SpecifierSet(_release("tensorflow", "2.18.0")["numpy"])
    assert _release("tensorflow", "2.17.0")["min_compute_capability"] == "6.0"


def test_tensorflow_official_builds_carry_ptx_only_for_9_0():
    variant = _variant(_release("tensorflow", "2.18.0"), "cuda12")
    assert variant["sass"] == ["sm_60", "sm_70", "sm_80", "sm_89"]
    assert variant["ptx"] == ["compute_90"]


def test_jax_cuda_plugins():
    release = _release("jax", "0.8.0")
    assert release["default_variant"] == "cpu"
    cuda12, cuda13 = _variant(release, "cuda12"), _variant(release, "cuda13")
    assert cuda12["min_compute_capability"] == "5.2" and cuda13["min_compute_capability"] == "7.5"
    assert Version(cuda12["min_driver"]) == Version("525.60.13")
    assert Version(cuda13["min_driver"]) <= Version("580.65.06")
    assert Version("9.8") in SpecifierSet(cuda12["cudnn_range"])
    assert "jax[cuda13]==0.8.0" in cuda13["install"]
    assert "3.10" not in SpecifierSet(release["python"])


def test_jax_cuda11_ends_before_0_4_26():
    assert "cuda11" in {v["name"] for v in _release("jax", "0.4.23")["variant"]}
    assert "cuda11" not in {v["name"] for v in _release("jax", "0.4.26")["variant"]}


def test_vllm_0_6_3_pins_torch_2_4_0_on_cuda_12_1():
    release = _release("vllm", "0.6.3")
    assert release["requires"]["torch"] == "==2.4.0"
    assert _variant(release, release["default_variant"])["cuda"] == "12.1"
    assert release["min_compute_capability"] == "7.0"


def test_vllm_drops_volta_from_0_20():
    assert _release("vllm", "0.17.0")["min_compute_capability"] == "7.0"
    assert _release("vllm", "0.20.0")["min_compute_capability"] == "7.5"
    assert _variant(_release("vllm", "0.20.0"), "cu130")["cuda"] == "13.0"


def test_flash_attention_2_needs_ampere_and_names_alternatives():
    for release in _load("flash_attn")["release"]:
        if Version(release["version"]).major == 2:
            assert release["min_compute_capability"] == "8.0"
            assert any("SDPA" in alt for alt in release["alternatives"])
    assert _release("flash_attn", "1.0.9")["min_compute_capability"] == "7.5"


def test_xformers_pins_one_torch():
    assert _release("xformers", "0.0.27.post2")["requires"]["torch"] == "==2.4.0"
    assert _release("xformers", "0.0.28.post3")["requires"]["torch"] == "==2.5.1"


def test_deepspeed_toolkit_must_match_torch():
    release = _release("deepspeed", "0.19.8")
    assert release["toolkit_major_must_match"] == "torch"
    assert "12.7" not in release["cuda_minor_mismatch_ok"]["12"]
    assert release["cuda_minor_mismatch_ok"]["13"] == []


def test_bitsandbytes_floors():
    release = _release("bitsandbytes", "0.48.2")
    assert release["min_compute_capability"] == "6.0"
    assert release["features"]["llm_int8"] == "7.5"
    assert "13.0" in release["cuda_libs"]


def test_paddle_variants_and_install_idiom():
    release = _release("paddle", "2.6.1")
    assert {v["name"] for v in release["variant"]} == {"cu112", "cu116", "cu117", "cu118", "cu120"}
    cu120 = _variant(release, "cu120")
    assert (cu120["cuda"], cu120["cudnn"]) == ("12.0", "8.9")
    assert "paddlepaddle-gpu==2.6.1.post120" in cu120["install"]
    assert "-i https://www.paddlepaddle.org.cn/packages/stable/cu126/" in _variant(_release("paddle", "3.2.0"), "cu126")["install"]


def test_mindspore_gpu_ends_at_2_2_14():
    assert _release("mindspore", "2.2.14")["gpu"] is True
    newer = [r for r in _load("mindspore")["release"] if Version(r["version"]) >= Version("2.3")]
    assert newer and all(r["gpu"] is False and all("cuda" not in v for v in r["variant"]) for r in newer)


def test_tensorrt_llm_needs_ampere():
    assert all(r["min_compute_capability"] == "8.0" for r in _load("tensorrt_llm")["release"])

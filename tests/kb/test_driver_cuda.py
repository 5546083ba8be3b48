import re

from gpuvet.kb import load, loader

kb = load()


def test_meta():
    # the one place the knowledge base's version and date live is kb/data/meta.toml; the version names its month
    meta = loader.raw(loader.DATA_DIR / "meta.toml")["kb"]
    assert (kb.version, kb.updated) == (meta["version"], meta["updated"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", kb.updated) and kb.version == kb.updated[:7].replace("-", ".")


def test_cu12_floor_is_minor_version_compat_family_minimum():
    floor = kb.min_driver_for_cuda("12.1")
    assert floor.minimum == "525.60.13"
    assert floor.toolkit_driver == "530.30.02"
    assert floor.minor_compat
    assert "minor-version-compatibility" in floor.source


def test_component_and_update_versions_map_to_the_toolkit():
    assert kb.min_driver_for_cuda("12.1.105").toolkit_driver == "530.30.02"
    assert kb.min_driver_for_cuda("12.2.2").toolkit_driver == "535.104.05"
    assert kb.min_driver_for_cuda("12.2").toolkit_driver == "535.54.03"


def test_family_floors_12_vs_13():
    assert kb.min_driver_for_cuda("12.9").minimum == "525.60.13"
    assert kb.min_driver_for_cuda("13.0").minimum == "580.65.06"
    assert kb.min_driver_for_cuda("13.2").minimum == "580.65.06"
    assert kb.min_driver_for_cuda("11.8").minimum == "450.80.02"


def test_pre_11_has_no_minor_compat():
    floor = kb.min_driver_for_cuda("10.2")
    assert floor.minimum == "440.33" and not floor.minor_compat


def test_windows_column():
    assert kb.min_driver_for_cuda("12.4", os="windows").minimum == "527.41"
    assert kb.min_driver_for_cuda("12.4", os="windows").toolkit_driver == "551.61"


def test_unknown_cuda_versions_are_none():
    assert kb.min_driver_for_cuda("12.7") is None  # there is no CUDA 12.7 toolkit
    assert kb.min_driver_for_cuda("14.0") is None
    assert kb.min_driver_for_cuda("garbage") is None


def test_cuda_for_driver_boundaries_and_four_part_versions():
    assert kb.cuda_for_driver("535.104.05") == "12.2"
    assert kb.cuda_for_driver("525.60.13") == "12.0"
    assert kb.cuda_for_driver("565.57.01") == "12.7"
    assert kb.cuda_for_driver("580.65.06") == "13.0"
    assert kb.cuda_for_driver("470.182.03") == "11.4"
    assert kb.cuda_for_driver("535.104.05.1") == "12.2"
    assert kb.cuda_for_driver("999.1") is None  # newer than the KB knows
    assert kb.cuda_for_driver("") is None


def test_driver_at_exact_floor_satisfies_cu12():
    from packaging.version import Version

    floor = kb.min_driver_for_cuda("12.4").minimum
    assert Version("525.60.13") >= Version(floor)
    assert Version("525.60.12") < Version(floor)


def test_driver_branch_for_cuda():
    assert kb.driver_branch_for_cuda("12.2") == "R535 (>= 535.54.03)"
    assert kb.driver_branch_for_cuda("13.0.1") == "R580 (>= 580.65.06)"
    assert kb.driver_branch_for_cuda("9.9") is None


def test_toolkit_archs():
    assert "sm_70" in kb.toolkit_sass("12.9")
    assert "sm_70" not in kb.toolkit_sass("13.0")
    assert kb.cuda_supports_cc("13.0", "7.0") is False
    assert kb.cuda_supports_cc("12.8", "12.0") is True
    assert kb.cuda_supports_cc("12.6", "12.0") is False
    assert kb.cuda_supports_cc("12.7", "8.0") is None

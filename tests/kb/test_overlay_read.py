"""The overlay is read once per process, a framework's files only when that framework is asked (issue 30)."""

import os

from gpuvet.kb import loader, overlay
from gpuvet.sources import harvest


def _record(distribution, version, framework=None):
    return {"framework": framework or harvest.framework_of(distribution), "distribution": distribution,
            "version": version, "platform": "x86_64", "cuda": "12.8",
            "library": [{"file": f"{distribution}/_C.so", "units": [{"count": 1, "sass": ["sm_90"], "ptx": []}]}],
            "wheel": f"{distribution}-{version}-py3-none-any.whl", "sha256": "0" * 64,
            "source": f"test: {distribution} {version}"}


def test_each_file_is_parsed_once_and_only_for_its_framework(tmp_path, monkeypatch):
    for distribution, version in (("torch", "9.0.0"), ("torch", "9.1.0"), ("jax-cuda12-plugin", "9.0.0"),
                                  ("sgl-kernel", "9.0.0")):
        harvest.write_release(tmp_path, [_record(distribution, version)])
    # a file named otherwise (by hand) is read whichever framework is asked
    (tmp_path / "harvested" / "mine.toml").write_text(harvest.to_toml([_record("torch", "9.2.0")]))
    parsed = []
    real = overlay._parse
    monkeypatch.setattr(overlay, "_parse", lambda path: parsed.append(os.path.basename(path)) or real(path))
    location = str(tmp_path)

    builds, problems = overlay.builds_of(location, "torch")
    assert sorted(b["version"] for b in builds) == ["9.0.0", "9.1.0", "9.2.0"] and problems == []
    assert sorted(parsed) == ["mine.toml", "torch-9.0.0.toml", "torch-9.1.0.toml"]
    assert builds[0]["overlay_file"] == str(tmp_path / "harvested" / "mine.toml")
    del parsed[:]
    assert [b["version"] for b in overlay.builds_of(location + "/", "jax")[0]] == ["9.0.0"]
    assert [b["distribution"] for b in overlay.builds_of(location, "sgl-kernel")[0]] == ["sgl-kernel"]
    assert sorted(parsed) == ["jax-cuda12-plugin-9.0.0.toml", "sgl-kernel-9.0.0.toml"]  # mine.toml: already read
    del parsed[:]
    assert len(overlay.builds_of(location, "torch")[0]) == 3 and parsed == []  # nothing parsed twice

    # a changed file is read again, a removed one forgotten, a new one read: the kb commands write in-process
    harvest.write_release(tmp_path, [dict(_record("torch", "9.1.0"), sha256="1" * 64, cuda="13.0")])
    (tmp_path / "harvested" / "mine.toml").unlink()
    harvest.write_release(tmp_path, [_record("torch", "9.3.0")])
    builds, _ = overlay.builds_of(location, "torch")
    assert {b["version"]: b["cuda"] for b in builds} == {"9.0.0": "12.8", "9.1.0": "13.0", "9.3.0": "12.8"}
    assert sorted(parsed) == ["torch-9.1.0.toml", "torch-9.3.0.toml"]

    everything, _ = overlay.read(tmp_path)  # kb status / update: every build, as before
    assert sorted((b["framework"], b["version"]) for b in everything) == [
        ("jax", "9.0.0"), ("sgl-kernel", "9.0.0"), ("torch", "9.0.0"), ("torch", "9.1.0"), ("torch", "9.3.0")]


def test_the_loader_takes_only_its_frameworks_builds(tmp_path, monkeypatch):
    harvest.write_release(tmp_path, [_record("torch", "9.0.0")])
    harvest.write_release(tmp_path, [_record("vllm", "9.0.0")])
    (tmp_path / "harvested" / "broken.toml").write_text("[[build]\n")
    monkeypatch.setenv("GPUVET_KB_OVERLAY", str(tmp_path))
    loader._harvested_of.cache_clear()
    try:
        assert ("9.0.0", "x86_64") in loader._harvested_of("torch")
        assert loader._harvested_of("vllm")[("9.0.0", "x86_64")][0]["distribution"] == "vllm"
        assert all(b["framework"] == "vllm" for builds in loader._harvested_of("vllm").values() for b in builds)
        _, problems = overlay.read(tmp_path)
        assert len(problems) == 1 and "broken.toml: cannot be read" in problems[0]  # never an exception
    finally:
        loader._harvested_of.cache_clear()

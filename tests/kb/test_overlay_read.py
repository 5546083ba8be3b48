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
    loader.forget_harvest()
    try:
        assert ("9.0.0", "x86_64") in loader._harvested_of("torch")
        assert loader._harvested_of("vllm")[("9.0.0", "x86_64")][0]["distribution"] == "vllm"
        assert all(b["framework"] == "vllm" for builds in loader._harvested_of("vllm").values() for b in builds)
        _, problems = overlay.read(tmp_path)
        assert len(problems) == 1 and "broken.toml: cannot be read" in problems[0]  # never an exception
    finally:
        loader.forget_harvest()


def test_a_release_asked_alone_is_the_one_a_walk_finds(tmp_path, monkeypatch):
    """A check asks for one release: it is made alone, reading only the overlay files named for it (and files named
    otherwise), and it is the very release a walk over all of them finds (issue 30)."""
    shipped = next(b for b in loader.raw(loader.data_path("harvested", "torch.toml"))["build"]
                   if b["framework"] == "torch" and b.get("platform") == "x86_64")
    for version in ("9.0.0", "9.1.0", "9.10.0"):
        harvest.write_release(tmp_path, [_record("torch", version)])
    # the shipped release read differently: the shipped reading stays, its source says the user's differs
    harvest.write_release(tmp_path, [dict(_record("torch", shipped["version"]), sha256="2" * 64)])
    (tmp_path / "harvested" / "mine.toml").write_text(harvest.to_toml([_record("torch", "9.2.0")]))
    monkeypatch.setenv("GPUVET_KB_OVERLAY", str(tmp_path))
    parsed = []
    real = overlay._parse
    monkeypatch.setattr(overlay, "_parse", lambda path: parsed.append(os.path.basename(path)) or real(path))
    overlay._READ.clear()
    loader.forget_harvest()
    try:
        torch = loader.framework_from(loader.find_framework_file("torch"))
        alone = {version: torch.release(version) for version in ("9.1", "9.2.0", shipped["version"])}
        assert sorted(parsed) == ["mine.toml", f"torch-{shipped['version']}.toml", "torch-9.1.0.toml"]
        assert torch.release("9.3.0") is None and torch.release("9.1.0") is alone["9.1"]

        overlay._READ.clear()
        loader.forget_harvest()
        walked = loader.framework_from(loader.find_framework_file("torch")).releases
        assert [r.version for r in walked][:4] == ["9.10.0", "9.2.0", "9.1.0", "9.0.0"]  # newest first, as ever
        parse = loader.versions.parse
        assert alone == {version: next(r for r in walked if parse(r.version) == parse(version)) for version in alone}
        assert "user overlay" in alone[shipped["version"]].default.source  # the disagreement, asked alone too
        assert alone["9.1"].extra["overlay_file"] == str(tmp_path / "harvested" / "torch-9.1.0.toml")
    finally:
        overlay._READ.clear()
        loader.forget_harvest()


def test_the_overlay_path_is_spelled_as_pathlib_spells_it():
    from pathlib import Path

    for location in ("/", "//", "///", "/a/b/", "a//b/./c", "./", ".", "//a//b", "///a", "a/../b", "~/x", "rel"):
        assert overlay.spelled(location) == str(Path(location))

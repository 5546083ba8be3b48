"""The overlay's JSON twins (issue 30): write_release writes one beside each release file, made as the shipped data's
are (gpuvet.tomlfile.refresh_twin); the reader uses it only while it carries the sha256 of the TOML read now."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from gpuvet import tomlfile
from gpuvet.kb import overlay
from gpuvet.sources import harvest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")


def _record(version="9.0.0", cuda="12.8"):
    return {"framework": "torch", "distribution": "torch", "version": version, "platform": "x86_64", "cuda": cuda,
            "library": [{"file": "torch/_C.so", "units": [{"count": 1, "sass": ["sm_90"], "ptx": []}]}],
            "wheel": f"torch-{version}-py3-none-any.whl", "sha256": "0" * 64, "read_on": "2026-12-05",
            "source": f"test: torch {version}"}


@pytest.fixture
def release(tmp_path):
    path, changed = harvest.write_release(tmp_path, [_record()])
    assert changed
    yield path
    overlay._READ.pop(str(tmp_path), None)


@pytest.fixture
def no_toml_parse(monkeypatch):
    """Count the TOML parses the loader makes (gpuvet.tomlfile.parse_toml_bytes is the one it calls)."""
    parsed = []
    real = tomlfile.parse_toml_bytes
    monkeypatch.setattr(tomlfile, "parse_toml_bytes", lambda data: parsed.append(data) or real(data))
    return parsed


def test_write_release_writes_the_twin(release):
    twin = release.parent / tomlfile.COMPILED_DIR / (release.stem + ".json")
    assert twin == tomlfile.compiled_path(release) and twin.is_file()
    data = release.read_bytes()
    compiled = json.loads(twin.read_text(encoding="utf-8"))
    assert compiled["sha256"] == hashlib.sha256(data).hexdigest()
    assert compiled["document"] == tomlfile.loads_toml(data.decode())
    assert twin.read_text(encoding="utf-8") == tomlfile.compile_bytes(data)  # the shipped data's maker, no copy
    assert sorted(os.listdir(twin.parent)) == [twin.name]  # no scratch left


def test_a_fresh_twin_is_used(release, no_toml_parse):
    builds, problems = overlay.builds_of(str(release.parent.parent), "torch")
    assert [(b["version"], b["cuda"]) for b in builds] == [("9.0.0", "12.8")] and problems == []
    assert builds[0]["overlay_file"] == str(release)
    assert no_toml_parse == []


def test_a_twin_is_ignored_once_the_toml_changed(release, no_toml_parse):
    location = str(release.parent.parent)
    assert overlay.builds_of(location, "torch")[0][0]["cuda"] == "12.8"
    # edited by hand (same size), its mtime moved on: the same process reads the TOML, not the stale twin
    release.write_text(release.read_text(encoding="utf-8").replace('"12.8"', '"13.0"'), encoding="utf-8")
    stat = os.stat(release)
    os.utime(release, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10 ** 9))
    assert overlay.builds_of(location, "torch")[0][0]["cuda"] == "13.0"
    assert len(no_toml_parse) == 1
    assert tomlfile.load_toml(release)["build"][0]["cuda"] == "13.0"
    # and a new process
    code = ("import sys; from gpuvet.kb import overlay; "
            "print(overlay.builds_of(sys.argv[1], 'torch')[0][0]['cuda'])")
    done = subprocess.run([sys.executable, "-c", code, location], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=SRC), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "13.0"


@pytest.mark.parametrize("text", ["{not json", "", '{"sha256": "x"}', "[]"])
def test_a_corrupt_twin_falls_back_to_the_toml(release, no_toml_parse, text):
    tomlfile.compiled_path(release).write_text(text, encoding="utf-8")
    builds, problems = overlay.builds_of(str(release.parent.parent), "torch")
    assert [b["cuda"] for b in builds] == ["12.8"] and problems == []
    assert len(no_toml_parse) == 1


def test_a_twin_with_the_right_hash_but_no_document_falls_back(release, no_toml_parse):
    sha = hashlib.sha256(release.read_bytes()).hexdigest()
    tomlfile.compiled_path(release).write_text(json.dumps({"sha256": sha, "document": []}), encoding="utf-8")
    assert tomlfile.load_toml(release)["build"][0]["cuda"] == "12.8"
    assert len(no_toml_parse) == 1


def test_a_rewrite_refreshes_the_twin_and_an_unchanged_release_restores_a_lost_one(release):
    twin = tomlfile.compiled_path(release)
    harvest.write_release(release.parent.parent, [dict(_record(), sha256="1" * 64, cuda="13.0")])
    assert json.loads(twin.read_text())["document"]["build"][0]["cuda"] == "13.0"
    twin.unlink()
    path, changed = harvest.write_release(release.parent.parent, [dict(_record(), sha256="1" * 64, cuda="13.0")])
    assert not changed and twin.read_text(encoding="utf-8") == tomlfile.compile_bytes(path.read_bytes())


def test_a_twin_that_cannot_be_written_costs_speed_only(tmp_path):
    (tmp_path / "harvested").mkdir()
    (tmp_path / "harvested" / tomlfile.COMPILED_DIR).write_text("a file where the folder would be")
    path, changed = harvest.write_release(tmp_path, [_record()])
    assert changed and path.is_file()
    builds, problems = overlay.builds_of(str(tmp_path), "torch")
    assert [b["cuda"] for b in builds] == ["12.8"] and problems == []
    overlay._READ.pop(str(tmp_path), None)

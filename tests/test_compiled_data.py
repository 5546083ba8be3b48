"""The shipped data's JSON twins (tools/compile_data.py) are current and say exactly what their TOML says; a stale
twin is never used (the loader checks the TOML's sha256), only slower."""

import json
import subprocess
import sys
from pathlib import Path

from gpuvet.tomlfile import compiled_path, load_toml, parse_toml_bytes

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "src" / "gpuvet" / "kb" / "data" / "frameworks" / "torch.toml"


def test_every_compiled_twin_is_current():
    done = subprocess.run([sys.executable, str(REPO / "tools" / "compile_data.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_twin_is_what_the_toml_says():
    twin = json.loads(compiled_path(DATA).read_text(encoding="utf-8"))
    assert twin["document"] == parse_toml_bytes(DATA.read_bytes())
    assert load_toml(DATA) == twin["document"]


def test_a_stale_twin_is_not_used(tmp_path):
    toml = tmp_path / "x.toml"
    toml.write_text('answer = 42\n')
    twin = compiled_path(toml)
    twin.parent.mkdir()
    twin.write_text(json.dumps({"sha256": "0" * 64, "document": {"answer": 41}}))
    assert load_toml(toml) == {"answer": 42}


def test_the_heads_index_is_used_only_for_the_file_it_was_made_from(tmp_path, monkeypatch):
    """Finding the installed frameworks reads each framework file's names from the heads index (issue 30), and
    only while the file has the sha256 the index was made from: an edited file is read whole."""
    from gpuvet.kb import loader, places
    from gpuvet.kb.records import FrameworkHead

    torch = loader.find_framework_file("torch")
    from_files = {path: FrameworkHead(str(loader.raw(path)["framework"]["name"]),
                                      tuple(loader.raw(path)["framework"]["distributions"]))
                  for path in loader.framework_files().values()}
    places.shipped_framework_heads.cache_clear()
    try:
        assert loader.framework_heads() == from_files  # the shipped index says what the files say
        index = json.loads(Path(loader.HEADS).read_text(encoding="utf-8"))
        index["torch.toml"]["name"] = "from-the-index"
        index["vllm.toml"].update(name="stale", sha256="0" * 64)
        heads = tmp_path / "heads.json"
        heads.write_text(json.dumps(index))
        monkeypatch.setattr(places, "HEADS", str(heads))
        places.shipped_framework_heads.cache_clear()
        found = loader.framework_heads()
        assert found[torch].name == "from-the-index"  # the entry of an unchanged file is what is read
        assert found[loader.find_framework_file("vllm")] == from_files[loader.find_framework_file("vllm")]
        heads.write_text("not json")
        places.shipped_framework_heads.cache_clear()
        assert loader.framework_heads() == from_files  # no usable index: every file read whole
    finally:
        places.shipped_framework_heads.cache_clear()

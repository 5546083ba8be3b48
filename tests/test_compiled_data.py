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

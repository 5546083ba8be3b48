"""The prepared signature index (tools/compile_data.py): used only when made from exactly the data files read, and a
pattern's regex is compiled only when the literals it needs occur in the log."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from gpuvet.diagnose.engine import diagnose_text
from gpuvet.diagnose.signatures import DATA_DIR, index_path, load_signatures

SRC = Path(__file__).resolve().parents[2] / "src"

# In a fresh interpreter: load the shipped signatures, diagnose a short log, report which regexes were compiled.
PROBE = """
import json, sys
from gpuvet.diagnose.signatures import compiled, load_signatures
from gpuvet.diagnose.engine import diagnose_text
base = load_signatures()
loaded = compiled.cache_info().currsize
codes = [d.code for d in diagnose_text(sys.stdin.read(), base=base)]
print(json.dumps({"loaded": loaded, "after": compiled.cache_info().currsize, "codes": codes}))
"""

LOG = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
       "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")


def _probe(log: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], input=log, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_loading_the_shipped_signatures_compiles_no_pattern():
    assert index_path(DATA_DIR).is_file()
    assert _probe("hello\n")["loaded"] == 0


def test_only_the_patterns_whose_words_occur_are_compiled():
    quiet = _probe("epoch 1 loss 0.3\nepoch 2 loss 0.2\n")
    assert quiet["after"] == 0 and quiet["codes"] == []
    found = _probe(LOG)
    assert found["codes"][:1] == ["arch_not_in_build"]
    total = sum(len(s.scan) for s in load_signatures().signatures)
    assert 0 < found["after"] < total / 20  # a handful, not the ~1,400 of the whole vocabulary


def test_a_stale_index_is_not_used(tmp_path):
    folder = tmp_path / "data"
    shutil.copytree(DATA_DIR, folder)
    # the copied index is current for the copied files: the shipped reading
    assert [d.code for d in diagnose_text(LOG, base=load_signatures(str(folder)))][:1] == ["arch_not_in_build"]
    (folder / "extra.toml").write_text(
        '[[signature]]\nid = "test_only_marker"\ncode = "health_problem"\nweight = 1.0\n'
        "patterns = ['zebra marker line']\nsource = \"https://example.org/\"\n")
    base = load_signatures(str(folder) + "/")  # another cache key: read again
    assert "test_only_marker" in {s.id for s in base.signatures}
    assert [d.code for d in diagnose_text("zebra marker line\n", base=base)] == ["health_problem"]
    # and the index on disk still says what it was made from: the loader never writes it
    assert "test_only_marker" not in index_path(folder).read_text()


def test_the_index_holds_every_signature_in_id_order():
    document = json.loads(index_path(DATA_DIR).read_text(encoding="utf-8"))
    ids = [s["id"] for s in document["signatures"]]
    assert ids == sorted(ids) and len(ids) == len(set(ids)) > 500

"""Environments the test damages itself, the way interrupted installs do: a CUDA library cut short, one deleted, a
.dist-info without METADATA, two copies of one package. The probe (standard library only, also on Python 3.6) names
each; check turns them into findings whose fix reinstalls that exact release."""

import base64
import hashlib
import json
import subprocess
from pathlib import Path

from gpuvet.checks import run_checks
from gpuvet.probe import damage

PY36 = Path.home() / ".pyenv/versions/3.6.15/bin/python3"
SRC = Path(__file__).resolve().parents[2] / "src"


def _install(site, name, version, files):
    """A distribution the way pip leaves it: files, METADATA and a RECORD with each file's hash and size."""
    info = site / ("%s-%s.dist-info" % (name.replace("-", "_"), version))
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
    rows = []
    for relative, data in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (relative, digest, len(data)))
    rows.append("%s/RECORD,," % info.name)
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return info


def _damaged(tmp_path):
    site, user = tmp_path / "site-packages", tmp_path / "user-site"
    _install(site, "torch", "2.1.2+cu121", {"torch/__init__.py": b"", "torch/lib/libtorch_cuda.so": b"\x7fELF" + b"\0" * 4000,
                                             "torch/lib/libc10_cuda.so": b"\x7fELF" + b"\0" * 100})
    (site / "torch/lib/libtorch_cuda.so").write_bytes(b"\x7fELF" + b"\0" * 10)  # the download stopped here
    _install(site, "nvidia-cudnn-cu12", "8.9.2.26", {"nvidia/cudnn/lib/libcudnn.so.8": b"\x7fELF" + b"\0" * 50})
    (site / "nvidia/cudnn/lib/libcudnn.so.8").unlink()
    _install(site, "numpy", "1.26.4", {"numpy/__init__.py": b""})
    _install(user, "numpy", "2.0.0", {"numpy/__init__.py": b""})
    half = site / "safetensors-0.4.2.dist-info"
    half.mkdir()
    (half / "RECORD").write_text("")
    return [str(site), str(user)]


def _by_problem(entries):
    return {(e["package"], e["problem"]): e for e in entries}


def test_the_probe_names_every_damage(tmp_path):
    fact = damage.collect(_damaged(tmp_path))
    found = _by_problem(fact["value"])
    cut = found[("torch", "size_mismatch")]
    assert cut["count"] == 1 and cut["files"][0].startswith("torch/lib/libtorch_cuda.so (14 bytes, RECORD says 4004)")
    assert found[("nvidia-cudnn-cu12", "missing_files")]["files"] == ["nvidia/cudnn/lib/libcudnn.so.8"]
    assert found[("numpy", "duplicate")]["count"] == 2 and found[("numpy", "duplicate")]["version"] == "1.26.4"
    assert found[("safetensors", "no_metadata")]["version"] == "0.4.2"
    assert ("torch", "missing_files") not in found  # libc10_cuda.so is whole


def test_the_same_on_python_36_with_the_standard_library_alone(tmp_path):
    dirs = _damaged(tmp_path)
    code = ("import json, sys; sys.path.insert(0, %r); from gpuvet.probe import damage; "
            "print(json.dumps(damage.collect(%r)))" % (str(SRC), dirs))
    done = subprocess.run([str(PY36), "-S", "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _by_problem(json.loads(done.stdout)["value"]) == _by_problem(damage.collect(dirs)["value"])


def test_check_says_which_package_is_damaged_and_how_to_repair_it(tmp_path):
    snapshot = {"schema_version": 1, "kind": "snapshot", "damage": damage.collect(_damaged(tmp_path))}
    damaged = [f for f in run_checks(snapshot, ["torch==2.1.2"]).machine if f.code == "damaged_install"]
    files = [f for f in damaged if f.title.id == "checks.damaged.files.title"]
    assert len(files) == 2 and all(f.severity.value == "fail" for f in files)
    assert "pip install --force-reinstall --no-deps torch==2.1.2+cu121" in [c for f in files for c in f.fix.commands]
    (duplicate,) = [f for f in damaged if f.title.id == "checks.damaged.duplicate.title"]
    assert duplicate.severity.value == "warn"
    (half,) = [f for f in damaged if f.title.id == "checks.damaged.no_metadata.title"]
    assert half.fix.commands[-1].endswith("safetensors==0.4.2")

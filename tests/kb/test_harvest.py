"""``gpuvet kb harvest / update / status`` against a local PEP 503 index, with no network.

The test starts an HTTP server on 127.0.0.1 serving a simple index (HTML, and the JSON form when pip asks for it)
with wheels it builds: ``fakepkg`` carries a shared library compiled by this machine's nvcc and a METADATA with
Requires-Dist pins; the others are broken on purpose (garbage bytes, no METADATA, a truncated body, a server that
stalls). pip runs with no configuration of this machine (PIP_CONFIG_FILE is the null device), HOME and TMPDIR point
into the test's folder, so the test also sees that nothing is written outside the overlay.
"""

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.kb import loader

TAG = "py3-none-manylinux_2_17_x86_64"
# The code units of the _C.so of tests/kb/conftest.py (nvcc 13.0, one .cu file, -gencode for sm_80, sm_90 and
# compute_90), as a harvested record stores them: its .nv_fatbin holds two fatbin containers, k.cu's (SASS sm_80 and
# sm_90, PTX compute_90 of PTX ISA 9.0) and the one nvcc's device-link step adds to every -shared link (nvlink with
# cudadevrt: kernel-less cubins for the same SASS archs, no PTX). Most numerous first, then by SASS, then by PTX.
UNITS = [{"count": 1, "sass": ["sm_80", "sm_90"], "ptx": []},
         {"count": 1, "sass": ["sm_80", "sm_90"], "ptx": ["compute_90"], "isa": {"compute_90": "9.0"}}]
# what kb harvest and kb status say that library carries
CARRIES = "2 code units; SASS sm_80 sm_90; PTX compute_90 (in 1 of 2; ISA 9.0)"
PINS = ["nvidia-cudnn-cu12==9.1.0.70", "nvidia-nccl-cu12==2.21.5", "nvidia-cuda-runtime-cu12==12.4.127",
        "torch==2.5.1"]


def _wheel(name, version, files, metadata=True, pins=PINS, tag=TAG, requires_python=">=3.9"):
    dist = f"{name}-{version}.dist-info"
    members = dict(files)
    if metadata:
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Requires-Python: {requires_python}"]
        lines += [f"Requires-Dist: {pin}" for pin in pins]
        lines.append('Requires-Dist: nvidia-nccl-cu12==9.9.9; platform_machine == "aarch64"')  # another platform's
        lines.append("Requires-Dist: numpy")
        members[f"{dist}/METADATA"] = ("\n".join(lines) + "\n").encode()
    members[f"{dist}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()
    record = []
    for path, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    members[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in members.items():
            zf.writestr(path, data)
    return f"{name}-{version}-{tag}.whl", buffer.getvalue()


class Index:
    """A PEP 503 simple index on 127.0.0.1: {project: [(filename, bytes, mode)]}; mode "ok", "truncate" (a third of
    the body, then the connection closes), "stall" (the project page never answers) or "drip" (the file's body one
    byte every 0.2 s). ``url_for(filename, mode)`` gives a file's link (``/files/<filename>`` by default): a file is
    served by the last segment of its path, so a link may carry anything before it and a query after."""

    def __init__(self, projects, url_for=None):
        self.projects = projects
        self.requests = []
        self.url_for = url_for or (lambda filename, mode: f"/files/{filename}")
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                index.requests.append(self.path)
                parts = [p for p in self.path.split("?")[0].split("/") if p]
                if parts[:1] == ["simple"] and len(parts) == 2:
                    project = loader.normalize_name(parts[1])
                    if project not in index.projects:
                        return self._send(404, b"no", "text/plain")
                    files = index.projects[project]
                    if any(mode == "stall" for _, _, mode in files):
                        time.sleep(30)
                        return
                    if "application/vnd.pypi.simple.v1+json" in (self.headers.get("Accept") or ""):
                        doc = {"meta": {"api-version": "1.0"}, "name": project,
                               "files": [{"filename": f, "url": index.url_for(f, m),
                                          "hashes": {"sha256": hashlib.sha256(d).hexdigest()} if m == "ok" else {}}
                                         for f, d, m in files]}
                        return self._send(200, json.dumps(doc).encode(), "application/vnd.pypi.simple.v1+json")
                    links = "".join(f'<a href="{index.url_for(f, m)}">{f}</a><br/>' for f, _, m in files)
                    return self._send(200, f"<html><body>{links}</body></html>".encode(), "text/html")
                if parts[:1] == ["files"] and len(parts) >= 2:
                    for files in index.projects.values():
                        for filename, data, mode in files:
                            if filename == parts[-1]:
                                if mode == "drip":
                                    self.send_response(200)
                                    self.send_header("Content-Length", str(len(data)))
                                    self.end_headers()
                                    try:
                                        for byte in data[:300]:
                                            self.wfile.write(bytes([byte]))
                                            self.wfile.flush()
                                            time.sleep(0.2)
                                    except OSError:
                                        pass
                                    return
                                if mode == "truncate":
                                    self.send_response(200)
                                    self.send_header("Content-Type", "application/octet-stream")
                                    self.send_header("Content-Length", str(len(data)))
                                    self.end_headers()
                                    self.wfile.write(data[: len(data) // 3])
                                    self.wfile.flush()
                                    self.close_connection = True
                                    return
                                return self._send(200, data, "application/octet-stream")
                return self._send(404, b"no", "text/plain")

            def _send(self, code, body, kind):
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def index(cuda_so):
    so = cuda_so.read_bytes()
    good = _wheel("fakepkg", "1.0", {"fakepkg/__init__.py": b"", "fakepkg/_C.so": so,
                                      "fakepkg/libbroken.so": b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"junk"})
    newer = _wheel("fakepkg", "1.1", {"fakepkg/__init__.py": b"", "fakepkg/_C.so": so})
    served = Index({
        "fakepkg": [good + ("ok",), newer + ("ok",)],
        "corruptpkg": [(f"corruptpkg-1.0-{TAG}.whl", b"PK\x03\x04 this is not a zip file" * 50, "ok")],
        "nometa": [_wheel("nometa", "1.0", {"nometa/__init__.py": b""}, metadata=False) + ("ok",)],
        "truncpkg": [_wheel("truncpkg", "1.0", {"truncpkg/_C.so": so}) + ("truncate",)],
        "stallpkg": [_wheel("stallpkg", "1.0", {"stallpkg/__init__.py": b""}) + ("stall",)],
        # torch 1.0-1.3 have cp27 and cp35-cp37 wheels only
        "oldpkg": [_wheel("oldpkg", "1.0", {"oldpkg/__init__.py": b""}, pins=[], tag="cp37-cp37m-manylinux1_x86_64",
                          requires_python=">=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*, !=3.4.*") + ("ok",)],
        # a release of a covered framework that the shipped data lacks (vLLM starts at 0.4.0 there): its wheel
        # pins torch and carries kernels for sm_80 / sm_90 and PTX compute_90, like vLLM's own wheels
        "vllm": [_wheel("vllm", "0.2.6", {"vllm/__init__.py": b"", "vllm/_C.abi3.so": so},
                        pins=["torch==2.3.0", "xformers==0.0.26.post1"]) + ("ok",)],
        # pure-Python SGLang wheels that pin no torch but a vLLM range in their [srt] extra, as 0.4.2.post4 and 0.4.1
        # did (their METADATA, PyPI): every vLLM of the first range pins torch 2.5.1 (CUDA 12.4); the second spans
        # vllm 0.6.3.post1 (torch 2.4.0, CUDA 12.1) and 0.6.4 (torch 2.5.1, CUDA 12.4)
        "sglang": [_wheel("sglang", "0.0.90", {"sglang/__init__.py": b""}, tag="py3-none-any",
                          pins=['vllm<=0.7.2,>=0.6.4.post1; extra == "srt"', 'vllm==0.6.7.dev2; extra == "srt-hip"']) + ("ok",),
                   _wheel("sglang", "0.0.91", {"sglang/__init__.py": b""}, tag="py3-none-any",
                          pins=['vllm<=0.6.4.post1,>=0.6.3.post1; extra == "srt"']) + ("ok",)],
    })
    served.good = good
    yield served
    served.close()


from kb.conftest import _fresh_kb  # noqa: E402  (the sandbox fixture lives there)


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if p.is_file())


def test_harvest_reads_what_gpuvet_archs_reads(index, cuda_so, sandbox, capsys):
    assert main(["archs", str(cuda_so), "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)["files"][0]
    assert expected["sass"] == ["sm_80", "sm_90"] and expected["ptx"] == ["compute_90"]
    overlay = sandbox / "overlay"
    code = main(["kb", "harvest", "fakepkg==1.0", "--index-url", index.url, "--overlay", str(overlay), "-f", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    row = json.loads(captured.out)["harvested"][0]
    assert expected["units"] == UNITS
    assert row["library"] == [{"file": "fakepkg/_C.so", "units": UNITS}]  # libbroken.so carries no code read
    assert "sass" not in row and "ptx" not in row and "members" not in row  # no pooled lists: the libraries say it
    assert row["sha256"] == hashlib.sha256(index.good[1]).hexdigest() and row["wheel"] == index.good[0]
    assert row["requires"] == PINS  # the aarch64-only pin and the unpinned numpy are left out
    assert (row["cudnn"], row["nccl"], row["cuda"], row["requires_torch"]) == ("9.1.0.70", "2.21.5", "12.4", "2.5.1")
    assert row["requires_python"] == ">=3.9" and row["index_url"] == index.url
    assert "fakepkg/libbroken.so" in row["unreadable"] and row["unreadable"]["fakepkg/libbroken.so"].startswith("unreadable")
    # nothing outside the overlay: HOME (pip's cache, XDG) and TMPDIR are as empty as before
    assert _files(sandbox / "home") == [] and _files(sandbox / "tmp") == []
    assert _files(overlay) == ["harvested/__compiled__/fakepkg-1.0.json", "harvested/fakepkg-1.0.toml"]  # + JSON twin
    first = (overlay / "harvested" / "fakepkg-1.0.toml").read_bytes()
    # the overlay's record carries the library, unit by unit, as one TOML line
    assert ('library = [{ "file" = "fakepkg/_C.so", "units" = [{ "count" = 1, "sass" = ["sm_80", "sm_90"], '
            '"ptx" = [] }, { "count" = 1, "sass" = ["sm_80", "sm_90"], "ptx" = ["compute_90"], '
            '"isa" = { "compute_90" = "9.0" } }] }]\n') in first.decode()
    # the same release again: nothing changes; the text says the archs and what the library carries
    assert main(["kb", "harvest", "fakepkg==1.0", "--index-url", index.url, "--overlay", str(overlay)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:4] == ["  sass: sm_80 sm_90", "  ptx:  compute_90", "  library fakepkg/_C.so: " + CARRIES]
    assert lines[4].endswith("(unchanged)") and len(lines) == 5
    assert (overlay / "harvested" / "fakepkg-1.0.toml").read_bytes() == first
    assert _files(overlay) == ["harvested/__compiled__/fakepkg-1.0.json", "harvested/fakepkg-1.0.toml"]


def test_status_shows_the_overlay_and_the_loader_reads_it(index, sandbox, capsys, monkeypatch):
    overlay = sandbox / "home" / "data" / "gpuvet" / "kb"  # the XDG default
    assert main(["kb", "harvest", "fakepkg==1.0", "--index-url", index.url]) == 0
    capsys.readouterr()
    assert main(["kb", "status", "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["overlay"]["path"] == str(overlay) and doc["overlay"]["exists"]
    (build,) = doc["overlay"]["builds"]
    assert build["status"] == "adds" and build["library"] == [{"file": "fakepkg/_C.so", "units": UNITS}]
    assert not build["usable"]  # no framework gpuvet covers
    assert doc["kb"]["version"] == loader.raw(loader.DATA_DIR / "meta.toml")["kb"]["version"]
    loader.forget_harvest()
    assert loader._harvested_of("fakepkg")[("1.0", "x86_64")][0]["sha256"] == build["sha256"]
    assert main(["kb", "status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"Overlay: {overlay} (exists)" in out
    at = out.index("  adds      fakepkg 1.0 x86_64: sass sm_80 sm_90, ptx compute_90; not used by check (no framework "
                   "gpuvet covers, no CUDA code read, or its CUDA cannot be told)")
    assert out[at + 1].startswith(f"            wheel {index.good[0]} sha256 {build['sha256'][:16]}... from ")
    assert out[at + 2] == "            fakepkg/_C.so: " + CARRIES


def test_overlay_never_overrides_the_shipped_build(sandbox, monkeypatch, capsys):
    from gpuvet.kb import overlay
    from gpuvet.sources import harvest

    shipped = next(b for b in loader.raw(loader.DATA_DIR / "harvested" / "torch.toml")["build"]
                   if b["framework"] == "torch" and b.get("platform") == "x86_64")
    # the same release read as one library with other code (whatever layout the shipped record has)
    wrong = {k: v for k, v in shipped.items() if k not in ("sass", "ptx", "partial_sass", "partial_ptx")}
    wrong.update(library=[{"file": "torch/lib/libtorch_cuda.so", "units": [{"count": 3, "sass": ["sm_50"], "ptx": []}]}],
                 sha256="0" * 64, source="test: a different reading")
    folder = sandbox / "ov"
    harvest.write_release(folder, [wrong])
    monkeypatch.setenv("GPUVET_KB_OVERLAY", str(folder))
    _fresh_kb()
    builds = loader._harvested_of(shipped["framework"])[(shipped["version"], "x86_64")]
    assert [{k: v for k, v in b.items() if k not in ("source", "overlay_disagrees")} for b in builds] == [
        {k: v for k, v in shipped.items() if k != "source"}]  # the shipped build, its facts untouched
    assert "user overlay" in builds[0]["source"] and builds[0]["overlay_disagrees"]
    assert f"read {shipped['wheel']} as sass sm_50, ptx -: the shipped list is used" in builds[0]["overlay_disagrees"]
    assert main(["kb", "status"]) == 0
    out = capsys.readouterr().out.splitlines()
    (line,) = [line for line in out if line.startswith("  disagrees ")]
    assert line.startswith(f"  disagrees torch {shipped['version']} x86_64: sass sm_50, ptx -; shipped sass sm_")
    assert line.endswith(f" ({shipped['wheel']})")
    at = out.index(line)
    assert out[at + 2] == "            torch/lib/libtorch_cuda.so: 3 code units; SASS sm_50; PTX -"
    assert out[at + 3].startswith("            shipped ")  # and what each shipped library carries
    assert overlay.default_dir() == folder
    # and a check of that build says so in a note of its own (info: the verdict is the shipped list's)
    smi = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt"
    target = f"torch=={shipped['version']}"
    main(["check", target, "--from", str(smi), "--no-network", "-f", "json"])
    doc = json.loads(capsys.readouterr().out)
    notes = [f for t in doc["targets"] for f in t["findings"] if f["code"] == "kb_overlay_disagrees"]
    assert notes and notes[0]["severity"] == "info" and str(folder) in json.dumps(notes[0])


def _one_line_error(capsys, argv, within):
    start = time.monotonic()
    code = main(argv)
    took = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
    assert took < within, took
    return err


def _pip_version():
    """The version of the pip that harvest runs (this Python's own), as a tuple of its first two numbers."""
    from importlib.metadata import version

    return tuple(int(part) for part in re.findall(r"\d+", version("pip"))[:2])


@pytest.mark.parametrize("requirement, words", [
    ("corruptpkg==1.0", "not a readable zip"),
    ("nometa==1.0", "no readable .dist-info/METADATA"),
    ("truncpkg==1.0", "truncpkg==1.0 was cut short"),
    ("fakepkg==9.9", "no x86_64 wheel of fakepkg==9.9"),
])
def test_broken_wheels_are_one_line_errors(index, sandbox, capsys, requirement, words):
    overlay = sandbox / "overlay"
    err = _one_line_error(capsys, ["kb", "harvest", requirement, "--index-url", index.url, "--overlay", str(overlay)],
                          within=120)
    if requirement == "truncpkg==1.0" and _pip_version() < (25, 1):
        # Before 25.1 pip does not compare a download with its Content-Length: it keeps the short file and then
        # finds it no wheel, which gpuvet can only call a corrupt or truncated download.
        words = "truncpkg==1.0 is not a readable zip file (corrupt or truncated download)"
    assert words in err
    assert not (overlay / "harvested").exists() or _files(overlay / "harvested") == []
    assert _files(sandbox / "tmp") == []


def test_a_stalled_index_is_a_one_line_error_within_the_timeout(index, sandbox, capsys):
    err = _one_line_error(capsys, ["kb", "harvest", "stallpkg==1.0", "--index-url", index.url, "--overlay",
                                   str(sandbox / "overlay"), "--timeout", "1"], within=15)
    assert "index" in err


def test_an_unreachable_index_is_a_one_line_error(sandbox, capsys):
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    err = _one_line_error(capsys, ["kb", "harvest", "fakepkg==1.0", "--index-url", f"http://127.0.0.1:{port}/simple",
                                   "--overlay", str(sandbox / "overlay"), "--timeout", "30"], within=60)
    assert "cannot be reached" in err


def test_update_harvests_the_releases_the_kb_lacks(index, sandbox, capsys):
    overlay = sandbox / "overlay"
    assert main(["kb", "update", "fakepkg", "--index-url", index.url, "--overlay", str(overlay), "--limit", "1"]) == 0
    assert len(_files(overlay / "harvested")) == 2  # the release file and its JSON twin
    capsys.readouterr()
    assert main(["kb", "update", "fakepkg", "--index-url", index.url, "--overlay", str(overlay), "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["version"] for r in doc["harvested"]] == ["1.0"] or [r["version"] for r in doc["harvested"]] == ["1.1"]
    assert _files(overlay / "harvested") == ["__compiled__/fakepkg-1.0.json", "__compiled__/fakepkg-1.1.json",
                                             "fakepkg-1.0.toml", "fakepkg-1.1.toml"]
    assert main(["kb", "update", "fakepkg", "--index-url", index.url, "--overlay", str(overlay)]) == 0
    assert "nothing new" in capsys.readouterr().out


def test_requirement_must_be_one_exact_release(sandbox, capsys):
    _one_line_error(capsys, ["kb", "harvest", "torch>=2", "--overlay", str(sandbox / "o")], within=5)
    _one_line_error(capsys, ["kb", "harvest", "--overlay", str(sandbox / "o")], within=5)
    assert not (sandbox / "o").exists()


def test_the_reader_itself_refuses_a_corrupt_zip_and_a_wheel_without_metadata(tmp_path):
    """What pip does not catch (an older pip, a file from a local folder), gpuvet's own reader does, in one line."""
    from gpuvet.errors import InputError
    from gpuvet.sources import harvest

    corrupt = tmp_path / f"x-1.0-{TAG}.whl"
    corrupt.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(InputError, match="not a readable zip file"):
        harvest.read_wheel(str(corrupt), "x", "1.0", "x86_64", work=str(tmp_path))
    name, data = _wheel("y", "1.0", {"y/__init__.py": b""}, metadata=False)
    (tmp_path / name).write_bytes(data)
    with pytest.raises(InputError, match="no .dist-info/METADATA"):
        harvest.read_wheel(str(tmp_path / name), "y", "1.0", "x86_64", work=str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([corrupt.name, name])  # no scratch left


def test_credentials_never_reach_the_record():
    from gpuvet.sources import harvest

    # as every other report removes them (gpuvet.probe.redact): a password holding "@" and a token in the query too
    assert harvest.redact_url("https://alice:s3cret@127.0.0.1:9/simple") == "https://***@127.0.0.1:9/simple"
    assert harvest.redact_url("https://token@127.0.0.1:9/simple/x/") == "https://***@127.0.0.1:9/simple/x/"
    assert harvest.redact_url("https://alice:p@ss@127.0.0.1:9/simple") == "https://***@127.0.0.1:9/simple"


def test_a_harvested_release_the_shipped_data_lacks_is_checked(index, sandbox, capsys):
    """The path a user takes: check says the release is unknown and names the harvest command; after running it,
    check judges the release from what its wheel says (torch pin -> CUDA 12.1, the kernels read from _C.abi3.so)."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"
    a10 = fixtures / "a10-1gpu_drv550.90.12.txt"      # compute capability 8.6: sm_80 SASS runs there
    t4 = fixtures / "tesla-t4-1gpu_drv535.86.10.txt"  # 7.5: neither SASS nor the compute_90 PTX can run
    argv = ["check", "vllm==0.2.6", "--no-network", "-f", "json"]
    assert main(argv + ["--from", str(a10)]) == 3
    (finding,) = [f for t in json.loads(capsys.readouterr().out)["targets"] for f in t["findings"]]
    assert finding["code"] == "unknown_version"
    assert finding["fix"]["commands"] == ["gpuvet kb harvest vllm==0.2.6"]

    assert main(["kb", "harvest", "vllm==0.2.6", "--index-url", index.url]) == 0
    capsys.readouterr()
    _fresh_kb()
    assert main(["kb", "status", "-f", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["overlay"]["builds"]
    assert row["status"] == "adds" and row["usable"]

    assert main(argv + ["--from", str(a10)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (target,) = doc["targets"]
    assert target["verdict"] == "pass" and target["resolved"] == "vllm==0.2.6 (cu121)"  # torch 2.3.0's PyPI build
    assert not [f for f in target["findings"] if f["code"] == "unknown_version"]
    overlay = sandbox / "home" / "data" / "gpuvet" / "kb"
    assert doc["kb"]["overlay"] == {"path": str(overlay), "files": 1}  # the report names the overlay it used
    assert main(argv[:-2] + ["--from", str(a10)]) == 0
    banner = capsys.readouterr().out.splitlines()[1]  # the answer first, then the banner naming the overlay
    assert banner.startswith("gpuvet check") and str(overlay) in banner

    assert main(argv + ["--from", str(t4)]) == 1
    (target,) = json.loads(capsys.readouterr().out)["targets"]
    assert target["verdict"] == "fail"
    assert "arch_not_in_build" in [f["code"] for f in target["findings"]]


def test_the_maintainer_import_folds_an_overlay_into_the_shipped_data_reproducibly(index, sandbox, capsys):
    """tools/import_overlay.py: a harvested vLLM release becomes a shipped [[release]] (from its METADATA pins,
    CUDA of the pinned torch) and a shipped [[build]] (its archs), with the index named publicly; a rerun changes
    nothing, byte for byte."""
    import sys

    overlay = sandbox / "overlay"
    assert main(["kb", "harvest", "vllm==0.2.6", "--index-url", index.url, "--overlay", str(overlay)]) == 0
    capsys.readouterr()
    data = sandbox / "data"
    shutil.copytree(loader.DATA_DIR, data)
    tool = Path(__file__).resolve().parents[2] / "tools" / "import_overlay.py"
    argv = [sys.executable, str(tool), str(overlay), "--index-name", "TestIndex", "--releases", "vllm", "--data", str(data)]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "vllm: 1 builds added" in first.stdout and "1 releases added (0.2.6)" in first.stdout
    written = {p.name: p.read_bytes() for p in (data / "frameworks" / "vllm.toml", data / "harvested" / "vllm.toml")}

    vllm = loader.framework_from(data / "frameworks" / "vllm.toml")
    release = vllm.release("0.2.6")
    assert release is not None and release.default_variant == "cu121" and release.python == ">=3.9"
    assert dict(release.extra["requires"]) == {"torch": "==2.3.0", "xformers": "==0.0.26.post1"}
    assert release.source.startswith("TestIndex: vllm 0.2.6") and index.url not in written["vllm.toml"].decode()
    builds = loader.raw(data / "harvested" / "vllm.toml")["build"]
    (ours,) = [b for b in builds if b["version"] == "0.2.6"]
    assert ours["library"] == [{"file": "vllm/_C.abi3.so", "units": UNITS}]
    assert "sass" not in ours and "ptx" not in ours
    assert ours["source"].startswith("TestIndex: vllm 0.2.6, wheel " + index.good[0].replace("fakepkg-1.0", "vllm-0.2.6"))

    again = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "0 releases added" in again.stdout
    assert {p.name: p.read_bytes() for p in (data / "frameworks" / "vllm.toml", data / "harvested" / "vllm.toml")} == written


def test_the_import_derives_an_sglang_release_cuda_through_its_vllm_range_only_where_the_range_agrees(index, sandbox, capsys):
    """tools/import_overlay.py --releases sglang: a release pinning no torch but a vLLM range gets the CUDA every vLLM
    release inside the range agrees on (each pins a torch whose PyPI default build is that CUDA; shipped vllm.toml
    and torch.toml), with the derivation in its source; a range whose releases disagree is left out, said why."""
    import sys

    overlay = sandbox / "overlay"
    for version in ("0.0.90", "0.0.91"):
        assert main(["kb", "harvest", f"sglang=={version}", "--index-url", index.url, "--overlay", str(overlay)]) == 0
    capsys.readouterr()
    harvested = loader.raw(overlay / "harvested" / "sglang-0.0.90.toml")["build"][0]
    assert harvested["requires"] == ['vllm<=0.7.2,>=0.6.4.post1; extra == "srt"', 'vllm==0.6.7.dev2; extra == "srt-hip"']
    data = sandbox / "data"
    shutil.copytree(loader.DATA_DIR, data)
    tool = Path(__file__).resolve().parents[2] / "tools" / "import_overlay.py"
    argv = [sys.executable, str(tool), str(overlay), "--index-name", "TestIndex", "--releases", "sglang", "--data", str(data)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "sglang: 1 releases added (0.0.90)" in done.stdout
    assert "sglang 0.0.91: pins vllm<=0.6.4.post1,>=0.6.3.post1, whose releases do not agree on one CUDA" in done.stdout

    sglang = loader.framework_from(data / "frameworks" / "sglang.toml")
    release = sglang.release("0.0.90")
    assert release is not None and release.default_variant == "cu124" and sglang.release("0.0.91") is None
    assert dict(release.extra["requires"]) == {"vllm": "<=0.7.2,>=0.6.4.post1"}  # the srt extra's, not srt-hip's
    variant = release.variant("cu124")
    assert variant.cuda == "12.4" and variant.install == 'pip install "sglang[srt]==0.0.90"'
    assert "inside vllm<=0.7.2,>=0.6.4.post1 pins a torch whose PyPI default build is CUDA 12.4" in variant.source
    assert "vllm 0.6.4.post1 (torch==2.5.1)" in variant.source and "vllm 0.7.2 (torch==2.5.1)" in variant.source


# torch 1.x links cuDNN and NCCL statically into the library with its kernels (libcaffe2_gpu.so up to 1.4): the
# versions are read from cudnnGetVersion (it returns CUDNN_VERSION) and NCCL's banner (src/init.cc VERSION_STRING).
BUNDLED = r"""
#include <stddef.h>
__global__ void scale(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] *= 2.0f; }
extern "C" void launch_scale(float *a, int n) { scale<<<1, 32>>>(a, n); }
extern "C" __attribute__((visibility("hidden"))) size_t cudnnGetVersion(void) { return 7605; }
extern "C" __attribute__((used)) const char nccl_banner[] = "NCCL version 2.7.8+cuda10.2";
"""


@pytest.fixture(scope="module")
def bundled_so(nvcc_library):
    return nvcc_library(BUNDLED, "libcaffe2_gpu.so", ["-Xcompiler", "-fPIC,-O2", "-gencode", "arch=compute_75,code=sm_75"])


def test_an_old_torch_wheel_gives_its_bundled_cudnn_and_nccl_and_its_kernel_library(bundled_so, cuda_so, tmp_path):
    from gpuvet.kb import compat, libraries
    from gpuvet.sources import harvest

    name, data = _wheel("torch", "1.0.0", {
        "torch/version.py": b"__version__ = '1.0.0'\ndebug = False\ncuda = '10.2'\n",
        "torch/lib/libcaffe2_gpu.so": bundled_so.read_bytes(),  # the kernels: sm_75
        "torch/lib/libextra.so": cuda_so.read_bytes(),  # more cubins (sm_80, sm_90), but not torch's kernel library
    }, pins=[])
    (tmp_path / name).write_bytes(data)
    record = harvest.read_wheel(str(tmp_path / name), "torch", "1.0.0", "x86_64", work=str(tmp_path))
    assert (record["cuda"], record["cudnn"], record["nccl"]) == ("10.2", "7.6.5", "2.7.8")
    assert "cudnnGetVersion" in record["cudnn_from"] and "torch/lib/libcaffe2_gpu.so" in record["cudnn_from"]
    assert record["nccl_from"] == "NCCL's version banner in torch/lib/libcaffe2_gpu.so"
    # each library as read: libcaffe2_gpu.so's two units (its .cu file's and nvcc's device-link one) carry sm_75 only
    assert record["library"] == [
        {"file": "torch/lib/libcaffe2_gpu.so", "units": [{"count": 2, "sass": ["sm_75"], "ptx": []}]},
        {"file": "torch/lib/libextra.so", "units": UNITS}]
    assert not {"sass", "ptx", "partial_sass", "partial_ptx"} & set(record)  # nothing pooled over the libraries
    # which library holds torch's kernels is the framework file's word, applied when the record is used
    spec = loader.raw(loader.find_framework_path("torch")).get("libraries")
    assert [(lib.file, lib.role) for lib in libraries.from_records(spec, record["library"])] == [
        ("torch/lib/libcaffe2_gpu.so", compat.KERNELS), ("torch/lib/libextra.so", compat.FEATURE)]
    # a library without them says nothing; two members that disagree leave the fact unknown
    assert harvest.bundled_versions(str(cuda_so)) == {}
    other = tmp_path / "other.so"
    other.write_bytes(bundled_so.read_bytes().replace(b"2.7.8+cuda10.2", b"2.4.8+cuda10.2"))
    name, data = _wheel("torch", "1.0.1", {"torch/lib/libcaffe2_gpu.so": bundled_so.read_bytes(),
                                            "torch/lib/libother.so": other.read_bytes()}, pins=[])
    (tmp_path / name).write_bytes(data)
    record = harvest.read_wheel(str(tmp_path / name), "torch", "1.0.1", "x86_64", work=str(tmp_path))
    assert "nccl" not in record and record["cudnn"] == "7.6.5"
    assert record["nccl_bundled"] == {"2.4.8": "torch/lib/libother.so", "2.7.8": "torch/lib/libcaffe2_gpu.so"}


@pytest.mark.parametrize("code, version", [(7605, "7.6.5"), (8903, "8.9.3"), (90100, "9.1.0"), (91002, "9.10.2"),
                                           (12, None)])
def test_cudnn_version_codes_decode_as_cudnn_documents_them(code, version):
    """kb/data/cudnn.toml [encoding]: major*1000 + minor*100 + patch up to 8, major*10000 + minor*100 + patch from 9."""
    from gpuvet.sources import harvest

    assert harvest.cudnn_version_of(code) == version


def test_a_release_with_python_3_7_wheels_only_is_harvested(index, sandbox, capsys):
    overlay = sandbox / "overlay"
    code = main(["kb", "harvest", "oldpkg==1.0", "--index-url", index.url, "--overlay", str(overlay), "-f", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    row = json.loads(captured.out)["harvested"][0]
    assert row["wheel"] == "oldpkg-1.0-cp37-cp37m-manylinux1_x86_64.whl"
    assert "python 3.7 wheel tags" in (overlay / "harvested" / "oldpkg-1.0.toml").read_text()


@pytest.mark.parametrize("text, cuda", [
    ('{"version": {"cuda": 1107, "torch": "1.13.1+cu117"}}', "11.7"),  # the shape of xformers 0.0.16's own file
    ('{"version": {"cuda": 1208}}', "12.8"),
    ('{"version": {"cuda": null, "hip": "6.1"}}', None),  # a ROCm build says no CUDA
    ("not json", None),
])
def test_xformers_build_metadata_gives_its_cuda(text, cuda):
    from gpuvet.sources import harvest

    facts = harvest.build_facts({"xformers/cpp_lib.json": text}, {})
    assert facts.get("cuda") == cuda
    assert facts.get("cuda_from") == ("xformers/cpp_lib.json" if cuda else None)


def test_tensorflow_build_info_of_both_shapes():
    """build_info.py as TensorFlow 2.2.3's wheel has it (module variables, its own '10') and as later ones (a dict)."""
    from gpuvet.sources import harvest

    old = "is_cuda_build = True\n\ncuda_version_number = '10'\ncudnn_version_number = '7'\n"
    new = "build_info = {'cuda_version': '11.2', 'cudnn_version': '8', 'is_cuda_build': True}\n"
    where = "tensorflow/python/platform/build_info.py"
    assert {k: v for k, v in harvest.build_facts({where: old}, {}).items() if not k.endswith("_from")} == {
        "cuda": "10", "cudnn": "7"}
    assert harvest.build_facts({where: new}, {})["cuda"] == "11.2"


def _shipped_x86_versions(distribution):
    from gpuvet.kb import versions

    found = [str(b["version"]) for path in sorted((loader.DATA_DIR / "harvested").glob("*.toml"))
             for b in loader.raw(path).get("build", ())
             if loader.normalize_name(b["distribution"]) == distribution and b.get("platform", "x86_64") == "x86_64"]
    return sorted(set(found), key=versions.parse)


def test_update_with_no_name_takes_releases_newer_than_the_kb_before_older_gaps(sandbox, capsys, monkeypatch):
    """Issue 30: ``kb update`` spent its --limit on old gaps, alphabetically (bitsandbytes first), and never reached
    a release newer than the knowledge base. Now: every listing first, then the newer releases, then the gaps, each
    distribution's newest first; and it says what it added and why. The indexes are pip's own configuration (a
    primary that has none of the wheels, and an extra index with a user and password that has them): each record
    names the one index that served its wheel, its password removed, never the list of both."""
    torch_versions = _shipped_x86_versions("torch")
    bnb_versions = _shipped_x86_versions("bitsandbytes")
    torch_gap, bnb_gap = torch_versions[0] + ".99", bnb_versions[0] + ".99"  # between two shipped releases
    plain = {"x/__init__.py": b""}
    served = Index({
        "torch": [_wheel("torch", v, plain, pins=[]) + ("ok",) for v in (torch_gap, "99.0")],
        "bitsandbytes": [_wheel("bitsandbytes", bnb_gap, plain, pins=[]) + ("ok",)],
    })
    empty = Index({})
    config = sandbox / "pip.conf"
    config.write_text(f"[global]\nindex-url = {empty.url}\n"
                      f"extra-index-url = {served.url.replace('http://', 'http://alice:s3cret@')}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    overlay = sandbox / "overlay"
    try:
        assert main(["kb", "update", "--overlay", str(overlay), "--limit", "1"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == (f"added 1 release(s) to the overlay: torch 99.0 x86_64 (newer than the knowledge base's "
                          f"{torch_versions[-1]}); 2 more left (raise --limit)")
        assert _files(overlay / "harvested") == ["__compiled__/torch-99.0.json", "torch-99.0.toml"]
        assert main(["kb", "update", "--overlay", str(overlay), "--limit", "5", "-f", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [(a["distribution"], a["version"], a["why"]) for a in doc["added"]] == [
            ("bitsandbytes", bnb_gap, "gap"), ("torch", torch_gap, "gap")]
        assert doc["not_harvested"] == [] and doc["failed"] == []
        assert {row["index_url"] for row in doc["harvested"]} == {served.url.replace("http://", "http://***@")}
        for name in ("torch-99.0.toml", f"torch-{torch_gap}.toml", f"bitsandbytes-{bnb_gap}.toml"):
            text = (overlay / "harvested" / name).read_text()
            assert f'index_url = "{served.url.replace("http://", "http://***@")}"' in text
            assert empty.url not in text and "s3cret" not in text
        assert main(["kb", "update", "--overlay", str(overlay)]) == 0
        assert capsys.readouterr().out.startswith("nothing new to harvest")
    finally:
        served.close()
        empty.close()


def test_the_record_names_the_one_index_that_served_the_wheel(index, sandbox, capsys, monkeypatch):
    """Issue 30: with several indexes configured the record listed them all. pip's log says which project page
    listed the file it took: the record names that index, its credentials removed."""
    base = index.url.rsplit("/simple", 1)[0]
    served_by = index.url.replace("http://", "http://alice:s3cret@")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", served_by)
    overlay = sandbox / "overlay"
    assert main(["kb", "harvest", "fakepkg==1.0", "--index-url", base + "/empty/simple", "--overlay", str(overlay),
                 "-f", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["harvested"]
    assert row["index_url"] == index.url.replace("http://", "http://***@")
    assert row["download_url"] == f"{base}/files/{index.good[0]}"
    assert row["source"].startswith(row["index_url"] + ": fakepkg 1.0, wheel ")
    text = (overlay / "harvested" / "fakepkg-1.0.toml").read_text()
    assert "s3cret" not in text and "/empty/" not in text

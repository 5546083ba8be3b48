"""The newer surfaces under hostile input, run as a user runs them (``python -m gpuvet`` in a child process): a
project (``check --project``), a capture (``replay``, ``--emit``), the overlay (``kb status``, ``check``), ``-o``
targets, ``diagnose FILE``/stdin and the pasted-text parsers. Real symlinks, FIFOs, devices and stand-in scripts.

Each case asserts the exit code, one ``error:`` line when refused, no traceback, and nothing written outside the
places asked; the subprocess timeout is a guard against a hang, not a timing assertion.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMI = str(FIXTURES / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")
SECRET = "hunter2-private-value"
GUARD = 120  # seconds: a hang guard


def gpuvet(*argv, stdin=None, env=None, timeout=GUARD, cwd=None):
    # no user overlay unless the case names one (an empty value switches it off)
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), GPUVET_KB_OVERLAY="")
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "gpuvet", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=stdin if stdin is not None else subprocess.DEVNULL, env=environ, timeout=timeout,
                          cwd=cwd)


def refused(done, *words):
    """Exit 2, exactly one error line (the first), no traceback, every word in it."""
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert "Traceback" not in err and "internal error" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and err.startswith("error:"), err
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def ran(done):
    """A verdict (0 or 1), no traceback."""
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode in (0, 1), err
    assert "Traceback" not in err
    return done.stdout.decode("utf-8", "replace")


@pytest.fixture
def private(tmp_path):
    path = tmp_path / "private.txt"
    path.write_text(f"SECRET={SECRET}\nC:\\\\{SECRET}\n")
    return path


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "requirements.txt").write_text("torch==2.5.1\n")
    return folder


def check_project(folder, *more):
    return gpuvet("check", "--project", str(folder), "--from", SMI, "--no-network", "-f", "json", *more)


# -- projects -----------------------------------------------------------------------------------------------------

def test_a_requirements_file_linked_out_of_the_project_is_never_read(tmp_path, private):
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "requirements.txt").symlink_to(private)
    done = check_project(folder)
    refused(done, "requirements.txt", "outside the project")
    assert SECRET not in done.stdout.decode() + done.stderr.decode()


def test_links_out_of_the_project_are_skipped_and_the_rest_is_read(project, private):
    (project / "train.py").symlink_to(private)
    (project / "requirements-dev.txt").symlink_to(private)
    out = ran(check_project(project))
    assert SECRET not in out
    document = json.loads(out)
    assert "torch==2.5.1" in json.dumps(document)


def test_loops_deep_trees_devices_and_fifos_in_a_project_do_not_hang(project):
    (project / "loop").symlink_to(project)
    # made one level at a time: the whole path is past PATH_MAX
    subprocess.run(["sh", "-c", "for i in $(seq 1100); do mkdir d && cd d || exit 1; done"], cwd=project, check=True)
    (project / "data.py").symlink_to("/dev/zero")
    os.mkfifo(project / "run.sh")
    os.mkfifo(project / "Dockerfile")
    try:
        out = ran(check_project(project))
        assert "torch==2.5.1" in out
    finally:  # pytest's own clean-up recurses once per level
        subprocess.run(["rm", "-rf", str(project / "d")], check=True)


@pytest.mark.parametrize("pyproject, words", [
    ('project = "x"\n', ["project must be a table"]),
    ('[project]\nname = "x"\ndependencies = 5\n', ["project.dependencies must be a list"]),
    ('[project]\nname = "x"\ndependencies = ["torch", 5]\n', ["project.dependencies[1] must be a string"]),
    ('[tool.uv]\nindex = "x"\n', ["tool.uv.index must be a list"]),
    ("a = " + "[" * 20000 + "]" * 20000 + "\n", ["nested deeper than"]),
])
def test_a_pyproject_of_the_wrong_shape_is_one_line_naming_the_field(project, pyproject, words):
    (project / "pyproject.toml").write_text(pyproject)
    refused(check_project(project), "pyproject.toml", *words)


def test_a_pixi_toml_of_the_wrong_shape_is_one_line_naming_the_field(project):
    (project / "pixi.toml").write_text('[workspace]\nname = "x"\n[target]\nlinux-64 = "no"\n')
    refused(check_project(project), "pixi.toml", "target.linux-64 must be a table")


def test_an_invalid_marker_is_a_skipped_line_not_a_traceback(project):
    (project / "requirements.txt").write_text('torch==2.5.1\nnumpy; python_version >> "3"\nx; extra == "y"\n')
    (project / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["numpy; os_name === 1"]\n')
    ran(check_project(project))


def test_a_billion_laughs_environment_yml_is_refused(project):
    pytest.importorskip("yaml")
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        "a%d: &a%d [%s]" % (i, i, ", ".join(["*a%d" % (i - 1)] * 10)) for i in range(1, 9)]
    (project / "environment.yml").write_text("\n".join(levels) + "\ndependencies: [*a8]\n")
    refused(check_project(project), "environment.yml", "values")


def test_huge_and_deep_python_files_are_bounded(project):
    (project / "expr.py").write_text("x = " + " + ".join(["1"] * 100000) + "\n")
    (project / "deep.py").write_text("x = " + "(" * 5000 + ")" * 5000 + "\n")
    line = "import torch  # " + "x" * 60 + "\n"
    for number in range(60):
        (project / f"big{number}.py").write_text(line * (1_000_000 // len(line)))
    ran(check_project(project))


# -- captures and replay --emit -----------------------------------------------------------------------------------

def capture(**changes):
    document = {"kind": "capture", "schema_version": 1, "captured_at": "2026-12-01T00:00:00+00:00",
                "gpuvet_version": "0.1.0", "targets": ["torch==2.5.1"],
                "lock": [{"name": "torch", "version": "2.5.1", "installer": "pip", "source": None}],
                "snapshot": {"kind": "snapshot", "schema_version": 1}}
    document.update(changes)
    return document


@pytest.mark.parametrize("changes, words", [
    ({"lock": ["torch==2.5.1"]}, ["lock[0] must be a table"]),
    ({"lock": [{"name": "torch", "version": 2}]}, ["lock[0].version"]),
    ({"lock": [{"name": "torch", "version": "2.5.1", "cuda_archs": "sm_90"}]}, ["lock[0].cuda_archs"]),
    ({"lock": [{"name": "torch", "version": "2.5.1", "cuda_archs": [{"file": "a.so", "sass": [90]}]}]},
     ["lock[0].cuda_archs[0].sass[0]"]),
    ({"targets": 5}, ["targets must be a list"]),
    ({"targets": [["torch"]]}, ["targets[0]"]),
    ({"lock": [{"name": "torch", "version": "2.5.1\nRUN curl evil | sh"}]}, ["lock[0].version"]),
    ({"lock": [{"name": "x", "version": "1", "source": {"kind": "url", "url": "https://a/x.whl\n--index-url h"}}]},
     ["lock[0].source.url"]),
    ({"captured_at": "now\nRUN rm -rf /"}, ["captured_at"]),
])
def test_a_capture_of_the_wrong_shape_is_refused_before_anything_is_written(tmp_path, changes, words):
    path = tmp_path / "env.json"
    path.write_text(json.dumps(capture(**changes)))
    emit = tmp_path / "emit"
    refused(gpuvet("replay", str(path), "--from", SMI, "--emit", str(emit)), str(path), *words)
    assert not emit.exists()


def test_a_deeply_nested_capture_is_refused(tmp_path):
    path = tmp_path / "env.json"
    path.write_text('{"kind": "capture", "lock": [], "x": ' + "[" * 100000 + "]" * 100000 + "}")
    refused(gpuvet("replay", str(path), "--from", SMI), "env.json")


def test_emit_writes_inside_the_folder_only_and_never_replaces_without_force(tmp_path):
    path = tmp_path / "env.json"
    path.write_text(json.dumps(capture()))
    emit = tmp_path / "emit"
    emit.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    (emit / "requirements.txt").symlink_to(outside)
    refused(gpuvet("replay", str(path), "--from", SMI, "--emit", str(emit)), "symbolic link")
    assert outside.read_text() == "untouched" and sorted(p.name for p in emit.iterdir()) == ["requirements.txt"]
    (emit / "requirements.txt").unlink()
    (emit / "Dockerfile").write_text("FROM mine\n")
    refused(gpuvet("replay", str(path), "--from", SMI, "--emit", str(emit)), "Dockerfile", "exists")
    assert (emit / "Dockerfile").read_text() == "FROM mine\n" and not (emit / "requirements.txt").exists()
    ran(gpuvet("replay", str(path), "--from", SMI, "--emit", str(emit), "--force"))
    assert sorted(p.name for p in emit.iterdir()) == ["Dockerfile", "environment.yml", "requirements.txt"]
    assert "torch==2.5.1" in (emit / "requirements.txt").read_text()
    assert (emit / "Dockerfile").read_text().startswith("# gpuvet replay")


# -- the overlay --------------------------------------------------------------------------------------------------

def test_a_hostile_overlay_is_problems_not_hangs_or_tracebacks(tmp_path):
    overlay = tmp_path / "overlay"
    builds = overlay / "harvested"
    builds.mkdir(parents=True)
    os.mkfifo(builds / "fifo.toml")
    (builds / "zero.toml").symlink_to("/dev/zero")
    (builds / "wrong.toml").write_text('[[build]]\nframework = "torch"\nversion = "2.5.1"\nsource = "x"\nsass = 5\n'
                                       '[[build]]\nframework = "torch"\nversion = "2.5.2"\nsource = 5\n')
    (builds / "deep.toml").write_text("a = " + "[" * 20000 + "]" * 20000 + "\n")
    env = {"GPUVET_KB_OVERLAY": str(overlay)}
    done = gpuvet("kb", "status", env=env)
    out = ran(done)
    assert "fifo.toml: cannot be read" in out and "zero.toml: cannot be read" in out
    assert "build[0].sass must be a list of strings" in out and "build[1].source must be a string" in out
    assert "deep.toml: cannot be read" in out
    ran(gpuvet("check", "torch==2.5.1", "--from", SMI, "--no-network", env=env))


# -- -o targets ---------------------------------------------------------------------------------------------------

def test_o_writes_a_fifo_with_a_reader_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, encoding="utf-8").read()))
    reader.start()
    ran(gpuvet("check", "torch==2.5.1", "--from", SMI, "--no-network", "-f", "json", "-o", str(fifo)))
    reader.join(GUARD)
    assert json.loads(got[0])["targets"] and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_o_to_a_fifo_nobody_reads_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(gpuvet("check", "torch==2.5.1", "--from", SMI, "--no-network", "-o", str(fifo)), "nobody read")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_o_writes_a_process_substitution_fd(tmp_path):
    read_end, write_end = os.pipe()
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "gpuvet", "check", "torch==2.5.1", "--from", SMI, "--no-network",
                             "-f", "json", "-o", f"/dev/fd/{write_end}"], pass_fds=(write_end,), env=environ,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    assert proc.wait(GUARD) in (0, 1), proc.stderr.read()
    proc.stderr.close()
    assert json.loads(data)["targets"]


# -- diagnose and --from ------------------------------------------------------------------------------------------

LOG = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def diagnosed(done):
    out = ran(done)
    return [d["code"] for d in json.loads(out)["diagnoses"]]


def test_a_log_file_over_64_kib_is_diagnosed_like_the_same_bytes_on_stdin(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1 loss 0.5\n" * 5000 + LOG)  # 80 KB
    from_file = diagnosed(gpuvet("diagnose", str(log), "--from", SMI, "-f", "json"))
    with open(log, "rb") as handle:
        from_stdin = diagnosed(gpuvet("diagnose", "-", "--from", SMI, "-f", "json", stdin=handle))
    assert from_file == from_stdin and "arch_not_in_build" in from_file


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "gbk", "big5", "shift_jis"])
def test_a_log_in_another_encoding_is_diagnosed_like_utf8(tmp_path, encoding):
    words = {"gbk": "训练失败：", "big5": "訓練失敗：", "shift_jis": "学習に失敗しました："}.get(encoding, "")
    log = tmp_path / "train.log"
    log.write_bytes((words + "\n" + LOG).encode(encoding))
    assert "arch_not_in_build" in diagnosed(gpuvet("diagnose", str(log), "--from", SMI, "-f", "json"))


def test_dev_zero_on_stdin_is_refused_at_its_first_piece(tmp_path):
    probe = ("import resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[1:], stdin=open('/dev/zero', 'rb'), stdout=subprocess.DEVNULL,"
             " stderr=subprocess.PIPE)\n"
             "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.stderr.write(done.stderr.decode())\n")
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "gpuvet", "diagnose", "-"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ, timeout=GUARD)
    code, peak_kib = (int(x) for x in done.stdout.split())
    assert code == 2 and "looks binary" in done.stderr.decode()
    assert peak_kib < 300 * 1024


def test_a_pipe_whose_writer_never_closes_is_refused_after_the_pipe_timeout(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDWR)  # Linux: both ends, without blocking; the write end stays open
    try:
        os.write(held, b"NVIDIA-SMI 550.90.12\n")
        done = gpuvet("check", "--from", str(fifo), env={"GPUVET_PIPE_TIMEOUT": "1"})
    finally:
        os.close(held)
    refused(done, str(fifo), "not closed")


# -- old parsers, huge numbers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Client:\n Version: {n}\nServer:\n Server Version: {n}.1.1\n Storage Driver: overlay2\n Runtimes: nvidia runc\n"
    " Default Runtime: runc\n",
    "torch=={n}\nnumpy==1.26.4\n",
    "torch==2.{n}.0\nnumpy==1.26.4\n",
])
def test_numbers_past_int_limits_are_not_a_traceback(tmp_path, text):
    path = tmp_path / "paste.txt"
    path.write_text(text.format(n="9" * 5000))
    done = gpuvet("check", "torch==2.5.1", "--from", str(path), "--from", SMI, "--no-network")
    assert done.returncode in (0, 1, 2, 3) and "Traceback" not in done.stderr.decode()


def test_a_snapshot_compute_capability_past_int_limits_is_named(tmp_path):
    from snapshots import gpu, snapshot

    document = snapshot(driver="535.104.05", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])
    document["gpus"]["value"][0]["compute_capability"] = "9" * 5000 + ".0"
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(document))
    refused(gpuvet("check", "torch==2.5.1", "--snapshot", str(path)), "compute_capability")


@pytest.mark.parametrize("kind", ["docker-info", "conda-info", "pixi-info", "spec", "nvidia-smi-q", None])
def test_blank_line_floods_are_read_in_one_pass(kind):
    from gpuvet.ingest.detect import detect_kind
    from gpuvet.ingest.registry import REGISTRY

    flood = "x\n" + "\n" * 200_000 + " \n" * 200_000 + "y\n"
    if kind is None:
        assert detect_kind(flood) is None
        return
    (entry,) = [k for k in REGISTRY if k.name == kind]
    assert entry.detect(flood) is False


# -- net ------------------------------------------------------------------------------------------------------------

def test_a_hanging_conda_leaves_no_process_behind(tmp_path):
    from gpuvet.sources.network import conda_defaults

    marker = f"gpuvet-test-{os.getpid()}-hanging-conda"
    conda = tmp_path / "conda"
    conda.write_text(f"#!/bin/bash\n(exec -a {marker} sleep 300) &\nwait\n")
    conda.chmod(0o755)
    assert conda_defaults({"CONDA_EXE": str(conda), "PATH": os.environ.get("PATH", "")}, timeout=0.5) == {}
    left = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    left.append(pid)
        except OSError:
            continue
    assert left == []


def test_a_hanging_nvcc_in_a_live_check_is_reported_and_killed(tmp_path):
    marker = f"gpuvet-test-{os.getpid()}-hanging-nvcc"
    folder = tmp_path / "cuda" / "bin"
    folder.mkdir(parents=True)
    nvcc = folder / "nvcc"
    nvcc.write_text(f"#!/bin/bash\n(exec -a {marker} sleep 300) &\nwait\n")
    nvcc.chmod(0o755)
    env = {"PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}", "CUDA_HOME": "", "CUDA_PATH": ""}
    out = ran(gpuvet("check", "torch==2.5.1", "--no-network", "-f", "json", env=env))
    document = json.loads(out)
    findings = document["machine"] + [f for t in document["targets"] for f in t["findings"]]
    hung = [f for f in findings if "did not answer" in f["title"]]
    assert hung and hung[0]["code"] == "health_problem" and "nvcc" in hung[0]["title"]
    assert not any(marker.encode() in _cmdline(pid) for pid in os.listdir("/proc") if pid.isdigit())


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


@pytest.mark.parametrize("argv", [["check", "--from", "{path}"], ["check", "--snapshot", "{path}"],
                                  ["diagnose", "{path}"], ["replay", "{path}"], ["diff", "{path}", "{path}"],
                                  ["fleet", "--hosts", "{path}"]], ids=lambda a: " ".join(a[:2]))
def test_a_sparse_file_past_the_limit_is_refused_from_its_size_unread(tmp_path, argv):
    path = tmp_path / "sparse.txt"
    with open(path, "wb") as handle:
        handle.truncate(4 * 1024 ** 3)  # 4 GiB of nothing on disk
    refused(gpuvet(*[part.format(path=path) for part in argv]), "larger than")

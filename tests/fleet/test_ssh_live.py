"""Against a real sshd on loopback: every status, the fallback, host keys, order and bounded concurrency."""

import time

import pytest

from gpuvet.sources.fleet import result as R
from gpuvet.sources.fleet.bundle import build_bundle
from gpuvet.sources.fleet.hosts import parse_host
from gpuvet.sources.fleet.ssh import SSHOptions, probe_hosts

pytestmark = pytest.mark.timeout(120)


def options(env, **overrides):
    values = dict(parallel=8, connect_timeout=5.0, timeout=20.0, known_hosts=str(env.known_hosts),
                  identities=[str(env.identity)], extra_connect={"agent_path": None}, use_ssh_config=False)
    values.update(overrides)
    return SSHOptions(**values)


def script(env):
    return build_bundle(env.bundle_root)


def run(env, roles, **overrides):
    specs = [parse_host(env.host(role)) for role in roles]
    return probe_hosts(specs, script(env), options(env, **overrides))


def test_every_host_is_accounted_for_in_order(fleet_env):
    roles = ["a1", "closed", "b", "authfail", "badkey", "probefail", "a2"]
    results = run(fleet_env, roles)
    assert [r.name for r in results] == [fleet_env.host(role) for role in roles]
    statuses = dict(zip(roles, (r.status for r in results)))
    assert statuses == {
        "a1": R.OK, "closed": R.UNREACHABLE, "b": R.OK, "authfail": R.AUTH_FAILED,
        "badkey": R.HOST_KEY_MISMATCH, "probefail": R.PROBE_FAILED, "a2": R.OK,
    }
    by_role = dict(zip(roles, results))
    assert "differs" in by_role["badkey"].error
    assert "boom" in by_role["probefail"].error
    assert by_role["a1"].snapshot["origin"]["type"] == "fleet"
    assert by_role["a1"].snapshot["origin"]["host"] == fleet_env.host("a1")
    assert by_role["a1"].method == R.METHOD_BUNDLE


def test_snapshot_reflects_what_each_host_has(fleet_env):
    a1, b = run(fleet_env, ["a1", "b"])
    # The fake nvidia-smi of each host replays a different real capture: the probe must report each one's driver.
    assert a1.snapshot["driver"]["version"]["value"] == "525.147.05"
    assert b.snapshot["driver"]["version"]["value"] == "515.105.01"


def test_hanging_host_times_out_without_holding_the_others(fleet_env):
    started = time.monotonic()
    hang, a1 = run(fleet_env, ["hang", "a1"], timeout=3.0)
    elapsed = time.monotonic() - started
    assert hang.status == R.TIMEOUT and "3 s" in hang.error
    assert a1.status == R.OK
    assert elapsed < 10


def test_unknown_host_key_refused_by_default_then_accepted_and_recorded(fleet_env, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    (refused,) = run(fleet_env, ["a1"], known_hosts=str(known))
    assert refused.status == R.HOST_KEY_UNKNOWN and "not in known_hosts" in refused.error
    assert known.read_text() == ""
    (accepted,) = run(fleet_env, ["a1"], known_hosts=str(known), accept_new_host_keys=True)
    assert accepted.status == R.OK
    line = known.read_text()
    assert line.startswith("[127.0.0.1]:%d ssh-ed25519 " % fleet_env.sshd.ports["a1"])
    (again,) = run(fleet_env, ["a1"], known_hosts=str(known))
    assert again.status == R.OK


def test_changed_host_key_is_refused_even_with_accept_new(fleet_env):
    (result,) = run(fleet_env, ["badkey"], accept_new_host_keys=True)
    assert result.status == R.HOST_KEY_MISMATCH and "differs" in result.error
    assert fleet_env.known_hosts.read_text().count(":%d " % fleet_env.sshd.ports["badkey"]) == 1


def test_python36_host_runs_the_bundle(fleet_env):
    if "py36" not in fleet_env.sshd.ports:
        pytest.skip("no Python 3.6 interpreter on this machine (~/.pyenv/versions/3.6.15)")
    (result,) = run(fleet_env, ["py36"])
    assert result.status == R.OK, result.error
    assert result.snapshot["driver"]["version"]["value"] == "525.147.05"


def test_host_without_python_falls_back_to_tool_text(fleet_env):
    (result,) = run(fleet_env, ["nopython"])
    try:
        from gpuvet.ingest import parse  # noqa: F401  (the fallback parses with it)
    except ImportError:
        # This gpuvet cannot parse tool text yet: the host must still be accounted for, with the reason.
        assert result.status == R.PROBE_FAILED
        assert "no python3" in result.error and "cannot parse tool output" in result.error
        return
    assert result.status == R.OK, result.error
    assert result.method == R.METHOD_FALLBACK
    assert result.snapshot["driver"]["version"]["value"] == "525.125.06"
    assert result.snapshot["origin"]["host"] == fleet_env.host("nopython")
    assert result.snapshot["origin"]["method"] == R.METHOD_FALLBACK
    toolkits = result.snapshot["cuda_toolkits"]["value"]
    assert [t["version"] for t in toolkits][0].startswith("12.5")
    # /proc/driver/nvidia/version read too (argv `cat /proc/...`): the kernel module's version, from a real capture
    # of another machine, so it differs from nvidia-smi's driver here -- exactly what nvml_driver_mismatch looks for.
    module = result.snapshot["driver"]["kernel_module"]
    assert (module["value"], module["source"]) == ("565.57.01", "proc")
    assert "proc-driver-version" in result.snapshot["origin"]["inputs"]


def _sleeping(seconds):
    """PIDs whose command line is `sleep SECONDS` (read from /proc: no pgrep needed)."""
    import os

    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as handle:
                    argv = handle.read().split(b"\0")
            except OSError:
                continue
            if len(argv) >= 2 and argv[0].endswith(b"sleep") and argv[1] == seconds.encode():
                found.append(int(pid))
    return found


def test_a_timed_out_host_is_left_with_nothing_running(fleet_env):
    """The client gives up after --timeout; sshd leaves a command without a terminal running, so the probe carries the
    same deadline and kills what it started (here an nvidia-smi that never answers) before it exits."""
    import os
    import signal

    from .conftest import SLOW_SMI_SECONDS

    spec = parse_host(fleet_env.host("slowsmi"))
    bundle = build_bundle(fleet_env.bundle_root, argv=("--no-binaries", "--deadline", "2"))
    try:
        (result,) = probe_hosts([spec], bundle, options(fleet_env, timeout=2.0))
        assert result.status == R.TIMEOUT
        until = time.monotonic() + 15
        while _sleeping(SLOW_SMI_SECONDS) and time.monotonic() < until:
            time.sleep(0.2)
        assert _sleeping(SLOW_SMI_SECONDS) == []
    finally:
        for pid in _sleeping(SLOW_SMI_SECONDS):
            os.kill(pid, signal.SIGKILL)


def test_the_fleet_command_gives_the_probe_its_deadline():
    import argparse

    from gpuvet.cli.fleet import bundle_argv

    argv = bundle_argv(argparse.Namespace(timeout=45.0, redact_host=False, no_binaries=True, check_targets=[],
                                          binaries=False))
    assert argv[argv.index("--deadline") + 1] == "45"

"""What the remote probe is asked to do: the binary scan only when a --check needs arch lists (or --binaries)."""

import argparse
import subprocess
import sys

from gpuvet.cli.fleet import bundle_argv, scan_binaries
from gpuvet.sources.fleet.bundle import BEGIN, build_bundle, extract_outputs, parse_snapshot_text


def args(**values):
    defaults = dict(check_targets=[], redact_host=False)
    defaults.update(values)
    return argparse.Namespace(**defaults)


def test_plain_fleet_skips_the_binary_scan_and_check_turns_it_on():
    assert not scan_binaries(args())
    assert scan_binaries(args(check_targets=["torch==2.4.1"]))
    assert scan_binaries(args(binaries=True))
    assert not scan_binaries(args(check_targets=["torch"], binaries=False))
    assert bundle_argv(args(redact_host=True)) == ("--no-binaries", "--redact-host")
    assert bundle_argv(args(check_targets=["torch"])) == ()


def run_bundle(script):
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (output,) = extract_outputs(done.stdout)
    return parse_snapshot_text(output.text)


def test_bundle_without_binaries_is_smaller_and_its_probe_says_why_archs_are_missing():
    full, light = build_bundle(), build_bundle(argv=("--no-binaries",))
    assert len(light) < len(full) * 0.9
    snapshot = run_bundle(light)
    assert snapshot["binaries"]["status"] == "missing" and "--no-binaries" in snapshot["binaries"]["reason"]
    assert BEGIN not in snapshot.get("origin", {}).get("host", "")


def test_bundle_with_binaries_runs_the_scan():
    snapshot = run_bundle(build_bundle())
    assert snapshot["binaries"]["status"] in ("found", "failed")

"""Fleet options are checked before any host is contacted: a bad one is one error line, exit 2."""

from __future__ import annotations

import pytest

from gpuvet.cli import main


@pytest.mark.parametrize("option, seconds", [("--timeout", "nan"), ("--connect-timeout", "nan"),
                                             ("--timeout", "inf"), ("--timeout", "0")])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_error(option, seconds, capsys):
    # Before: NaN passed the "<= 0" test and every host came back "no complete answer within nan s".
    assert main(["fleet", "127.0.0.1", option, seconds]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --connect-timeout and --timeout must be positive") and "Traceback" not in err


def test_a_failed_snapshot_write_leaves_nothing_behind_in_the_out_dir(tmp_path):
    from gpuvet.cli.fleet import _write_json_atomically

    with pytest.raises(TypeError):  # not JSON: the write fails half-way, as on a full disk
        _write_json_atomically(tmp_path / "host.json", {"unserialisable": object()})
    assert list(tmp_path.iterdir()) == []


def test_redacting_a_short_host_name_keeps_other_words():
    from gpuvet.cli.fleet import alias_hosts
    from gpuvet.sources.fleet.result import HostResult

    result = HostResult(name="gpu", status="unreachable", error="connect to gpu:22: gpu node refused; GPU driver ok")
    alias_hosts([result])
    assert result.error == "connect to host-01:22: host-01 node refused; GPU driver ok"

"""`gpuvet fleet` and `gpuvet diff` end to end through the CLI, against the loopback sshd."""

import json

import pytest

from gpuvet.cli import main

pytestmark = pytest.mark.timeout(120)


def fleet(env, capsys, roles, *extra):
    argv = ["fleet", *[env.host(r) for r in roles], "-i", str(env.identity), "--known-hosts", str(env.known_hosts),
            "--timeout", "20", "--connect-timeout", "5", *extra]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_report_accounts_for_every_host_and_groups_differences(fleet_env, capsys):
    code, out, _ = fleet(fleet_env, capsys, ["a1", "b", "closed", "a2"], "--format", "json")
    document = json.loads(out)
    assert code == 1  # a host was unreachable
    assert document["schema_version"] == 1 and document["via"] == "ssh"
    assert [h["host"] for h in document["hosts"]] == [fleet_env.host(r) for r in ["a1", "b", "closed", "a2"]]
    assert [h["status"] for h in document["hosts"]] == ["ok", "ok", "unreachable", "ok"]
    assert document["summary"]["ok"] == 3 and document["summary"]["unreachable"] == 1
    # Without --out-dir nothing is written: the snapshots ride in the report.
    assert all(h["snapshot_file"] is None for h in document["hosts"])
    assert document["hosts"][0]["snapshot"]["kind"] == "snapshot"
    driver = next(g for g in document["groups"] if g["field"] == "driver")
    assert driver["values"] == [
        {"value": "525.147.05", "hosts": [fleet_env.host("a1"), fleet_env.host("a2")]},
        {"value": "515.105.01", "hosts": [fleet_env.host("b")]},
    ]
    assert [f["code"] for f in document["findings"]] == ["driver_too_old"]


def test_out_dir_gets_one_snapshot_per_host_and_diff_reads_them(fleet_env, capsys, tmp_path):
    out_dir = tmp_path / "snaps"
    code, out, _ = fleet(fleet_env, capsys, ["a1", "a2"], "--out-dir", str(out_dir), "--format", "json")
    assert code == 0
    document = json.loads(out)
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == sorted("root@127.0.0.1_%d.json" % fleet_env.sshd.ports[r] for r in ["a1", "a2"])
    assert "snapshot" not in document["hosts"][0]
    code = main(["diff", *[str(out_dir / f) for f in files], "--format", "json"])
    diffed = json.loads(capsys.readouterr().out)
    assert code == 0 and diffed["groups"] == []
    assert sorted(h["host"] for h in diffed["hosts"]) == sorted([fleet_env.host("a1"), fleet_env.host("a2")])


def test_text_report_in_chinese_names_statuses(fleet_env, capsys):
    code, out, _ = fleet(fleet_env, capsys, ["a1", "authfail"], "--lang", "zh")
    assert code == 1
    assert "认证失败" in out and "正常" in out


def test_redact_host_aliases_names(fleet_env, capsys):
    code, out, _ = fleet(fleet_env, capsys, ["a1", "closed"], "--format", "json", "--redact-host")
    assert "127.0.0.1" not in out
    assert [h["host"] for h in json.loads(out)["hosts"]] == ["host-01", "host-02"]


def test_check_groups_hosts_by_verdict(fleet_env, capsys):
    pytest.importorskip("gpuvet.checks")
    code, out, _ = fleet(fleet_env, capsys, ["a1", "b"], "--format", "json", "--check", "torch==2.4.1")
    document = json.loads(out)
    (target,) = document["targets"]
    assert target["target"] == "torch==2.4.1"
    grouped = [h for group in target["verdicts"] for h in group["hosts"]]
    assert sorted(grouped) == sorted([fleet_env.host("a1"), fleet_env.host("b")])
    assert all("checks" in h for h in document["hosts"])
    assert code in (1, 3) or all(g["verdict"] in ("pass", "warn") for g in target["verdicts"])


def test_check_text_shows_each_verdict_group_with_its_top_findings_and_fixes(fleet_env, capsys):
    pytest.importorskip("gpuvet.checks")
    # Host b's real capture is driver 515.105.01 (CUDA 11.7): torch 2.4.1's default cu121 build cannot run there.
    code, out, _ = fleet(fleet_env, capsys, ["a1", "b"], "--check", "torch==2.4.1", "--format", "json")
    document = json.loads(out)
    groups = document["targets"][0]["verdicts"]
    b_group = next(g for g in groups if fleet_env.host("b") in g["hosts"])
    assert b_group["findings"], "a host that does not pass must say why"
    top = b_group["findings"][0]
    code, text, _ = fleet(fleet_env, capsys, ["a1", "b"], "--check", "torch==2.4.1")
    section = text[text.index("torch==2.4.1"):]
    assert b_group["verdict"] in section and fleet_env.host("b") in section
    assert top["title"] in section
    if top.get("fix"):
        assert "fix: " + top["fix"] in section


@pytest.mark.parametrize("argv, fragment", [
    (["fleet"], "no hosts to probe"),
    (["fleet", "--", "-oProxyCommand=x"], "not a valid host name"),
    (["fleet", "node01", "--parallel", "0"], "--parallel"),
    (["fleet", "node01", "--check", "torch==="], ""),
    (["diff", "only-one.json"], "at least two"),
])
def test_usage_errors_exit_2_with_one_line(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err
    assert "Traceback" not in err

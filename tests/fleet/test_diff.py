"""Grouping a fleet by the facts that differ: majority first, outliers named, findings where jobs break."""

from snapshots import gpu, snapshot

from gpuvet.checks.fleet import consistency_findings, fingerprint, group_fields
from gpuvet.probe.facts import found


def node(driver="535.104.05", cuda="12.2", nccl="2.21.5", torch="2.4.1+cu121", gpus=8, width=16, **extra):
    cards = [gpu("NVIDIA H100 80GB HBM3", "9.0", index=i,
                 pcie={"gen_current": 1, "gen_max": 5, "width_current": width if i == 0 else 16, "width_max": 16},
                 mig_mode="disabled") for i in range(gpus)]
    return snapshot(driver=driver, cuda_max=cuda, gpus=cards, packages={"torch": torch},
                    nccl=found([{"version": nccl, "path": "/x/libnccl.so.2", "source": "library"}], "library"),
                    topology=found({"nvlink": True, "matrix": {}}, "nvidia-smi"), **extra)


def test_identical_nodes_have_no_groups_and_everything_agreed():
    diff = group_fields([("n1", node()), ("n2", node())])
    assert diff.groups == ()
    assert diff.agreed["driver"] == "535.104.05" and diff.agreed["gpu_count"] == "8"
    assert consistency_findings(diff) == []


def test_majority_first_outliers_named_and_host_order_kept():
    fleet = [("n1", node()), ("n2", node(driver="550.54.15", cuda="12.4")), ("n3", node()), ("n4", node(gpus=7)),
             ("n5", node(width=8))]
    diff = group_fields(fleet)
    groups = {g.field: [(v.value, v.hosts) for v in g.values] for g in diff.groups}
    assert groups["driver"] == [("535.104.05", ("n1", "n3", "n4", "n5")), ("550.54.15", ("n2",))]
    assert groups["gpu_count"] == [("8", ("n1", "n2", "n3", "n5")), ("7", ("n4",))]
    assert groups["pcie"][0] == ("8× Gen5 x16", ("n1", "n2", "n3"))
    assert ("7× Gen5 x16, 1× Gen5 x8", ("n5",)) in groups["pcie"]
    assert "nccl" not in groups and diff.agreed["nccl"] == "2.21.5"


def test_idle_pcie_generation_is_not_a_difference():
    # gen_current drops to Gen1 at idle on healthy GPUs: only the width and the reachable generation count.
    a, b = node(), node()
    b["gpus"]["value"][0]["pcie"]["gen_current"] = 5
    assert group_fields([("a", a), ("b", b)]).groups == ()


def test_nccl_difference_is_a_failing_finding_naming_the_outlier():
    diff = group_fields([("n1", node()), ("n2", node(nccl="2.18.3")), ("n3", node())])
    (item,) = consistency_findings(diff)
    assert item.finding.code == "nccl_mismatch" and item.finding.severity.value == "fail"
    assert item.hosts == ("n2",)
    assert item.finding.expected == "2.21.5"
    assert all(source.startswith("https://") for source in item.finding.sources)


def test_lower_driver_cuda_is_a_warning_for_those_hosts_only():
    diff = group_fields([("n1", node()), ("n2", node(driver="525.147.05", cuda="12.0")), ("n3", node())])
    (item,) = consistency_findings(diff)
    assert (item.finding.code, item.finding.severity.value, item.hosts) == ("driver_too_old", "warn", ("n2",))
    assert (item.finding.expected, item.finding.actual) == ("12.2", "12.0")


def test_unknown_goes_last_and_does_not_make_a_finding():
    pasted = node()
    del pasted["nccl"]
    diff = group_fields([("pasted", pasted), ("n1", node()), ("n2", node())])
    (group,) = [g for g in diff.groups if g.field == "nccl"]
    assert [v.value for v in group.values] == ["2.21.5", None]
    assert consistency_findings(diff) == []


def test_fingerprint_of_cpu_only_host():
    fp = fingerprint(snapshot(driver=None, packages={"numpy": "2.0.0"}))
    assert fp["driver"] is None and fp["torch"] == "none" and fp["gpu_count"] is None


def test_diff_exits_1_when_snapshots_differ_like_diff1(tmp_path, capsys):
    import json as _json

    from snapshots import gpu, snapshot

    from gpuvet.cli import main

    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(_json.dumps(snapshot(driver="535.104.05", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])))
    b.write_text(_json.dumps(snapshot(driver="550.54.15", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])))
    assert main(["diff", str(a), str(b), "--format", "json"]) == 1
    assert main(["diff", str(a), str(a), "--format", "json"]) == 0
    capsys.readouterr()


def test_diff_text_opens_with_its_answer(tmp_path, capsys):
    import json as _json

    from snapshots import gpu, snapshot

    from gpuvet.cli import main

    a = tmp_path / "node01.json"
    b = tmp_path / "node02.json"
    a.write_text(_json.dumps(snapshot(driver="535.104.05", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])))
    b.write_text(_json.dumps(snapshot(driver="550.54.15", gpus=[gpu("NVIDIA A100-SXM4-80GB", "8.0")])))
    capsys.readouterr()
    main(["diff", str(a), str(b)])
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Verdict: ") and "driver" in first.lower(), first
    main(["diff", str(a), str(a)])
    assert capsys.readouterr().out.splitlines()[0] == "Verdict: PASS · the 2 hosts agree"

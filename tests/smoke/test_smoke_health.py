"""Health findings on GPU values from real nvidia-smi captures (idle/load), and on degraded copies of them."""

import copy

from gpuvet.checks.health import health_findings
from gpuvet.i18n import render
from gpuvet.models import Severity
from gpuvet.snapshot import SnapshotView

from .helpers import gpu_from_query_csv, snapshot_with


def findings_for(gpus, **extra):
    return health_findings(SnapshotView(snapshot_with(gpus, **extra)))


def codes(findings):
    return sorted((f.code, f.severity.value, f.title.id.split(".")[2]) for f in findings)


def test_healthy_h100_under_load_has_no_findings():
    assert findings_for([gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_load.csv")]) == []


def test_idle_h100_gpu_idle_reason_is_benign():
    gpu = gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv")
    assert gpu["throttle_reasons"] == ["gpu_idle"]
    assert findings_for([gpu]) == []


def test_idle_rtx4080_gen1_link_is_info_not_warning():
    gpu = gpu_from_query_csv("rtx-4080-super-1gpu_drv595.71.05_idle.csv")
    assert gpu["pcie"]["gen_current"] == 1 and gpu["pcie"]["gen_max"] == 4
    found = findings_for([gpu])
    link = [f for f in found if f.code in ("interconnect_slow", "link_note")]
    assert [(f.code, f.severity, f.actual, f.expected) for f in link] == [("link_note", Severity.INFO, "Gen1", "Gen4")]


def test_l40s_persistence_off_is_info():
    found = findings_for([gpu_from_query_csv("l40s-1gpu_drv595.80_idle.csv")])
    assert codes(found) == [("gpu_setting", "info", "persistence_off")]  # an info note has its own code


def test_h200_with_mig_enabled_is_a_virtualization_limit():
    found = findings_for([gpu_from_query_csv("h200-mig-5inst_drv590.48.01_idle.csv")])
    assert codes(found) == [("virtualization_limit", "warn", "mig_enabled")]


def test_degraded_h100_fails_on_ecc_remap_throttle_width_and_power():
    gpu = copy.deepcopy(gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_load.csv"))
    gpu["ecc"].update(volatile_uncorrected=3, remapped_rows_pending=True)
    gpu["throttle_reasons"] = ["sw_power_cap", "hw_slowdown"]
    gpu["pcie"]["width_current"] = 8
    gpu["power_limit_w"] = 500.0  # 71 % of 700 W
    found = findings_for([gpu])
    assert codes(found) == [
        ("health_problem", "fail", "ecc_volatile"),
        ("health_problem", "fail", "power_limit"),
        ("health_problem", "fail", "remap_pending"),
        ("health_problem", "fail", "throttle_hw"),
        ("interconnect_slow", "warn", "pcie_width"),
    ]
    width = [f for f in found if f.code == "interconnect_slow"][0]
    assert (width.expected, width.actual) == ("x16", "x8")
    assert all(f.sources for f in found)


def test_retired_pages_limits_and_aggregate_ecc():
    gpu = gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_load.csv")
    for retired, expected in ((14, []), (15, ["warn"]), (63, ["fail"])):
        degraded = copy.deepcopy(gpu)
        degraded["ecc"]["retired_pages"] = retired
        assert [f.severity.value for f in findings_for([degraded])] == expected
    degraded = copy.deepcopy(gpu)
    degraded["ecc"]["aggregate_uncorrected"] = 2
    assert codes(findings_for([degraded])) == [("health_problem", "warn", "ecc_aggregate")]


def test_xid_events_split_hardware_from_application():
    gpu = gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_load.csv")
    events = [{"xid": 79, "pci_bus_id": "0000:18:00"}, {"xid": 13, "pci_bus_id": "0000:18:00"},
              {"xid": 13, "pci_bus_id": "0000:18:00"}, {"xid": 999}]
    found = findings_for([gpu], xid_events=events)
    assert [(f.actual, f.severity.value) for f in found] == [("Xid 13 x2", "warn"), ("Xid 79 x1", "fail"),
                                                             ("Xid 999 x1", "warn")]


def test_two_gpus_without_nvlink_is_info():
    gpu = gpu_from_query_csv("l40s-1gpu_drv595.80_idle.csv")
    gpu["persistence_mode"] = True
    second = dict(gpu, index=1)
    found = findings_for([gpu, second], topology={"matrix": {}, "nvlink": False})
    assert codes(found) == [("link_note", "info", "no_nvlink")]
    assert findings_for([gpu, second], topology={"matrix": {}, "nvlink": True}) == []


def test_pcie_slot_below_gpu_capability_uses_the_kb():
    class KB:
        def gpu(self, name):
            return type("Model", (), {"pcie_gen": 5})()

    gpu = gpu_from_query_csv("h100-80gb-hbm3-1gpu_drv590.48.01_load.csv")
    gpu["pcie"].update(gen_current=4, gen_max=4)
    found = health_findings(SnapshotView(snapshot_with([gpu])), KB())
    assert codes(found) == [("interconnect_slow", "warn", "pcie_slot")]


def test_findings_render_in_both_languages():
    gpu = gpu_from_query_csv("h200-mig-5inst_drv590.48.01_idle.csv")
    finding = findings_for([gpu])[0]
    english, chinese = render(finding.title, "en"), render(finding.title, "zh")
    assert "MIG" in english and "{" not in english and "MIG" in chinese and english != chinese


def test_snapshot_without_gpus_gives_nothing():
    assert health_findings(SnapshotView({"schema_version": 1, "kind": "snapshot"})) == []

"""Health findings on GPU values from real nvidia-smi captures (idle/load), and on degraded copies of them."""

import copy

from gpuvet.checks.health import health_findings
from gpuvet.i18n import render
from gpuvet.models import Severity
from gpuvet.snapshot import SnapshotView

from .helpers import FIXTURES, gpu_from_query_csv, snapshot_with


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


def _topology(name):
    from gpuvet.probe import smi

    return smi.parse_topo((FIXTURES / "nvidia-smi-topo-m" / name).read_text(), details=True)


def _gpus(count):
    gpu = gpu_from_query_csv("l40s-1gpu_drv595.80_idle.csv")
    gpu["persistence_mode"] = True
    return [dict(gpu, index=i) for i in range(count)]


def test_pcie_paths_name_which_pairs_nccl_joins_through_host_memory():
    """NCCL's default P2P level is PXB (src/graph/paths.cc: "By default don't use P2P across CPU Host Bridges and
    further apart"); nvidia-smi topo -m names each pair's path (a real 5-GPU, 2-NUMA box: PHB, NODE and SYS)."""
    from gpuvet.i18n import render

    (note,) = findings_for(_gpus(5), topology=_topology("5gpu-mixed_PHB-NODE-SYS_2numa_spaces.txt"))
    assert (note.code, note.severity.value) == ("link_note", "info")
    assert note.actual == "PHB: 1-2, 3-4; NODE: 1-3, 1-4, 2-3, 2-4; SYS: 0-1, 0-2, 0-3, 0-4"
    assert note.detail.id.endswith("detail_paths_host") and "host memory" in render(note.detail, "en")
    assert any("src/graph/paths.cc" in s for s in note.sources)
    (all_sys,) = findings_for(_gpus(8), topology=_topology("rtx-4090-8gpu-2nic_all-SYS_matrix-only.txt"))
    assert all_sys.actual == "SYS: all 28 pairs"


def test_pairs_behind_a_switch_are_the_peer_to_peer_ones():
    topology = _topology("rtx-5090-2gpu_PHB.txt")  # a real 2-GPU matrix, one pair moved behind a PCIe switch
    topology["matrix"] = {"GPU0": {"GPU1": "PIX", "GPU2": "SYS"}, "GPU1": {"GPU0": "PIX", "GPU2": "SYS"},
                          "GPU2": {"GPU0": "SYS", "GPU1": "SYS"}}
    (note,) = findings_for(_gpus(3), topology=topology)
    assert note.detail.id.endswith("detail_paths") and note.detail.params["p2p_pairs"] == "0-1"
    assert note.detail.params["host_pairs"] == "0-2, 1-2"
    topology["matrix"] = {"GPU0": {"GPU1": "PXB"}, "GPU1": {"GPU0": "PXB"}}
    (switch,) = findings_for(_gpus(2), topology=topology)
    assert switch.detail.id.endswith("detail_paths_p2p")


def _pci(redirecting, ports=4, iommu=None):
    return {"iommu": iommu or {"enabled": None, "groups": None, "cmdline": [], "passthrough": None},
            "acs": {"readable": True, "ports": ports, "redirecting": redirecting}}


def test_acs_redirect_between_gpus_is_a_warning_with_the_per_port_setpci():
    """NCCL troubleshooting, "PCI Access Control Services (ACS)": the setpci command per bridge, after every boot."""
    port = {"bdf": "0000:04:08.0", "port": "switch_downstream",
            "flags": "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"}
    (warning,) = findings_for(_gpus(2), pci=_pci([port]))
    assert (warning.code, warning.severity.value) == ("interconnect_slow", "warn")
    assert warning.fix.commands == ("sudo setpci -s 0000:04:08.0 ECAP_ACS+0x6.w=0000",)
    assert warning.actual == "0000:04:08.0" and "1 of 4" in render(warning.title, "en")
    assert any("troubleshooting.html#pci-access-control-services-acs" in s for s in warning.sources)
    assert findings_for(_gpus(1), pci=_pci([port])) == []  # one GPU has no peer


def test_a_grepped_acsctl_paste_names_no_port_so_the_fix_finds_them_first():
    from gpuvet.ingest import detect_kind, parse

    text = (FIXTURES / "lspci-acs" / "grep-acsctl_12-ports_5-redirect_nccl523_truncated.txt").read_text()
    pci = parse(detect_kind(text), text)["pci"]["value"]
    (warning,) = findings_for(_gpus(2), pci=pci)
    assert "5 of 12" in render(warning.title, "en") and warning.fix.commands[0].startswith("sudo lspci -vvv")
    clean = (FIXTURES / "lspci-acs" / "grep-acsctl_9-ports_no-redirect_amd-switch_nccl606.txt").read_text()
    assert findings_for(_gpus(2), pci=parse(detect_kind(clean), clean)["pci"]["value"]) == []


def test_an_iommu_without_passthrough_is_a_note():
    iommu = {"enabled": True, "groups": 40, "cmdline": ["intel_iommu=on"], "passthrough": False}
    (note,) = findings_for(_gpus(2), pci=_pci([], iommu=iommu))
    assert (note.code, note.severity.value) == ("link_note", "info") and "intel_iommu=on" in note.actual
    iommu = dict(iommu, cmdline=["intel_iommu=on", "iommu=pt"], passthrough=True)
    assert findings_for(_gpus(2), pci=_pci([], iommu=iommu)) == []


# ------------------------------------------------------------------------------------- someone else on the GPU
def _pasted_table(name):
    from gpuvet.ingest import detect_kind, parse

    text = (FIXTURES / "nvidia-smi" / name).read_text(encoding="utf-8")
    return parse(detect_kind(text), text, name)


def test_a_pasted_busy_h100_warns_and_names_the_processes_holding_its_memory():
    snapshot = _pasted_table("h100-80gb-hbm3-1gpu_drv590.48.01_load.txt")
    (gpu,) = snapshot["gpus"]["value"]
    assert gpu["utilization_percent"] == 100 and gpu["memory_used_mib"] == 19818
    (found,) = [f for f in health_findings(SnapshotView(snapshot)) if f.title.id.startswith("smoke.health.others")]
    assert found.severity is Severity.WARN and found.code == "virtualization_limit"
    title, detail = render(found.title, "en"), render(found.detail, "en")
    assert "3 other process(es) hold 19.3 GiB of 79.6 GiB" in title
    assert "./gpu_burn (pid 11345, 15.3 GiB)" in detail and "/root/tools/memhog (pid 11327" in detail
    assert "100 % busy" in detail
    assert "gpu_burn" in render(found.detail, "zh")


def test_busy_with_no_process_listed_is_said_as_a_process_this_view_cannot_see():
    # the L40S capture: 242 W in P0, 100 % GPU-Util, "No running processes found"
    found = [f for f in health_findings(SnapshotView(_pasted_table("l40s-1gpu_drv595.80_idle.txt")))
             if f.code == "virtualization_limit"]
    assert [f.title.id for f in found] == ["smoke.health.unlisted_busy.title"]


def test_an_idle_gpu_and_a_desktop_with_its_own_small_jobs_do_not_warn():
    for name in ("h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt", "h200-1gpu_drv590.48.01_idle.txt",
                 "rtx-2080-super-1gpu_drv595.71.05_load.txt"):  # gnome-shell and two ffmpeg, 600 MiB, 8 %
        found = [f for f in health_findings(SnapshotView(_pasted_table(name))) if f.code == "virtualization_limit"]
        assert found == [], name


def test_check_says_the_busy_gpu_first():
    import contextlib
    import io

    from gpuvet.cli import main

    path = FIXTURES / "nvidia-smi" / "h200-1gpu_drv590.48.01_load.txt"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--no-network", "--from", str(path), "torch==2.7.0"])
    assert code == 0  # a warning: the build still runs
    first = out.getvalue().splitlines()[0]
    assert first.startswith("Verdict: WARN") and "other process(es) hold" in first


def test_the_live_probes_xml_reads_utilization_and_a_v100_shared_with_four_processes_warns():
    from gpuvet.ingest import detect_kind, parse

    path = FIXTURES / "nvidia-smi-q-x"
    hits = []
    for xml in sorted(path.glob("*.xml")):
        text = xml.read_text(encoding="utf-8")
        snapshot = parse(detect_kind(text), text, xml.name)
        for finding in health_findings(SnapshotView(snapshot)):
            if finding.title.id == "smoke.health.others_on_gpu.title":
                hits.append(render(finding.title, "en"))
    assert any("Tesla V100-PCIE-32GB): 4 other process(es) hold 12.0 GiB" in h for h in hits), hits


def test_persistence_mode_is_a_note_on_a_data_center_gpu_and_none_on_a_consumer_card():
    """DCGM's check is data-center practice: a renter of a GeForce card cannot act on it, so it is not said there."""
    from gpuvet.kb import load

    kb = load()

    def persistence(name):
        found = health_findings(SnapshotView(_pasted_table(name)), kb)
        return [f for f in found if f.title.id == "smoke.health.persistence_off.title"]

    assert persistence("rtx-3080-1gpu_drv550.54.14.txt") == []  # GeForce RTX 3080, Persistence-M Off
    assert len(persistence("l40s-1gpu_drv595.80_idle.txt")) == 1  # L40S, Persistence-M Off

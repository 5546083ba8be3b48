"""A pasted `nvidia-smi topo -p2p r` next to the machine's nvidia-smi: GPU pairs without peer-to-peer access are one
warning naming each pair and why (NVIDIA's legend), with what to measure and the NCCL setting; all OK says nothing."""

from pathlib import Path

from gpuvet.checks import run_checks
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.snapshot import merge_all

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMI = FIXTURES / "nvidia-smi" / "h100-nvl-2gpu_drv550.54.14.txt"


def _report(p2p_fixture):
    texts = [SMI.read_text(), (FIXTURES / "nvidia-smi-topo-p2p" / p2p_fixture).read_text()]
    snapshot = merge_all([parse(detect_kind(text), text) for text in texts])
    return run_checks(snapshot, ["torch==2.3.0"])


def _p2p(report):
    return [f for f in report.machine if f.title.id == "smoke.health.p2p_unsupported.title"]


def test_pairs_without_p2p_are_one_warning_that_names_them():
    (finding,) = _p2p(_report("l4-2gpu_p2p-r_cns_no-legend.txt"))
    assert finding.code == "interconnect_slow" and finding.severity.value == "warn"
    assert finding.actual == "0-1 (CNS)"
    assert "CNS chipset not supported" in render(finding.detail, "en")  # the legend, in the user's language
    assert "CNS 芯片组不支持" in render(finding.detail, "zh")
    assert "gpuvet smoke --distributed" in finding.fix.commands
    assert any("nccl" in s.lower() for s in finding.sources)


def test_all_pairs_ok_says_nothing():
    assert _p2p(_report("2gpu_p2p-rw_ok_tabs.txt")) == []

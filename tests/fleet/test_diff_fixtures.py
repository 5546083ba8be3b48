"""Hardware that differs across a fleet, read from real captured nvidia-smi output through the real parsers.

Where a capture had to differ from the original to stand for an outlier node, the test says exactly which bytes
it changed; the rest of each document is the real capture.
"""

import re

from fleet.sshd_harness import FIXTURES
from gpuvet.checks.fleet import fleet_findings, group_fields
from gpuvet.ingest import parse

V100_8GPU = FIXTURES / "nvidia-smi-q-x" / "v100s-pcie-32gb-8gpu_drv460.73.01.xml"
CSV = FIXTURES / "nvidia-smi-query-gpu-csv"


def v100_xml():
    return V100_8GPU.read_text(encoding="utf-8")


def narrow_link(xml, gpu_position, width="8x"):
    """Change one card's <current_link_width>16x</...> to 8x: the only edit, standing for a card in an x8 slot."""
    matches = list(re.finditer(r"<current_link_width>16x</current_link_width>", xml))
    start, end = matches[gpu_position].span()
    return xml[:start] + "<current_link_width>%s</current_link_width>" % width + xml[end:]


def drop_last_gpu(xml):
    """Remove the last <gpu> element and lower <attached_gpus>: a node where one card fell off the bus."""
    last = xml.rindex("<gpu id=")
    closing = xml.index("</gpu>", last) + len("</gpu>")
    return xml[:last] + xml[closing:].replace("<attached_gpus>8</attached_gpus>", "<attached_gpus>7</attached_gpus>")


def snap(kind, text):
    return parse(kind, text)


def codes(findings):
    return [(item.finding.code, item.hosts) for item in findings]


def test_real_capture_has_eight_cards_at_x16():
    gpus = snap("nvidia-smi-xml", v100_xml())["gpus"]["value"]
    assert len(gpus) == 8 and {g["pcie"]["width_current"] for g in gpus} == {16}


def test_card_at_x8_is_interconnect_slow_naming_host_and_gpu_index():
    fleet = [("node01", snap("nvidia-smi-xml", v100_xml())),
             ("node02", snap("nvidia-smi-xml", narrow_link(v100_xml(), 3))),
             ("node03", snap("nvidia-smi-xml", v100_xml()))]
    diff = group_fields(fleet)
    pcie = next(g for g in diff.groups if g.field == "pcie")
    assert [v.hosts for v in pcie.values] == [("node01", "node03"), ("node02",)]
    findings = fleet_findings(fleet, diff)
    assert codes(findings) == [("interconnect_slow", ("node02",))]
    finding = findings[0].finding
    assert finding.severity.value == "warn"
    assert finding.actual == "GPU 3 x8" and finding.expected == "x16"
    from gpuvet.i18n import render

    assert "node02" in render(finding.detail, "en") and "GPU 3 x8" in render(finding.detail, "en")


def test_x8_card_within_one_host_is_found_even_without_other_hosts_differing():
    # Every host has the same narrow card: the fleet fingerprints agree, yet the card is slower than its siblings.
    odd = narrow_link(v100_xml(), 5)
    fleet = [("node01", snap("nvidia-smi-xml", odd)), ("node02", snap("nvidia-smi-xml", odd))]
    findings = fleet_findings(fleet, group_fields(fleet))
    assert codes(findings) == [("interconnect_slow", ("node01",)), ("interconnect_slow", ("node02",))]
    assert findings[0].finding.actual == "GPU 5 x8"


def test_gpu_missing_on_one_host_is_a_finding():
    fleet = [("node01", snap("nvidia-smi-xml", v100_xml())), ("node02", snap("nvidia-smi-xml", v100_xml())),
             ("node03", snap("nvidia-smi-xml", drop_last_gpu(v100_xml())))]
    diff = group_fields(fleet)
    findings = fleet_findings(fleet, diff)
    assert codes(findings) == [("health_problem", ("node03",))]
    finding = findings[0].finding
    assert (finding.expected, finding.actual) == ("8", "7")
    from gpuvet.i18n import render

    assert "Xid 79" in render(finding.detail, "en")
    assert "Xid 79" in render(finding.detail, "zh")


def test_mig_mode_differing_is_a_finding_from_unmodified_captures():
    # The same H100 host captured twice by the exporter's authors, once with MIG disabled, once with MIG enabled.
    plain = snap("nvidia-smi-csv", (CSV / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv").read_text(encoding="utf-8"))
    mig = snap("nvidia-smi-csv", (CSV / "h100-80gb-hbm3-mig-4inst_drv590.48.01_idle.csv").read_text(encoding="utf-8"))
    fleet = [("a", plain), ("b", plain), ("c", mig)]
    diff = group_fields(fleet)
    assert [(v.value, v.hosts) for g in diff.groups if g.field == "mig" for v in g.values] == [
        ("disabled", ("a", "b")), ("enabled", ("c",))]
    findings = fleet_findings(fleet, diff)
    assert codes(findings) == [("virtualization_limit", ("c",))]
    assert findings[0].finding.sources == ("https://docs.nvidia.com/datacenter/tesla/mig-user-guide/",)


def test_identical_real_nodes_have_no_findings():
    fleet = [("node01", snap("nvidia-smi-xml", v100_xml())), ("node02", snap("nvidia-smi-xml", v100_xml()))]
    assert fleet_findings(fleet, group_fields(fleet)) == []

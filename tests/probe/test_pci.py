"""gpuvet.probe.pci on sysfs trees the tests build: configuration spaces laid out per the PCI Express Base
Specification, read by the probe and, where pciutils is installed, decoded by the real lspci (`lspci -F DUMP -vvv`)
so the two readings are compared line by line."""

import shutil
import struct
import subprocess

import pytest

from gpuvet.probe import pci

REDIRECT_ALL = 0x001D  # SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+: what an AMD GPP bridge ships (NVIDIA/nccl#2079)


def config(port_type=6, acs_ctl=REDIRECT_ALL, extended=True, acs=True, klass=(0x06, 0x04)):
    """A bridge's configuration space: PCIe capability at 0x40 (port type in bits 7:4), ACS at 0x100 when asked."""
    data = bytearray(4096 if extended else 64)
    struct.pack_into("<HH", data, 0, 0x10B5, 0x8747)  # a PLX PEX 8747 switch
    struct.pack_into("<H", data, 6, 0x0010)  # status: capabilities list
    data[0x08], data[0x0A], data[0x0B], data[0x0E] = 0xCA, klass[1], klass[0], 0x01
    if extended:
        data[0x34] = 0x40
        data[0x40], data[0x41] = 0x10, 0x00
        struct.pack_into("<H", data, 0x42, 0x0002 | port_type << 4)
        if acs:
            struct.pack_into("<I", data, 0x100, 0x0001000D)
            struct.pack_into("<HH", data, 0x104, 0x005F, acs_ctl)
    return bytes(data)


DEVICES = {  # bdf -> (what the bridge is, its configuration space)
    "0000:03:00.0": ("switch upstream, ACS on", config(port_type=5)),
    "0000:04:08.0": ("switch downstream, redirect on", config()),
    "0000:04:10.0": ("switch downstream, SrcValid only", config(acs_ctl=0x0001)),
    "0000:00:01.1": ("root port, redirect on", config(port_type=4)),
    "0000:00:02.1": ("root port without ACS", config(port_type=4, acs=False)),
}


def sysfs(root, devices, cmdline=""):
    (root / "bus" / "pci" / "devices").mkdir(parents=True)
    for bdf, (_, data) in devices.items():
        folder = root / "bus" / "pci" / "devices" / bdf
        folder.mkdir()
        (folder / "class").write_text("0x%02x%02x00\n" % (data[0x0B], data[0x0A]))
        (folder / "config").write_bytes(data)
    (root / "class" / "iommu").mkdir(parents=True)
    (root / "kernel" / "iommu_groups").mkdir(parents=True)
    proc = root / "cmdline"
    proc.write_text(cmdline)
    return str(root), str(proc)


def test_ports_with_p2p_redirect_are_named_with_lspcis_flags(tmp_path):
    root, cmdline = sysfs(tmp_path, DEVICES)
    fact = pci.collect(root, cmdline)
    acs = fact["value"]["acs"]
    assert acs["ports"] == 4 and acs["readable"] is True  # the upstream port is not between two GPUs
    assert acs["redirecting"] == [
        {"bdf": "0000:00:01.1", "port": "root_port",
         "flags": "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"},
        {"bdf": "0000:04:08.0", "port": "switch_downstream",
         "flags": "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"},
    ]


def test_without_root_the_acs_state_is_unknown_not_off(tmp_path):
    cut = {bdf: (what, data[:64]) for bdf, (what, data) in DEVICES.items()}  # what non-root reads from sysfs
    root, cmdline = sysfs(tmp_path, cut)
    acs = pci.collect(root, cmdline)["value"]["acs"]
    assert acs["redirecting"] == [] and acs["readable"] in (None, False)


def test_iommu_state_from_sysfs_and_the_kernel_command_line(tmp_path):
    root, cmdline = sysfs(tmp_path, {}, "BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt quiet")
    (tmp_path / "class" / "iommu" / "dmar0").mkdir()
    (tmp_path / "kernel" / "iommu_groups" / "0").mkdir()
    iommu = pci.collect(root, cmdline)["value"]["iommu"]
    assert iommu == {"enabled": True, "groups": 1, "cmdline": ["intel_iommu=on", "iommu=pt"], "passthrough": True}
    (tmp_path / "cmdline").write_text("ro intel_iommu=on")
    assert pci.collect(root, cmdline)["value"]["iommu"]["passthrough"] is False


def test_a_looping_or_cut_capability_list_ends(tmp_path):
    data = bytearray(config())
    data[0x41] = 0x40  # the PCIe capability points at itself
    struct.pack_into("<I", data, 0x100, 0x1000000D & 0xFFFF | 0x100 << 20)  # an extended capability that loops
    assert pci.port_type(bytes(data)) == "switch_downstream"
    data[0x40] = 0x05  # not PCIe, next = itself: no answer, no hang
    assert pci.port_type(bytes(data)) is None
    assert pci.acs_control(bytes(data[:0x102])) is None and pci.port_type(b"") is None


def test_no_sysfs_is_a_missing_fact(tmp_path):
    assert pci.collect(str(tmp_path / "nothing"), str(tmp_path / "cmdline"))["status"] == "missing"


def _lspci_dump(devices):
    lines = []
    for bdf, (_, data) in devices.items():
        lines.append(bdf[5:] + " PCI bridge: test")
        lines += ["%02x: %s" % (o, " ".join("%02x" % b for b in data[o:o + 16])) if o < 256 else
                  "%03x: %s" % (o, " ".join("%02x" % b for b in data[o:o + 16])) for o in range(0, len(data), 16)]
        lines.append("")
    return "\n".join(lines)


@pytest.mark.skipif(shutil.which("lspci") is None, reason="pciutils is not installed (.ci/run installs it: .ci/apt-install.sh)")
def test_the_probe_reads_what_lspci_reads(tmp_path):
    dump = tmp_path / "dump.txt"
    dump.write_text(_lspci_dump(DEVICES))
    printed = subprocess.run(["lspci", "-F", str(dump), "-vvv"], capture_output=True, text=True, timeout=30).stdout
    blocks = {}
    for block in printed.split("\n\n"):
        if block.strip():
            blocks["0000:" + block.split()[0]] = block
    for bdf, (what, data) in DEVICES.items():
        block = blocks[bdf]
        control = pci.acs_control(data)
        if control is None:
            assert "ACSCtl" not in block, what
        else:
            assert "ACSCtl:\t" + pci.acs_flags(control) in block, what
        spelled = {"root_port": "Root Port", "switch_downstream": "Downstream Port", "switch_upstream": "Upstream Port"}
        assert "Express (v2) " + spelled[pci.port_type(data)] in block, what

"""A pasted ``ibstat`` becomes the same ``infiniband`` fact a live probe reads from sysfs (the kernel's names and
numbers: ibstat.c's "Initializing" is sysfs's "2: INIT"), so a port a provider's paste shows not Active / LinkUp is
named by the same rule. The real capture is tests/fixtures/ibstat/ (PROVENANCE.md); the two-device sample is written
with ibstat.c's own format strings (rdma-core infiniband-diags/ibstat.c: ca_dump, port_dump)."""

import json
from pathlib import Path

import pytest

from gpuvet.cli import main
from gpuvet.ingest import detect_kind, ibstat, parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURE = FIXTURES / "ibstat" / "connectx4-1port_initializing_no-sm.txt"
SMI = FIXTURES / "nvidia-smi" / "h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"


def _ca(name, ca_type, ports):
    lines = ["CA '%s'" % name, "\tCA type: %s" % ca_type, "\tNumber of ports: %d" % len(ports),
             "\tFirmware version: 28.39.1002", "\tHardware version: 0", "\tNode GUID: 0x946dae03002a6b10",
             "\tSystem image GUID: 0x946dae03002a6b10"]
    for number, (state, physical, rate, layer) in enumerate(ports, 1):
        lines += ["\tPort %d:" % number, "\t\tState: %s" % state, "\t\tPhysical state: %s" % physical,
                  "\t\tRate: %s" % rate, "\t\tBase lid: 0", "\t\tLMC: 0", "\t\tSM lid: 0",
                  "\t\tCapability mask: 0x00010000", "\t\tPort GUID: 0x966daefffe2a6b10", "\t\tLink layer: %s" % layer]
    return "\n".join(lines) + "\n"


TWO_UP = _ca("mlx5_0", "MT4129", [("Active", "LinkUp", "400", "InfiniBand")]) + \
    _ca("mlx5_bond_0", "MT4125", [("Active", "LinkUp", "100", "Ethernet")])


def test_the_capture_is_detected_and_read_in_the_kernels_names():
    text = CAPTURE.read_text()
    assert detect_kind(text) == "ibstat"
    fact = parse("ibstat", text, "ibstat.txt")["infiniband"]
    assert fact["source"] == "pasted:ibstat"
    (device,) = fact["value"]["devices"]
    assert (device["name"], device["fw_ver"], device["hca_type"]) == ("mlx5_0", "12.20.1010", None)
    assert device["ports"] == [{"port": 1, "state": "INIT", "state_code": 2, "phys_state": "LinkUp",
                                "phys_state_code": 5, "rate": "100 Gb/sec", "link_layer": "InfiniBand"}]
    assert "peer_memory_module" not in fact["value"]  # ibstat does not say: unknown, never "not loaded"


@pytest.mark.parametrize("words, number, name", [
    ("Down", 1, "DOWN"), ("Initializing", 2, "INIT"), ("Armed", 3, "ARMED"), ("Active", 4, "ACTIVE"),
])
def test_every_port_state_ibstat_prints_maps_to_the_kernels(words, number, name):
    text = _ca("mlx5_0", "MT4123", [(words, "LinkUp", "200", "InfiniBand")])
    (port,) = parse("ibstat", text, "x")["infiniband"]["value"]["devices"][0]["ports"]
    assert (port["state_code"], port["state"]) == (number, name)


def test_physical_states_and_rates_as_sysfs_words_them():
    text = _ca("mlx4_0", "MT4099", [("Down", "Polling", "40 (FDR10)", "InfiniBand"),
                                     ("Down", "PhyTest", "10", "InfiniBand")])
    polling, phy_test = parse("ibstat", text, "x")["infiniband"]["value"]["devices"][0]["ports"]
    assert (polling["phys_state_code"], polling["phys_state"], polling["rate"]) == (2, "Polling", "40 Gb/sec (FDR10)")
    assert (phy_test["phys_state_code"], phy_test["phys_state"]) == (7, "Phy Test")


def _check(capsys, *files):
    args = ["check", "--no-network", "torch==2.4.1+cu121", "--format", "json"]
    for path in files:
        args += ["--from", str(path)]
    code = main(args)
    document = json.loads(capsys.readouterr().out)
    return code, [f for f in document["machine"] if "RDMA" in f["title"] or "nvidia_peermem" in f["title"]]


def test_a_pasted_port_that_is_not_active_is_named_with_the_commands_to_look(capsys):
    code, (finding,) = _check(capsys, CAPTURE, SMI)
    assert code == 0  # a warning: the build runs on one node
    assert (finding["code"], finding["severity"]) == ("nccl_comm_failure", "warn")
    assert "mlx5_0 port 1" in finding["title"] and finding["actual"] == "INIT / LinkUp"
    assert finding["fix"]["commands"] == ["ibstat", "ibv_devinfo"]


def test_active_ports_give_no_finding_and_no_guess_about_gpudirect_rdma(capsys, tmp_path):
    path = tmp_path / "ibstat.txt"
    path.write_text(TWO_UP)
    assert _check(capsys, path, SMI)[1] == []


def test_ibstat_inside_a_longer_log_is_found_by_its_block_finder():
    from gpuvet.ingest import parse_embedded

    log = "$ ibstat\n" + CAPTURE.read_text() + "\n$ python train.py\nRuntimeError: NCCL error\n"
    (device,) = parse_embedded(log)["infiniband"]["value"]["devices"]
    assert device["ports"][0]["state"] == "INIT"


def test_text_without_a_device_is_one_clear_error(capsys, tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("CA 'mlx5_0'\n\tNumber of ports: 1\n")
    assert ibstat.looks_like(path.read_text())
    snapshot = parse("ibstat", path.read_text(), "x")
    assert snapshot["infiniband"]["value"]["devices"][0]["ports"] == []
    empty = tmp_path / "empty.txt"
    empty.write_text("nothing here\n")
    assert main(["check", "--no-network", "torch==2.4.1", "--from", "ibstat:%s" % empty]) == 2
    assert "ibstat" in capsys.readouterr().err

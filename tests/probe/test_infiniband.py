"""RDMA devices (InfiniBand, RoCE) read by gpuvet.probe.infiniband from sysfs trees the tests build with the kernel's
own attribute formats (Documentation/ABI/stable/sysfs-class-infiniband: state "4: ACTIVE", phys_state "5: LinkUp",
rate "200 Gb/sec (4X HDR)", link_layer "InfiniBand" / "Ethernet"), then judged by `gpuvet check --snapshot` and
grouped by `gpuvet diff`."""

import json

from snapshots import gpu, snapshot

from gpuvet.cli import main
from gpuvet.probe import infiniband

ACTIVE = ("4: ACTIVE", "5: LinkUp")
DOWN = ("1: DOWN", "3: Disabled")
POLLING = ("1: DOWN", "2: Polling")


def rdma_sysfs(root, devices, peer_module="nvidia_peermem"):
    """A /sys stand-in: class/infiniband/<dev>/{hca_type,fw_ver,ports/<n>/{state,phys_state,rate,link_layer}} and,
    when asked, module/<peer_module>. ``devices``: name -> (hca_type, [(state, phys_state, link_layer), ...])."""
    for name, (hca_type, ports) in devices.items():
        folder = root / "class" / "infiniband" / name
        (folder / "ports").mkdir(parents=True)
        (folder / "hca_type").write_text(hca_type + "\n")
        (folder / "fw_ver").write_text("20.31.1014\n")
        for number, (state, phys, layer) in enumerate(ports, 1):
            port = folder / "ports" / str(number)
            port.mkdir()
            (port / "state").write_text(state + "\n")
            (port / "phys_state").write_text(phys + "\n")
            (port / "rate").write_text("200 Gb/sec (4X HDR)\n" if layer == "InfiniBand" else "100 Gb/sec (4X EDR)\n")
            (port / "link_layer").write_text(layer + "\n")
    (root / "class" / "infiniband").mkdir(parents=True, exist_ok=True)
    if peer_module:
        (root / "module" / peer_module).mkdir(parents=True)
    return str(root)


EIGHT_UP = {"mlx5_%d" % i: ("MT4123", [ACTIVE + ("InfiniBand",)]) for i in range(8)}
ONE_DOWN = dict(EIGHT_UP, mlx5_3=("MT4123", [DOWN + ("InfiniBand",)]))


def test_ports_devices_and_the_peer_memory_module_are_read_in_the_kernels_formats(tmp_path):
    root = rdma_sysfs(tmp_path, {"mlx5_0": ("MT4123", [ACTIVE + ("InfiniBand",)]),
                                 "mlx5_bond_0": ("MT4125", [POLLING + ("Ethernet",)])})
    fact = infiniband.collect(root)
    assert fact["status"] == "found" and fact["value"]["peer_memory_module"] == "nvidia_peermem"
    ib, roce = fact["value"]["devices"]
    assert (ib["name"], ib["hca_type"], ib["fw_ver"]) == ("mlx5_0", "MT4123", "20.31.1014")
    assert ib["ports"] == [{"port": 1, "state": "ACTIVE", "state_code": 4, "phys_state": "LinkUp", "phys_state_code": 5,
                            "rate": "200 Gb/sec (4X HDR)", "link_layer": "InfiniBand"}]
    assert roce["ports"][0]["state"] == "DOWN" and roce["ports"][0]["phys_state"] == "Polling"
    assert roce["ports"][0]["link_layer"] == "Ethernet"


def test_the_older_module_counts_and_a_machine_without_rdma_says_why(tmp_path):
    older = rdma_sysfs(tmp_path / "a", EIGHT_UP, peer_module="nv_peer_mem")
    assert infiniband.collect(older)["value"]["peer_memory_module"] == "nv_peer_mem"
    none = rdma_sysfs(tmp_path / "b", EIGHT_UP, peer_module=None)
    assert infiniband.collect(none)["value"]["peer_memory_module"] is None
    (tmp_path / "c").mkdir()
    fact = infiniband.collect(str(tmp_path / "c"))
    assert fact["status"] == "missing" and "class/infiniband" in fact["reason"]


def test_unreadable_attributes_are_unknown_not_down(tmp_path):
    root = rdma_sysfs(tmp_path, {"mlx5_0": ("MT4123", [ACTIVE + ("InfiniBand",)])})
    port = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    for name in ("state", "phys_state"):
        (port / name).unlink()
    (port_fact,) = infiniband.collect(root)["value"]["devices"][0]["ports"]
    assert port_fact["state"] is None and port_fact["phys_state"] is None
    assert infiniband.numbered("ACTIVE") == (None, "ACTIVE")  # a value without the kernel's number is kept as is


def _machine(tmp_path, devices, peer_module="nvidia_peermem", name="node"):
    """A snapshot of an 8-GPU node with the ``infiniband`` fact the probe read from the stand-in sysfs."""
    fact = infiniband.collect(rdma_sysfs(tmp_path / name, devices, peer_module))
    cards = [gpu("NVIDIA H100 80GB HBM3", "9.0", index=i) for i in range(8)]
    snap = snapshot(driver="550.54.15", cuda_max="12.4", gpus=cards, python="3.10.12", infiniband=fact)
    path = tmp_path / (name + ".json")
    path.write_text(json.dumps(snap))
    return str(path)


def _check(capsys, path, *flags):
    code = main(["check", "--no-network", "--snapshot", path, "torch==2.4.1+cu121"] + list(flags))
    return code, capsys.readouterr().out


def _rdma(document):
    """The RDMA findings: about the machine, so in ``machine`` (none may leak into a target's own findings)."""
    in_targets = [f for t in document["targets"] for f in t["findings"] if "rdma" in json.dumps(f).lower()]
    assert in_targets == []
    return [f for f in document["machine"] if "RDMA" in f["title"] or "nvidia_peermem" in f["title"]]


def test_a_down_port_is_named_in_text_and_json_with_the_commands_to_look(capsys, tmp_path):
    path = _machine(tmp_path, ONE_DOWN)
    code, text = _check(capsys, path)
    assert code == 0  # a warning: the build runs on one node
    assert "mlx5_3 port 1" in text and "DOWN / Disabled" in text and "ibstat" in text
    _, out = _check(capsys, path, "--format", "json")
    (finding,) = _rdma(json.loads(out))
    assert (finding["code"], finding["severity"], finding["layer"]) == ("nccl_comm_failure", "warn", "nccl")
    assert finding["actual"] == "DOWN / Disabled" and finding["expected"] == "ACTIVE / LinkUp"
    assert finding["fix"]["commands"] == ["ibstat", "ibv_devinfo"]
    assert any("sysfs-class-infiniband" in s for s in finding["sources"])


def test_all_ports_active_and_no_rdma_device_give_no_such_finding(capsys, tmp_path):
    _, out = _check(capsys, _machine(tmp_path, EIGHT_UP, name="up"), "--format", "json")
    assert _rdma(json.loads(out)) == []
    _, out = _check(capsys, _machine(tmp_path, {}, peer_module=None, name="bare"), "--format", "json")
    assert _rdma(json.loads(out)) == []


def test_rdma_ports_without_gpudirect_rdma_are_a_note_with_modprobe(capsys, tmp_path):
    _, out = _check(capsys, _machine(tmp_path, EIGHT_UP, peer_module=None), "--format", "json")
    (note,) = _rdma(json.loads(out))
    assert (note["code"], note["severity"]) == ("link_note", "info")
    assert note["fix"]["commands"] == ["sudo modprobe nvidia_peermem"]
    assert any("gpudirect-rdma" in s for s in note["sources"])
    _, out = _check(capsys, _machine(tmp_path, EIGHT_UP, peer_module=None, name="zh"), "--format", "json", "--lang", "zh")
    (note,) = _rdma(json.loads(out))
    assert "nvidia_peermem" in note["title"] and "未加载" in note["title"]


def test_diff_sets_apart_the_node_whose_port_is_down_and_the_one_without_peer_memory(capsys, tmp_path):
    paths = [_machine(tmp_path, EIGHT_UP, name="n1"), _machine(tmp_path, ONE_DOWN, name="n2"),
             _machine(tmp_path, EIGHT_UP, peer_module=None, name="n3")]
    (tmp_path / "n4").mkdir()  # a node whose kernel shows no RDMA device at all: "none", not "cannot tell"
    bare = json.loads(open(paths[0]).read())
    bare["infiniband"] = infiniband.collect(str(tmp_path / "n4"))
    (tmp_path / "n4.json").write_text(json.dumps(bare))
    paths.append(str(tmp_path / "n4.json"))
    main(["diff", "--format", "json"] + paths)
    groups = {g["field"]: [(v["value"], [h.rsplit("/", 1)[-1] for h in v["hosts"]]) for v in g["values"]]
              for g in json.loads(capsys.readouterr().out)["groups"]}
    assert groups["rdma_ports"] == [("8 up", ["n1.json", "n3.json"]), ("7 up; mlx5_3 port 1: DOWN / Disabled", ["n2.json"]),
                                    ("none", ["n4.json"])]
    assert groups["gpudirect_rdma"] == [("nvidia_peermem", ["n1.json", "n2.json"]), ("none", ["n3.json"]),
                                        (None, ["n4.json"])]  # no RDMA port: the module does not matter
    main(["diff"] + paths)
    out = capsys.readouterr().out
    assert "mlx5_3 port 1: DOWN / Disabled" in out and "RDMA ports" in out and "GPUDirect RDMA module" in out

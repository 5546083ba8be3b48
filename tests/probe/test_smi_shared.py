"""One nvidia-smi parser for the live probe and for pasted text: both paths give the same GPU dicts, on every real
capture in tests/fixtures, under the newest Python and the oldest the probe supports (3.6, standard library only)."""

import json
import subprocess
from pathlib import Path

import pytest

from gpuvet.errors import InputError
from gpuvet.ingest import parse
from gpuvet.probe import packages, smi, toolkit
from gpuvet.snapshot import SnapshotView

from .conftest import FIXTURES, SRC

PY36 = Path.home() / ".pyenv/versions/3.6.15/bin/python3"
SMOKE_REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown", "sw_thermal_slowdown", "sync_boost")


def read(path):
    return (FIXTURES / path).read_text(encoding="utf-8")


def fixtures(directory):
    return [directory + "/" + p.name for p in sorted((FIXTURES / directory).glob("*"))]


@pytest.mark.parametrize("relative", fixtures("nvidia-smi-q-x"))
def test_pasted_xml_is_the_probe_parse(relative):
    pasted = parse("nvidia-smi-xml", read(relative), relative)
    probed = smi.parse_xml(read(relative))
    assert pasted["gpus"]["value"] == probed["gpus"]
    assert pasted["driver"]["version"].get("value") == probed["driver_version"]
    assert pasted["driver"]["cuda_max"].get("value") == probed["cuda_version"]


@pytest.mark.parametrize("relative", fixtures("nvidia-smi-query-gpu-csv"))
def test_pasted_csv_is_the_probe_parse(relative):
    pasted = parse("nvidia-smi-csv", read(relative), relative)
    probed = smi.parse_csv(read(relative))
    assert pasted["gpus"]["value"] == probed["gpus"]


def test_pasted_topology_is_the_probe_parse_with_details():
    text = read("nvidia-smi-topo-m/a800-8gpu-4nic_NV8_spaces.txt")
    pasted = parse("nvidia-smi-topo", text)["topology"]["value"]
    probed = smi.parse_topo(text)
    assert {k: pasted[k] for k in probed} == probed
    # the matrix is GPU to GPU (docs/SNAPSHOT.md): no self entry, no NIC; NIC links and affinity stay, apart
    assert set(probed["matrix"]["GPU1"]) == {"GPU%d" % i for i in range(8)} - {"GPU1"}
    assert pasted["nic_links"]["GPU1"]["NIC0"] == "PIX" and pasted["nic_links"]["GPU7"]["NIC3"] == "PIX"
    assert pasted["cpu_affinity"]["GPU4"] == "32-63,96-127" and pasted["gpu_count"] == 8


def test_cut_off_topology_is_refused_by_both_paths():
    lines = read("nvidia-smi-topo-m/a800-8gpu-4nic_NV8_spaces.txt").split("\n")
    text = "\n".join(lines[:3] + [lines[3][:40]])  # the paste stops inside GPU2's row
    with pytest.raises(smi.SmiParseError) as caught:
        smi.parse_topo(text)
    assert caught.value.reason == "cut_off"
    with pytest.raises(InputError, match="cut off"):
        parse("nvidia-smi-topo", text)


def test_index_is_nvidia_smi_order_and_minor_number_is_kept():
    # Azure lists GPUs by PCI domain; /dev/nvidiaN numbers them differently
    gpus = smi.parse_xml(read("nvidia-smi-q-x/tesla-k80-4gpu_drv430.26_azure-out-of-order.xml"))["gpus"]
    assert [(g["index"], g["minor_number"], g["pci_bus_id"]) for g in gpus] == [
        (0, 1, "00001580:00:00.0"), (1, 2, "00002DF7:00:00.0"), (2, 3, "00004968:00:00.0"), (3, 0, "0000F8D6:00:00.0")]


def test_mig_mode_unsupported_only_when_nvidia_smi_says_so():
    rtx = smi.parse_xml(read("nvidia-smi-q-x/rtx-3060-1gpu_drv570.124.04.xml"))["gpus"][0]
    assert rtx["mig_mode"] == "unsupported"  # <mig_mode> present, current N/A
    k520 = smi.parse_xml(read("nvidia-smi-q-x/grid-k520-1gpu_drv352.99_b.xml"))["gpus"][0]
    assert k520["mig_mode"] is None  # a driver from before MIG existed says nothing


def test_ecc_sums_every_uncorrectable_counter_of_r550_and_later():
    text = read("nvidia-smi-q-x/rtx-3060-1gpu_drv570.124.04.xml")
    text = text.replace("<dram_uncorrectable>N/A</dram_uncorrectable>", "<dram_uncorrectable>2</dram_uncorrectable>", 1)
    text = text.replace("<sram_uncorrectable_parity>N/A</sram_uncorrectable_parity>",
                        "<sram_uncorrectable_parity>1</sram_uncorrectable_parity>", 1)
    ecc = smi.parse_xml(text)["gpus"][0]["ecc"]
    assert ecc["volatile_uncorrected"] == 3 and ecc["aggregate_uncorrected"] is None


def test_throttle_reasons_have_nvml_names_in_every_format():
    csv_gpu = smi.parse_csv(read("nvidia-smi-query-gpu-csv/h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv"))["gpus"][0]
    text_gpu = parse("nvidia-smi-q", read("nvidia-smi-q/h100-80gb-hbm3-1gpu_drv590.48.01_idle.txt"))["gpus"]["value"][0]
    assert csv_gpu["throttle_reasons"] == text_gpu["throttle_reasons"] == ["gpu_idle"]
    from gpuvet.probe.nvml import THROTTLE_BITS
    assert set(smi.THROTTLE_REASONS) == {name for _, name in THROTTLE_BITS}
    assert smi.throttle_reason("HW Power Brake Slowdown") == "hw_power_brake_slowdown"
    assert smi.throttle_reason("clocks_throttle_reason_sw_power_cap") == "sw_power_cap"
    assert smi.throttle_reason("clocks_event_reasons.active") is None


@pytest.mark.parametrize("relative", fixtures("nvidia-smi-query-gpu-csv"))
def test_csv_health_fields_match_each_active_column(relative):
    rows = [[c.strip() for c in line.split(",")] for line in read(relative).splitlines() if line.strip()]
    row = dict(zip([smi.csv_field(h) for h in rows[0]], rows[1]))
    gpu = smi.parse_csv(read(relative))["gpus"][0]
    active = [r for r in SMOKE_REASONS if row.get("clocks_event_reasons." + r) == "Active"]
    if any(k.startswith("clocks_event_reasons.") for k in row):
        assert sorted(gpu["throttle_reasons"]) == sorted(active)
    if "remapped_rows.pending" in row:
        assert (gpu["ecc"] or {}).get("remapped_rows_pending") == {"Yes": True, "No": False}.get(row["remapped_rows.pending"])


def test_csv_load_capture_carries_ecc_counters():
    gpu = smi.parse_csv(read("nvidia-smi-query-gpu-csv/h100-80gb-hbm3-1gpu_drv590.48.01_load.csv"))["gpus"][0]
    assert gpu["ecc"]["mode"] == "enabled" and gpu["ecc"]["volatile_uncorrected"] == 0
    assert gpu["ecc"]["remapped_rows_pending"] is False and gpu["clocks"]["sm_max_mhz"] == 1980


@pytest.mark.parametrize("text, kind", [
    ("Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch"),
    ("Failed to initialize NVML: Unknown Error", "nvml_init_failed"),
    ("Unable to determine the device handle for GPU0000:01:00.0: Unknown Error", "device_unreachable"),
])
def test_driver_errors_read_the_same_pasted_or_probed(text, kind):
    assert smi.driver_error("node7: " + text) == (text, kind)
    pasted = parse("nvidia-smi", text + "\n")["driver"]["error"]
    assert (pasted["value"], pasted["kind"], pasted["source"]) == (text, kind, "pasted:nvidia-smi")


@pytest.mark.parametrize("relative", fixtures("nvcc-version"))
def test_nvcc_version_one_reading(relative):
    text = read(relative)
    release, full = toolkit.nvcc_release(text)
    assert relative.split("_V")[1].startswith(full) and full.startswith(release + ".")
    assert toolkit.parse_nvcc_version(text) == full
    assert SnapshotView(parse("nvcc", text)).nvcc_on_path["version"] == full


def test_nvcc_release_without_full_version():
    assert toolkit.nvcc_release("Cuda compilation tools, release 9.0") == ("9.0", None)
    assert toolkit.parse_nvcc_version("Cuda compilation tools, release 9.0") == "9.0"
    assert toolkit.nvcc_release("nvcc: command not found") is None


@pytest.mark.parametrize("version, build", [
    ("2.1.2+cu121", {"variant": "cu121", "cuda": "12.1"}),
    ("2.6.0.dev20241010+cu124", {"variant": "cu124", "cuda": "12.4"}),
    ("1.13.1+cu117", {"variant": "cu117", "cuda": "11.7"}),
    ("2.2.0+cpu", {"variant": "cpu", "cuda": None}),
    ("2.4.0+rocm6.1", {"variant": "rocm6.1", "cuda": None, "hip": "6.1"}),
    ("2.3.1", {}),
])
def test_local_label_build(version, build):
    assert packages.build_from_local_label(version) == build
    pasted = SnapshotView(parse("pip-freeze", "torch==%s\n" % version)).frameworks["torch"]
    assert {k: pasted[k] for k in build} == build and ("cuda" in pasted) == ("cuda" in build)


def test_probe_without_version_py_reads_the_label_never_claims_cpu(tmp_path):
    by_name = {"torch": {"name": "torch", "version": "2.1.2+cu121", "location": str(tmp_path)}}
    assert packages.torch_info([str(tmp_path)], by_name)["cuda"] == "12.1"
    by_name["torch"]["version"] = "2.1.2"
    assert "cuda" not in packages.torch_info([str(tmp_path)], by_name)  # unknown, not "CPU build"


PY36_SCRIPT = """
import json, sys
sys.path.insert(0, %r)
from gpuvet.probe import smi
out = {}
for kind, path in json.loads(sys.argv[1]):
    text = open(path, encoding="utf-8").read()
    out[path] = {"xml": smi.parse_xml, "csv": smi.parse_csv, "topo": smi.parse_topo}[kind](text)
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.skipif(not PY36.exists(), reason="needs pyenv Python 3.6.15")
def test_python36_standard_library_parse_is_identical():
    cases = [("xml", str(FIXTURES / p)) for p in fixtures("nvidia-smi-q-x")[:8]]
    cases += [("csv", str(FIXTURES / p)) for p in fixtures("nvidia-smi-query-gpu-csv")[:6]]
    cases += [("topo", str(FIXTURES / p)) for p in fixtures("nvidia-smi-topo-m")[:4]]
    result = subprocess.run([str(PY36), "-S", "-c", PY36_SCRIPT % str(SRC), json.dumps(cases)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    old = json.loads(result.stdout.decode())
    parsers = {"xml": smi.parse_xml, "csv": smi.parse_csv, "topo": smi.parse_topo}
    new = {path: parsers[kind](Path(path).read_text(encoding="utf-8")) for kind, path in cases}
    assert old == json.loads(json.dumps(new, sort_keys=True))


def test_csv_the_csv_module_refuses_is_an_input_error():
    text = "index, name\n0, " + "x" * 200000 + "\n"  # a field over the csv module's limit
    with pytest.raises(smi.SmiParseError):
        smi.parse_csv(text)
    assert smi.looks_like_csv(text) is False
    with pytest.raises(InputError):
        parse("nvidia-smi-csv", text)

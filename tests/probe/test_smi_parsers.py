"""The nvidia-smi parsers against real captured outputs (tests/fixtures, see PROVENANCE.md)."""

import pytest

from gpuvet.probe import driver, smi

from .conftest import FIXTURES


def read(path):
    return (FIXTURES / path).read_text(encoding="utf-8")


def test_xml_a100_mig():
    parsed = smi.parse_xml(read("nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml"))
    assert parsed["driver_version"] == "535.54.03" and parsed["cuda_version"] == "12.2"
    gpu = parsed["gpus"][0]
    assert gpu["name"] == "NVIDIA A100-SXM4-80GB"
    assert gpu["memory_total_mib"] == 81920
    assert gpu["pcie"] == {"gen_current": 4, "gen_max": 4, "width_current": 16, "width_max": 16}
    assert gpu["mig_mode"] == "enabled"
    assert [(m["gi"], m["memory_mib"]) for m in gpu["mig_devices"]] == [(3, 19968), (4, 19968), (5, 19968), (6, 19968)]
    assert gpu["power_limit_w"] == 500.0 and gpu["ecc"]["mode"] == "enabled"
    assert gpu["virtualization_mode"] == "none" and gpu["persistence_mode"] is False


def test_xml_old_driver_internal_dtd_and_retired_pages():
    parsed = smi.parse_xml(read("nvidia-smi-q-x/grid-k520-1gpu_drv352.99_b.xml"))
    assert parsed["driver_version"] == "352.99" and parsed["gpus"][0]["name"] == "GRID K520"
    k80 = smi.parse_xml(read("nvidia-smi-q-x/tesla-k80-4gpu_drv430.26_azure-out-of-order.xml"))
    assert k80["cuda_version"] is None  # "Not Found" is not a version
    assert len(k80["gpus"]) == 4
    assert sorted(g["index"] for g in k80["gpus"]) == [0, 1, 2, 3]


def test_xml_rejects_garbage():
    with pytest.raises(ValueError):
        smi.parse_xml("Option -x is not recognized")


def test_csv_by_header_names():
    parsed = smi.parse_csv(read("nvidia-smi-query-gpu-csv/h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv"))
    gpu = parsed["gpus"][0]
    assert parsed["driver_version"] == "590.48.01"
    assert gpu["name"] == "NVIDIA H100 80GB HBM3" and gpu["compute_capability"] == "9.0"
    assert gpu["memory_total_mib"] == 81559 and gpu["pcie"]["gen_max"] == 5 and gpu["power_limit_w"] == 700.0


def test_topology_nvlink_matrix_and_single_gpu():
    dgx = smi.parse_topo(read("nvidia-smi-topo-m/dgx1-v100-8gpu-4nic_hybrid-cube-mesh.txt"))
    assert dgx["nvlink"] is True
    assert dgx["matrix"]["GPU0"]["GPU3"] == "NV2" and dgx["matrix"]["GPU0"]["GPU5"] == "SYS"
    assert set(dgx["matrix"]) == {"GPU%d" % i for i in range(8)}
    single = smi.parse_topo(read("nvidia-smi-topo-m/h200-1gpu_drv590.48.01.txt"))  # has ANSI underline codes
    assert single == {"matrix": {"GPU0": {}}, "nvlink": False, "legend": "nvidia-smi topo -m"}


def test_driver_error_lines():
    assert smi.driver_error("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183") == (
        "Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch")
    assert smi.driver_error("fine") is None


def test_proc_version_open_module():
    assert driver.parse_proc_version(read("proc-driver-nvidia-version/open_565.57.01_ubuntu24.04_gcc13.3.txt")) == "565.57.01"
    assert driver.parse_proc_version(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023") == "535.104.05"

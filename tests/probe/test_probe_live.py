"""The live probe on this GPU-less machine, and under the real NVML stand-in and the fake nvidia-smi."""

import time

import pytest
from installed_torch import installed_torch

from .conftest import FIXTURES, probe_env, run_probe


def test_live_machine_without_driver():
    snapshot, _ = run_probe(probe_env())
    assert snapshot["kind"] == "snapshot" and snapshot["origin"]["type"] == "probe"
    version = snapshot["driver"]["version"]
    if version["status"] == "found":
        pytest.skip("this machine has an NVIDIA driver")
    assert version["status"] == "missing" and "no NVIDIA driver" in version["reason"]
    assert snapshot["gpus"]["status"] == "missing"
    toolkits = snapshot["cuda_toolkits"]["value"]
    on_path = [t for t in toolkits if t["on_path"]]
    assert on_path and on_path[0]["version"].startswith("13.0") and on_path[0]["source"] == "nvcc"
    assert snapshot["python"]["status"] == "found" and snapshot["pip"]["status"] == "found"
    torch = installed_torch()
    if torch is None:
        assert "torch" not in snapshot["frameworks"]["value"]
        return
    probed = snapshot["frameworks"]["value"]["torch"]
    assert probed["version"] == torch.version and probed["version"].startswith("2.13.0")
    assert probed["cuda"] == torch.cuda  # None for the CPU wheel, "13.0" for PyPI's CUDA build


def test_nvml_standin(nvml_dir):
    env = probe_env(LD_LIBRARY_PATH=str(nvml_dir), FAKE_NVML_COUNT="2", FAKE_NVML_CUDA="12040",
                    FAKE_NVML_DRIVER="550.54.14", FAKE_NVML_MIG="0,1", FAKE_NVML_PCIE="4,5,8,16", FAKE_NVML_CC="80",
                    FAKE_NVML_NAME="NVIDIA A100-SXM4-80GB", FAKE_NVML_REASONS="72")
    snapshot, _ = run_probe(env)
    driver = snapshot["driver"]
    assert driver["version"] == {"status": "found", "value": "550.54.14", "source": "nvml"}
    assert driver["cuda_max"]["value"] == "12.4"
    assert driver["nvml_binding"]["value"]["distribution"] == "nvidia-ml-py"
    gpus = snapshot["gpus"]["value"]
    assert [g["index"] for g in gpus] == [0, 1]
    assert gpus[1]["compute_capability"] == "8.0" and gpus[1]["name"] == "NVIDIA A100-SXM4-80GB"
    assert gpus[0]["pcie"] == {"gen_current": 4, "gen_max": 5, "width_current": 8, "width_max": 16}
    assert gpus[0]["mig_mode"] == "pending"
    assert gpus[0]["throttle_reasons"] == ["hw_slowdown", "hw_thermal_slowdown"]
    assert gpus[0]["ecc"]["mode"] is None  # not supported by this device: null, not a crash
    assert gpus[0]["power_limit_w"] == 700.0


def test_nvml_version_mismatch(nvml_dir):
    snapshot, _ = run_probe(probe_env(LD_LIBRARY_PATH=str(nvml_dir), FAKE_NVML_INIT="18"))
    error = snapshot["driver"]["error"]
    assert error["status"] == "found" and error["kind"] == "driver_library_mismatch"
    assert "version mismatch" in error["value"]
    assert snapshot["driver"]["version"]["status"] == "failed"
    assert snapshot["python"]["status"] == "found"  # the rest is still there


def _smi_env(smi_dir, **extra):
    from standins import smi_settings

    return probe_env(**smi_settings(smi_dir, **extra))


def test_fake_smi_xml_when_nvml_absent(smi_dir):
    snapshot, _ = run_probe(_smi_env(smi_dir))
    assert snapshot["driver"]["version"] == {"status": "found", "value": "535.54.03", "source": "nvidia-smi-xml"}
    assert snapshot["driver"]["cuda_max"]["value"] == "12.2"
    assert snapshot["gpus"]["value"][0]["mig_mode"] == "enabled"
    assert snapshot["topology"]["value"]["nvlink"] is True


def test_fake_smi_csv_fallback(smi_dir):
    snapshot, _ = run_probe(_smi_env(smi_dir, FAKE_SMI_MODE="xml-broken"))
    assert snapshot["driver"]["version"] == {"status": "found", "value": "590.48.01", "source": "nvidia-smi-csv"}
    assert snapshot["driver"]["cuda_max"]["status"] == "missing"
    assert snapshot["gpus"]["value"][0]["compute_capability"] == "9.0"


def test_fake_smi_hang_degrades_only_gpu_facts(smi_dir):
    started = time.monotonic()
    snapshot, _ = run_probe(_smi_env(smi_dir, FAKE_SMI_MODE="hang", GPUVET_PROBE_TIMEOUT="1"))
    assert time.monotonic() - started < 15
    version = snapshot["driver"]["version"]
    assert version["status"] == "failed" and "timed out after 1 s" in version["reason"]
    assert snapshot["topology"]["status"] == "missing"  # not asked again after the hang
    assert snapshot["cuda_toolkits"]["status"] == "found" and snapshot["python"]["status"] == "found"


@pytest.mark.parametrize("mode, text, kind", [
    ("nocomm", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
               "latest NVIDIA driver is installed and running.", "driver_unreachable"),
    ("mismatch", "Failed to initialize NVML: Driver/library version mismatch", "driver_library_mismatch"),
])
def test_fake_smi_driver_errors_are_recorded_verbatim(smi_dir, mode, text, kind):
    snapshot, _ = run_probe(_smi_env(smi_dir, FAKE_SMI_MODE=mode))
    assert snapshot["driver"]["error"] == {"status": "found", "value": text, "source": "nvidia-smi", "kind": kind}
    assert snapshot["gpus"]["status"] == "failed"


def test_fake_smi_non_utf8_output(smi_dir, tmp_path):
    xml = (FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml").read_bytes()
    broken = tmp_path / "latin1.xml"
    broken.write_bytes(xml.replace(b"NVIDIA A100-SXM4-80GB", b"NVIDIA A100-SXM4-80GB \xe9\xff"))
    snapshot, _ = run_probe(_smi_env(smi_dir, FAKE_SMI_XML=str(broken)))
    assert snapshot["gpus"]["value"][0]["name"].startswith("NVIDIA A100-SXM4-80GB ")
    assert snapshot["driver"]["version"]["value"] == "535.54.03"


def test_nvml_p2p_status_of_every_pair_becomes_the_check_warning(nvml_dir):
    """A 3-GPU box where GPU 0 and 2 cannot reach each other (chipset not supported): the probe's gpu_p2p is the
    fact a pasted `topo -p2p r` gives, and check warns naming that pair."""
    from gpuvet.checks import run_checks

    env = probe_env(LD_LIBRARY_PATH=str(nvml_dir), FAKE_NVML_COUNT="3", FAKE_NVML_P2P="0-2:1",
                    FAKE_NVML_NAME="NVIDIA GeForce RTX 4090", FAKE_NVML_CC="89")
    snapshot, _ = run_probe(env)
    p2p = snapshot["gpu_p2p"]
    assert p2p["source"] == "nvml" and p2p["value"]["gpu_count"] == 3
    assert p2p["value"]["matrix"]["GPU2"]["GPU0"] == "CNS" and p2p["value"]["matrix"]["GPU0"]["GPU1"] == "OK"
    assert p2p["value"]["not_ok"] == [{"gpus": [0, 2], "status": "CNS", "meaning": "chipset not supported"}]
    warnings = [f for f in run_checks(snapshot, ["torch==2.5.1"]).machine if f.title.id == "smoke.health.p2p_unsupported.title"]
    assert [w.actual for w in warnings] == ["0-2 (CNS)"]


def test_one_gpu_has_no_p2p_fact(nvml_dir):
    snapshot, _ = run_probe(probe_env(LD_LIBRARY_PATH=str(nvml_dir), FAKE_NVML_COUNT="1"))
    assert "gpu_p2p" not in snapshot

"""Targeted behaviour: detection, error handling, package-derived facts, specs, embedded logs."""

import json
import subprocess
import sys

import pytest

from gpuvet.errors import InputError
from gpuvet.ingest import KINDS, detect_kind, parse, parse_embedded, read_input
from gpuvet.snapshot import SnapshotView

SMI = "nvidia-smi/h100-80gb-hbm3-8gpu_drv535.104.12_mig-2inst-each.txt"


def test_crlf_and_utf16_paste_read_like_the_original(tmp_path, fixture_text):
    text = fixture_text(SMI)
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    utf16 = tmp_path / "ps.txt"
    utf16.write_bytes(text.encode("utf-16"))  # PowerShell's `nvidia-smi > ps.txt`
    for path in (crlf, utf16):
        view = SnapshotView(read_input(str(path)))
        assert view.driver_version == "535.104.12" and len(view.gpus) == 8
        assert [len(gpu["mig_devices"]) for gpu in view.gpus] == [2] * 8


def test_table_header_without_gpu_rows_is_truncated(fixture_text):
    head = "\n".join(fixture_text(SMI).split("\n")[:7])
    with pytest.raises(InputError, match="cut off"):
        parse("nvidia-smi", head)


@pytest.mark.parametrize("data", [b"\x7fELF\x02\x01\x01\x00\x00\x00", b"", b"   \n"])
def test_binary_and_empty_files_are_input_errors(tmp_path, data):
    path = tmp_path / "x.bin"
    path.write_bytes(data)
    with pytest.raises(InputError):
        read_input(str(path))


def test_garbage_and_unknown_kind(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is a shopping list\nmilk\neggs\n")
    with pytest.raises(InputError, match="cannot tell"):
        read_input(str(path))
    with pytest.raises(InputError, match="unknown input kind"):
        read_input("nvidia-smy:" + str(path))
    with pytest.raises(InputError, match="cannot read"):
        read_input(str(tmp_path / "absent.txt"))


def test_cli_exit_code_2_one_line_no_traceback(tmp_path):
    path = tmp_path / "junk.bin"
    path.write_bytes(b"\x00\x01\x02" * 100)
    script = "from gpuvet.ingest import read_input\nfrom gpuvet.errors import GpuvetError\nimport sys\n" \
             "try:\n    read_input(sys.argv[1])\nexcept GpuvetError as e:\n    print('error: ' + e.message, file=sys.stderr); sys.exit(int(e.exit_code))\n"
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_forced_kind_overrides_detection(fixture_text, tmp_path):
    path = tmp_path / "v.txt"
    path.write_text(fixture_text("nvcc-version/cuda-12.6_V12.6.85.txt"))
    snapshot = read_input("nvcc:" + str(path))
    assert SnapshotView(snapshot).nvcc_on_path["version"] == "12.6.85"
    with pytest.raises(InputError):
        read_input("nvidia-smi:" + str(path))


def test_r610_banner_uses_kmd_and_umd(fixture_text):
    view = SnapshotView(parse("nvidia-smi", fixture_text("nvidia-smi/rtx-2080-super-1gpu_drv610.57.04_idle.txt")))
    assert (view.driver_version, view.driver_cuda_max) == ("610.57.04", "13.3")
    q = SnapshotView(parse("nvidia-smi-q", fixture_text("nvidia-smi-q/rtx-2080-super-1gpu_drv610.62_windows_idle.txt")))
    assert (q.driver_version, q.driver_cuda_max) == ("610.62", "13.3")  # not "610.62 [Deprecated; ...]"
    assert q.gpus[0]["driver_model"] == "WDDM"


def test_truncated_names_windows_and_wsl(fixture_text):
    windows = parse("nvidia-smi", fixture_text("nvidia-smi/rtx-2080-super-1gpu_drv610.62_windows_load.txt"))
    gpu = windows["gpus"]["value"][0]
    assert gpu["name"] == "NVIDIA GeForce RTX 2080 ..." and gpu["name_truncated"] is True
    assert gpu["driver_model"] == "WDDM" and windows["host"]["os"]["value"]["system"] == "Windows"
    assert len(gpu["processes"]) == 21
    wsl = parse("nvidia-smi", fixture_text("nvidia-smi/rtx-4060-laptop-1gpu_smi555.42.06_drv555.85_wsl2.txt"))
    assert wsl["driver"]["version"]["value"] == "555.85" and wsl["host"]["wsl"]["value"] is True


def test_mig_pending_and_old_layout(fixture_text):
    a800 = SnapshotView(parse("nvidia-smi", fixture_text("nvidia-smi/a800-80gb-pcie-8gpu_drv525.125.06_mig-pending.txt")))
    assert [g["mig_mode"] for g in a800.gpus] == ["disabled"] * 7 + ["pending"]
    old = SnapshotView(parse("nvidia-smi", fixture_text("nvidia-smi/gtx-1080ti-8gpu_drv390.25.txt")))
    assert old.driver_cuda_max is None and old.gpus[3]["memory_total_mib"] == 11178
    assert [p["pid"] for p in old.gpus[3]["processes"]] == [4755, 14518]


def test_xml_and_list_mig_devices(fixture_text):
    xml = SnapshotView(parse("nvidia-smi-xml", fixture_text("nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml")))
    gpu = xml.gpus[0]
    assert gpu["mig_mode"] == "enabled" and [d["gi"] for d in gpu["mig_devices"]] == [3, 4, 5, 6]
    assert gpu["memory_total_mib"] == 81920 and gpu["pcie"]["gen_max"] == 4
    listing = SnapshotView(parse("nvidia-smi-list", fixture_text("nvidia-smi-L/a100-sxm4-40gb_drv450.80.02_mig-mixed_oldformat.txt")))
    assert [(d["profile"], d["gi"]) for d in listing.gpus[0]["mig_devices"]] == [("3g.20gb", 2), ("2g.10gb", 3), ("1g.5gb", 9)]


def test_csv_compute_capability_and_dedup(fixture_text):
    csv = SnapshotView(parse("nvidia-smi-csv", fixture_text("nvidia-smi-query-gpu-csv/h100-80gb-hbm3-1gpu_drv590.48.01_idle.csv")))
    assert csv.gpus[0]["compute_capability"] == "9.0" and csv.gpus[0]["memory_total_mib"] == 81559
    loop = SnapshotView(parse("nvidia-smi-csv", fixture_text("nvidia-smi-query-gpu-csv/gpu-1of-unknown_index-power-timestamp_loop.csv")))
    assert len(loop.gpus) == 1
    headerless = parse("nvidia-smi-csv", "0, NVIDIA H100 80GB HBM3, 9.0, 535.104.05\n1, NVIDIA H100 80GB HBM3, 9.0, 535.104.05\n")
    assert [g["compute_capability"] for g in headerless["gpus"]["value"]] == ["9.0", "9.0"]
    assert headerless["driver"]["version"]["value"] == "535.104.05"


def test_topology_nvlink(fixture_text):
    dgx = parse("nvidia-smi-topo", fixture_text("nvidia-smi-topo-m/dgx1-v100-8gpu-4nic_hybrid-cube-mesh.txt"))["topology"]["value"]
    assert dgx["nvlink"] is True and dgx["matrix"]["GPU0"]["GPU1"] == "NV1" and dgx["matrix"]["GPU0"]["GPU4"] == "NV2"
    pcie = parse("nvidia-smi-topo", fixture_text("nvidia-smi-topo-m/rtx-5090-2gpu_PHB.txt"))["topology"]["value"]
    assert pcie["nvlink"] is False and pcie["matrix"]["GPU0"]["GPU1"] == "PHB"


def test_pip_freeze_labels_cudnn_nccl():
    text = "torch==2.3.1+cu121\nnvidia-cudnn-cu12==9.1.0.70\nnvidia-nccl-cu12==2.20.5\nnumpy==1.26.4\n"
    view = SnapshotView(parse("pip-freeze", text))
    assert view.frameworks["torch"]["cuda"] == "12.1"
    assert view.cudnn[0]["version"] == "9.1.0" and view.nccl[0]["version"] == "2.20.5"
    assert view.package_version("numpy") == "1.26.4"
    cpu = SnapshotView(parse("pip-freeze", "torch==2.2.0+cpu\n"))
    assert "cuda" in cpu.frameworks["torch"] and cpu.frameworks["torch"]["cuda"] is None
    bare = SnapshotView(parse("pip-freeze", "torch==2.3.1\nnumpy==1.26.4\n"))
    assert "cuda" not in bare.frameworks["torch"]  # unknown, not "CPU build"
    implied = SnapshotView(parse("pip-freeze", "torch==2.3.1\nnvidia-cuda-runtime-cu12==12.1.105\n"))
    assert implied.frameworks["torch"]["cuda"] == "12.1"


def test_real_local_captures(fixture_text):
    freeze = SnapshotView(parse("pip-freeze", fixture_text("pip-freeze/torch2.13.0-cpu_local-venv.txt")))
    assert freeze.frameworks["torch"] == {"version": "2.13.0+cpu", "source": "pasted:pip-freeze", "variant": "cpu", "cuda": None}
    env = SnapshotView(parse("collect-env", fixture_text("torch-collect-env/torch2.13.0-cpu_debian12_local-venv.txt")))
    assert env.python_version == "3.11.7" and env.frameworks["torch"]["cuda"] is None
    assert env.value("host.glibc") == "2.36" and env.toolkits[0]["version"] == "13.0.88"
    assert env.gpus == [] and env.driver_version is None


def test_secrets_in_urls_are_redacted():
    snapshot = parse("pip-freeze", "--index-url https://alice:s3cret@pypi.corp/simple\nmypkg @ https://bob:tok@git.corp/x.whl\ntorch==2.1.2\n")
    dumped = json.dumps(snapshot)
    assert "s3cret" not in dumped and "tok@" not in dumped and "***@" in dumped


def test_conda_list():
    text = ("# packages in environment at /opt/conda/envs/train:\n#\n# Name  Version  Build  Channel\n"
            "pytorch  2.1.2  py3.10_cuda12.1_cudnn8.9.2_0  pytorch\npytorch-cuda  12.1  ha16c6d3_5  pytorch\n"
            "cudnn  8.9.2.26  cuda12_0  conda-forge\nnccl  2.18.5.1  h6103f9b_0  conda-forge\nnumpy  1.26.4  pypi_0  pypi\n")
    view = SnapshotView(parse("conda-list", text))
    assert detect_kind(text) == "conda-list"
    assert view.frameworks["torch"]["cuda"] == "12.1" and view.cudnn[0]["version"] == "8.9.2"
    assert view.nccl[0]["version"] == "2.18.5" and view.packages["numpy"]["installer"] == "pip"


def test_spec_example_and_errors(tmp_path):
    snapshot = read_input("spec:examples/offer.toml")
    view = SnapshotView(snapshot)
    assert snapshot["origin"]["type"] == "spec" and view.source("driver.version") == "spec"
    assert len(view.gpus) == 8 and view.gpus[0]["virtualization_mode"] == "passthrough"
    assert view.driver_cuda_max == "12.2" and view.frameworks["torch"]["cuda"] == "12.1"
    assert view.value("topology")["nvlink"] is True and detect_kind(open("examples/offer.toml").read()) == "spec"
    with pytest.raises(InputError, match="drvier"):
        parse("spec", '[gpu]\nmodel = "H100"\ndrvier = "535"\n')
    with pytest.raises(InputError, match="driver.version"):
        parse("spec", 'driver = "535"\n[gpu]\nmodel = "H100"\n')
    with pytest.raises(InputError, match="TOML"):
        parse("spec", "[gpu\nmodel=")


def test_examples_for_readme():
    smi = SnapshotView(read_input("examples/provider-nvidia-smi.txt"))
    assert smi.driver_version == "565.57.01" and len(smi.gpus) == 8
    freeze = SnapshotView(read_input("examples/provider-pip-freeze.txt"))
    assert freeze.frameworks["torch"]["cuda"] == "12.1" and freeze.cudnn[0]["version"] == "8.9.2"


def test_embedded_issue_report(fixture_text):
    report = ("I get CUDA error: no kernel image\n\n```\n" + fixture_text("nvidia-smi/h100-nvl-2gpu_drv550.54.14.txt")
              + "\n```\nand pip:\ntorch==2.1.0+cu118\nnumpy==1.26.0\ntriton==2.1.0\n\n"
              "node1:123:123 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n")
    view = SnapshotView(parse_embedded(report))
    assert view.driver_version == "550.54.14" and len(view.gpus) == 2
    assert view.frameworks["torch"]["cuda"] == "11.8"
    assert view.nccl == [{"version": "2.18.1", "path": None, "source": "pasted:nccl-log", "package": None, "cuda": "12.1"}]
    env = SnapshotView(parse_embedded("Environment:\n" + fixture_text("torch-collect-env/torch1.1.0_rtx-2060_drv418.67_old-format.txt")))
    assert env.driver_version == "418.67" and env.gpus[0]["name"] == "GeForce RTX 2060"


@pytest.mark.parametrize("text", ["", "nothing here", "\x00\x01", "| NVIDIA-SMI 535.1 Driver Version: 535.1 |\n"])
def test_embedded_never_raises(text):
    snapshot = parse_embedded(text)
    assert snapshot["kind"] == "snapshot"


def test_kinds_contract():
    assert set(KINDS) == {"nvidia-smi", "nvidia-smi-q", "nvidia-smi-xml", "nvidia-smi-csv", "nvidia-smi-topo",
                          "nvidia-smi-list", "nvcc", "collect-env", "pip-freeze", "pip-list", "conda-list", "ds-report",
                          "spec", "snapshot",
                          # issue 16: the environment reports people paste
                          "vllm-collect-env", "sglang-check-env", "transformers-env", "accelerate-env",
                          "llamafactory-env", "xformers-info", "bitsandbytes", "jax-env", "tensorflow-build-info",
                          "paddle-run-check", "mindspore-run-check", "proc-nvidia-version",
                          "nvidia-container-cli-info", "ldconfig", "docker-inspect", "nvidia-smi-topo-p2p", "conda-info", "lspci", "docker-info", "lspci-acs",
                          "pixi-info", "ibstat"}


def test_nvidia_smi_failure_messages():
    failed = parse("nvidia-smi", "Failed to initialize NVML: Driver/library version mismatch\n")
    assert failed["driver"]["error"]["value"] == "Failed to initialize NVML: Driver/library version mismatch"
    none = parse("nvidia-smi", "No devices were found\n")
    assert none["gpus"]["value"] == []


def test_pixi_info_without_cuda_says_nothing_about_the_driver():
    # pixi 0.23.0 on an aarch64 container (no GPU): no __cuda, so no CUDA fact, never a guessed one.
    text = ("      Pixi version: 0.23.0\n          Platform: linux-aarch64\n  Virtual packages: __unix=0=0\n"
            "                  : __linux=6.4.16=0\n                  : __glibc=2.35=0\n"
            "                  : __archspec=1=m1\n         Cache dir: /root/.cache/rattler/cache\n")
    assert detect_kind(text) == "pixi-info"
    view = SnapshotView(parse("pixi-info", text))
    assert view.driver_cuda_max is None and view.value("host.machine") == "aarch64"
    assert view.value("host.glibc") == "2.35"


def test_pixi_info_inside_a_longer_paste_is_found(fixture_text):
    block = fixture_text("pixi-info/pixi0.50.2_cuda12.9_glibc2.35.txt")
    paste = "I ran this on the box:\n$ pixi info\n" + block + "\nand then pixi install fails with __cuda >=13\n"
    snapshot = parse_embedded(paste)
    assert SnapshotView(snapshot).driver_cuda_max == "12.9"

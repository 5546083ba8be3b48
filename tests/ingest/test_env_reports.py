"""Issue 16: the environment reports people paste (vLLM, SGLang, HF, xformers, bitsandbytes, jax, TensorFlow, Paddle,
MindSpore, /proc/driver/nvidia/version and every era of torch's collect_env), each from real samples in
tests/fixtures/<kind>/ (provenance in tests/fixtures/PROVENANCE.md).

Per fixture: the facts read (driver, GPU names and count, torch version and CUDA build, Python), detection from
content alone, and detection inside an issue text with prose around it; per kind: 200 KB made by repeating a section
of a real sample parses in well under a second, and input past the kind's limit is one InputError line.
"""

import time
from pathlib import Path

import pytest

from gpuvet.errors import InputError
from gpuvet.ingest import KINDS, REGISTRY, detect_kind, display_name, parse, parse_embedded
from gpuvet.ingest.registry import BY_NAME
from gpuvet.snapshot import SnapshotView, validate_snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ABSENT = "<absent>"

# directory -> kind
DIRECTORIES = {
    "vllm-collect-env": "vllm-collect-env", "sglang-check-env": "sglang-check-env",
    "transformers-env": "transformers-env", "accelerate-env": "accelerate-env", "llamafactory-env": "llamafactory-env",
    "xformers-info": "xformers-info", "bitsandbytes": "bitsandbytes", "jax-env": "jax-env",
    "tensorflow-build-info": "tensorflow-build-info", "paddle-run-check": "paddle-run-check",
    "mindspore-run-check": "mindspore-run-check", "proc-driver-nvidia-version": "proc-nvidia-version",
    "torch-collect-env": "collect-env",
    "nvidia-container-cli-info": "nvidia-container-cli-info", "ldconfig": "ldconfig", "docker-inspect": "docker-inspect",
    "nvidia-smi-topo-p2p": "nvidia-smi-topo-p2p", "conda-info": "conda-info", "lspci": "lspci",
    "docker-info": "docker-info", "lspci-acs": "lspci-acs", "pixi-info": "pixi-info",
}

# file -> (driver, first GPU name, GPU count, torch version, torch cuda (None: a build without CUDA), python)
EXPECTED = {
    "vllm-collect-env/a100-sxm4-80gb-x2_vllm0.8.5post1_cu124_drv535.104.txt": ("535.104.05", "NVIDIA A100-SXM4-80GB", 2, "2.6.0+cu124", "12.4", "3.10.12"),
    "vllm-collect-env/b200x8_vllm0.9.1_cu128_drv575.57.txt": ("575.57.08", "NVIDIA B200", 8, "2.7.0+cu128", "12.8", "3.12.11"),
    "vllm-collect-env/gb200_aarch64_vllm0.9.2dev_cu128_drv570.158.txt": ("570.158.01", "NVIDIA GB200", 4, "2.7.0+cu128", "12.8", "3.12.11"),
    "vllm-collect-env/grid-a100-40c-vgpu_vllm-dev_cu128_drv570.133.txt": ("570.133.20", "GRID A100-40C", 3, "2.9.0.dev20250702+cu128", "12.8", "3.10.12"),
    "vllm-collect-env/h100_vllm0.8.4_cu124_drv550.127.txt": ("550.127.08", "NVIDIA H100 80GB HBM3", 1, "2.6.0+cu124", "12.4", "3.10.12"),
    "vllm-collect-env/h200x8_vllm0.9.2dev_cu126_drv570.133.txt": ("570.133.20", "NVIDIA H200", 8, "2.7.0+cu126", "12.6", "3.12.3"),
    "vllm-collect-env/l40s-x2_podman_vllm0.16.0_cu129_drv580.119.txt": ("580.119.02", "NVIDIA L40S", 2, "2.9.1+cu129", "12.9", "3.12.12"),
    "vllm-collect-env/l4x4_vllm0.9.2_cu128_drv550.163.txt": ("550.163.01", "NVIDIA L4", 4, "2.7.0+cu128", "12.8", "3.11.11"),
    "vllm-collect-env/oldformat_aarch64_torch2.1.0_vllm0.6.3dev_all-could-not-collect.txt": (None, None, 0, "2.1.0", None, "3.10.12"),
    "vllm-collect-env/oldformat_mx330_torch2.3.1+cpu_vllm0.5.4_cuda-build-could-not-collect.txt": ("545.23.08", "NVIDIA GeForce MX330", 1, "2.3.1+cpu", None, "3.11.8"),
    "vllm-collect-env/oldformat_torch2.4.0+cpu_drv535_vllm0.6.0_cuda-build-could-not-collect.txt": ("535.104.05", "NVIDIA A100-SXM4-80GB", 1, "2.4.0+cpu", None, "3.10.12"),
    "vllm-collect-env/rocm_rx7900xtx_vllm0.9.0.txt": (None, "Radeon RX 7900 XTX (gfx1100)", 1, "2.7.0+gitf717b2a", None, "3.12.10"),
    "vllm-collect-env/rtx-pro-6000-blackwell_vllm0.9.2_cu128_drv575.51.txt": ("575.51.03", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 1, "2.7.0+cu128", "12.8", "3.12.3"),
    "vllm-collect-env/rtx3090_vllm0.8.5post1_cu118_drv520.61.txt": ("520.61.05", "NVIDIA GeForce RTX 3090", 3, "2.6.0+cu118", "11.8", "3.12.9"),
    "vllm-collect-env/rtx5090+rtx4090_vllm0.9.1dev_cu126_drv576.52_wsl-or-win.txt": ("576.52", "NVIDIA GeForce RTX 5090", 3, "2.7.0+cu126", "12.6", "3.12.3"),
    "vllm-collect-env/rtx5090_vllm0.9.0_torch2.8dev-cu128_drv570.144_unfenced.txt": ("570.144", "NVIDIA GeForce RTX 5090", 1, "2.8.0.dev20250527+cu128", "12.8", "3.12.10"),
    "vllm-collect-env/tpu-v6e_no-cuda_torch-cpu_vllm0.9.1rc2.txt": (None, None, 0, "2.8.0.dev20250605+cpu", None, "3.10.16"),
    "sglang-check-env/a800_sglang0.2.12_drv470.182.txt": ("470.182.03", "NVIDIA A800-SXM4-80GB", 1, "2.3.1+cu121", "12.1", "3.10.0"),
    "sglang-check-env/b200_sglang0.4.7_drv570.124.txt": ("570.124.06", "NVIDIA B200", 8, "2.7.1+cu128", "12.8", "3.12.3"),
    "sglang-check-env/b200_sglang0.4.7post1_drv575.64.txt": ("575.64", "NVIDIA B200", 8, "2.7.1+cu128", "12.8", "3.10.12"),
    "sglang-check-env/custom-name-CF-NG-HZZ1-O_sglang0.4.1post3.txt": ("535.183.06", "CF-NG-HZZ1-O", 8, "2.4.0+cu121", "12.1", "3.10.9"),
    "sglang-check-env/gtx1650_sglang0.4.3_drv535.183.txt": ("535.183.01", "NVIDIA GeForce GTX 1650", 1, "2.5.1+cu124", "12.4", "3.12.3"),
    "sglang-check-env/nvidia-m403_sglang0.4.6post5.txt": ("550.54.14", "NVIDIA M403", 8, "2.6.0+cu124", "12.4", "3.10.12"),
    "sglang-check-env/rtx3070ti_no-sglang-version_drv555.42.txt": ("555.42.06", "NVIDIA GeForce RTX 3070 Ti", 1, "2.4.0+cu121", "12.1", "3.10.15"),
    "sglang-check-env/rtx4090_sglang0.2.5_early-format.txt": ("550.78", "NVIDIA GeForce RTX 4090", 3, "2.3.1+cu121", "12.1", "3.10.0"),
    "sglang-check-env/rtx4090_sglang0.4.4post1_drv560.94-windows-driver.txt": ("560.94", "NVIDIA GeForce RTX 4090", 3, "2.6.0+cu124", "12.4", "3.11.11"),
    "transformers-env/transformers2.4.0_windows10_torch1.4.0_tf2.1.0_first-version.txt": (None, None, 0, "1.4.0", ABSENT, "3.6.8"),
    "transformers-env/transformers4.38.2_linux_torch2.2.1-cu121_flax-cpu_jax-warning.txt": (None, None, 0, "2.2.1+cu121", "12.1", "3.10.12"),
    "accelerate-env/accelerate0.20.3_tesla-p40x6_torch1.13.1-cu117_tab-indented.txt": (None, "Tesla P40", 1, "1.13.1+cu117", "11.7", "3.7.13"),
    "accelerate-env/accelerate0.27.2_rtx3090_torch2.2.0a0-ngc_multinode.txt": (None, "NVIDIA GeForce RTX 3090", 1, "2.2.0a0+6a974be", ABSENT, "3.10.12"),
    "accelerate-env/accelerate0.28.0_windows10_rtx4070_config-not-found.txt": (None, "NVIDIA GeForce RTX 4070", 1, "2.2.1", ABSENT, "3.8.18"),
    "accelerate-env/accelerate0.33.0_rtx-a6000_torch2.4.1-cu118_multigpu.txt": (None, "NVIDIA RTX A6000", 1, "2.4.1+cu118", "11.8", "3.8.18"),
    "llamafactory-env/llamafactory0.9.2dev0_a100-80gb_torch2.5.1-cu124_vllm0.6.6.txt": (None, "NVIDIA A100-SXM4-80GB", 1, "2.5.1+cu124", "12.4", "3.10.14"),
    "llamafactory-env/llamafactory0.9.2dev0_ascend910b_aarch64_torch2.1.0_no-gpu-line.txt": (None, None, 0, "2.1.0", ABSENT, "3.8.20"),
    "llamafactory-env/llamafactory0.9.3dev0_a100x8_torch2.3.0-cu121_gpu-number-memory.txt": (None, "NVIDIA A100-SXM4-80GB", 8, "2.3.0+cu121", "12.1", "3.10.0"),
    "xformers-info/xformers0.0.14dev_a100_torch1.12.1_no-triton_first-format.txt": (None, "NVIDIA A100-SXM4-40GB", 1, "1.12.1", ABSENT, None),
    "xformers-info/xformers0.0.15_gtx1060-6gb_torch1.12.1-cu113.txt": (None, "NVIDIA GeForce GTX 1060 6GB", 1, "1.12.1+cu113", "11.3", None),
    "xformers-info/xformers0.0.16_rtx3090_torch1.13.1-cu117_build-info_truncated.txt": (None, "NVIDIA GeForce RTX 3090", 1, "1.13.1+cu117", "11.7", None),
    "xformers-info/xformers0.0.22post7-cu118_kaggle-p100_all-unavailable_truncated.txt": (None, "Tesla P100-PCIE", 1, "2.0.1+cu118", "11.8", None),
    "bitsandbytes/bnb-0.3x_v100-cc7.0_cuda117_missing-nocublaslt-binary_cpu-fallback.txt": (None, None, 1, None, ABSENT, "3.9"),
    "bitsandbytes/bnb-0.4x_cc7.0_cuda115_wsl-path-warning_bug-report-header_truncated.txt": (None, None, 1, None, ABSENT, "3.8"),
    "bitsandbytes/bnb-0.4x_k80-cc3.7_cuda101_azureml_cpu-fallback_truncated.txt": (None, None, 1, None, ABSENT, "3.8"),
    "jax-env/jax0.3.17_colab-cpu.txt": (None, None, 0, None, ABSENT, "3.7.13"),
    "jax-env/jax0.3.17_colab-t4_drv460.32_with-nvidia-smi_truncated.txt": ("460.32.03", None, 0, None, ABSENT, "3.7.13"),
    "jax-env/jax0.4.33_a10g-x8_aws_drv550.127_platform-uname_truncated.txt": ("550.127.05", None, 0, None, ABSENT, "3.10.12"),
    "tensorflow-build-info/tf2.6_conda-forge_build-info_pprint_cuda11.2.txt": (None, None, 0, None, ABSENT, None),
    "tensorflow-build-info/tf2.x_sysconfig-build-info_cuda11.2_rtx3060_devices.txt": (None, "NVIDIA GeForce RTX 3060", 1, None, ABSENT, None),
    "paddle-run-check/paddle1.4.1_fluid-install-check_cc70_cudnn-mismatch-warning.txt": (None, None, 1, None, ABSENT, None),
    "paddle-run-check/paddle2.1.3_8gpu_cuda10.1_works-on-1-gpu_p2p-warnings_truncated.txt": (None, None, 1, None, ABSENT, None),
    "paddle-run-check/paddle2.1_gtx1070ti_cuda10.2_hangs-no-result.txt": (None, None, 1, None, ABSENT, None),
    "paddle-run-check/paddle2.5_pascal-cc6.1_arch-70-75-80-86-warning_works-on-1-gpu.txt": (None, None, 1, None, ABSENT, None),
    "mindspore-run-check/mindspore2.1.1_ascend310p3_success-then-opinfo-error.txt": (None, None, 0, None, ABSENT, None),
    "proc-driver-nvidia-version/open-kernel-module_575.57.08_b200_with-fabricmanager-nvlink-pkgs.txt": ("575.57.08", None, 0, None, ABSENT, None),
    "proc-driver-nvidia-version/open_565.57.01_ubuntu24.04_gcc13.3.txt": ("565.57.01", None, 0, None, ABSENT, None),
    "proc-driver-nvidia-version/proprietary_550.107.02_arch-linux_with-lscpu-uname-gcc.txt": ("550.107.02", None, 0, None, ABSENT, None),
    "nvidia-container-cli-info/geforce-920m_drv384.130_cuda9.0_debug-lines.txt": ("384.130", "GeForce 920M", 1, None, ABSENT, None),
    "nvidia-container-cli-info/gtx1080-maxq_drv390.87_cuda9.1_debug-lines.txt": ("390.87", "GeForce GTX 1080 with Max-Q Design", 1, None, ABSENT, None),
    "nvidia-container-cli-info/jetson-xavier_nvrm-null_cuda10.2.txt": (None, "Xavier", 1, None, ABSENT, None),
    "nvidia-container-cli-info/rtx2080ti_drv418.56_cuda10.1_debug-lines.txt": ("418.56", "GeForce RTX 2080 Ti", 1, None, ABSENT, None),
    "ldconfig/cudnn4_nvidia-cuda-7.5-cudnn4-runtime.txt": (None, None, 0, None, ABSENT, None),
    "ldconfig/cudnn8-split_nvinfer8_wider-grep_truncated.txt": (None, None, 0, None, ABSENT, None),
    "ldconfig/cudnn9-split-libraries_truncated.txt": (None, None, 0, None, ABSENT, None),
    "docker-inspect/cuda10.0-based-image_grep-nvidia.txt": (None, None, 0, None, ABSENT, None),
    "docker-inspect/nvidia-cuda-10.0_container-inspect_partial.txt": (None, None, 0, None, ABSENT, None),
    "nvidia-smi-topo-p2p/h100-8gpu_p2p-r_all-ok.txt": (None, None, 0, None, ABSENT, None),
    "nvidia-smi-topo-p2p/l4-2gpu_p2p-r_cns_no-legend.txt": (None, None, 0, None, ABSENT, None),
    "nvidia-smi-topo-p2p/rtx5090-2gpu_p2p-rw_gns_tabs.txt": (None, None, 0, None, ABSENT, None),
    "nvidia-smi-topo-p2p/2gpu_p2p-rw_ok_tabs.txt": (None, None, 0, None, ABSENT, None),
    "nvidia-smi-topo-p2p/rtx50-mixed-5gpu_p2p-p_ok_patched-driver_truncated.txt": (None, None, 0, None, ABSENT, None),
    "conda-info/conda23.1.0_cuda11.2_glibc2.27_gpfs_truncated.txt": (None, None, 0, None, ABSENT, None),
    "conda-info/conda25.3.0_miniforge_cuda12.3_wsl2_no-active-env_truncated.txt": (None, None, 0, None, ABSENT, None),
    "conda-info/conda23.3.1_cuda12.1_tsinghua-mirror-channels_truncated.txt": (None, None, 0, None, ABSENT, None),
    "pixi-info/pixi0.13.0_cuda12.3_docs.txt": (None, None, 0, None, ABSENT, None),
    "pixi-info/pixi0.50.2_cuda12.9_glibc2.35.txt": (None, None, 0, None, ABSENT, None),
    "lspci/h100-sxm5-8gpu_nvswitch-x4_lspci-nn_tdx-guest.txt": (None, "H100 SXM5 80GB", 8, None, ABSENT, None),
    # `Device 2204` / `Device [10de:13c2]`: named from gpuvet's copy of pci.ids
    "lspci/rtx3090-as-device-2204_old-pci-ids_grep-vga.txt": (None, "GeForce RTX 3090", 1, None, ABSENT, None),
    "lspci/gtx970-as-device-13c2_lspci-vnn.txt": (None, "GeForce GTX 970", 1, None, ABSENT, None),
    "lspci/quadro-t1000-mobile_vfio-pci_lspci-nnk.txt": (None, "Quadro T1000 Mobile", 1, None, ABSENT, None),
    "lspci/mx130-gtx970-egpu_lspci-nn.txt": (None, "GeForce MX130", 2, None, ABSENT, None),
    "docker-info/docker-18.06.1-ce_nvidia-default_centos7_full.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-18.09.0-ce_nvidia-default_manjaro_full.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-19.03.12_kata-and-nvidia-runtimes_nvidia-default_partial.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-19.03.12_runc-only_partial.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-2024-apt-upgrade_runc-only_grep-runtime.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-24.0.7_nvidia-default_grep-runtime.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-24.0.7_nvidia-registered-runc-default_cgroup2-systemd_full.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-recent_runc-only_warning-seccomp_grep-runtime.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-rootful-sudo_runc-and-nvidia_grep-runtimes.txt": (None, None, 0, None, ABSENT, None),
    "docker-info/docker-rootless_runc-only_grep-runtimes.txt": (None, None, 0, None, ABSENT, None),
    "lspci-acs/grep-acsctl_12-ports_5-redirect_nccl523_truncated.txt": (None, None, 0, None, ABSENT, None),
    "lspci-acs/grep-acsctl_9-ports_no-redirect_amd-switch_nccl606.txt": (None, None, 0, None, ABSENT, None),
    "lspci-acs/grep-acsctl-tabs_15-ports_4-redirect_nccl629_truncated.txt": (None, None, 0, None, ABSENT, None),
    # every era of torch's collect_env: 2019 (1.1) to 2.8, Windows, WSL, macOS, ROCm, CPU wheels
    "torch-collect-env/torch1.1.0a0_macos10.13_gtx1060-maxq_oldformat.txt": ("1.1.0", "GeForce GTX 1060 with Max-Q Design", 1, "1.1.0a0+4335aac", "10.0", "3.7"),
    "torch-collect-env/torch1.10.0+cu111_wsl2-ubuntu20.04_truncated.txt": (None, None, 0, "1.10.0+cu111", "11.1", "3.9.15"),
    "torch-collect-env/torch1.13.1+cu117_centos7_no-cuda-gpu-listed_with-cpu-section.txt": (None, None, 0, "1.13.1+cu117", "11.7", "3.10.0"),
    "torch-collect-env/torch1.3.1_ubuntu16.04_titan-xp-x8_drv410.48_cuda-not-available_truncated.txt": ("410.48", "TITAN Xp", 8, "1.3.1", "10.1", "3.6"),
    "torch-collect-env/torch1.5.0+cu101_windows-server-2019_titan-rtx-x2_quoted-with-gt_truncated.txt": ("442.92", "TITAN RTX", 2, "1.5.0+cu101", "10.1", "3.7"),
    "torch-collect-env/torch1.5.0+cu101_windows10_quadro-p1000_os-could-not-collect.txt": ("426.25", "Quadro P1000", 1, "1.5.0+cu101", "10.1", "3.7"),
    "torch-collect-env/torch1.6.0_rhel7.6_v100x2_drv418.67_cuda-not-available.txt": ("418.67", "Tesla V100-PCIE-16GB", 2, "1.6.0", "10.2", "3.7"),
    "torch-collect-env/torch1.7.0a0_rocm3.7_ubuntu18.04_device-66a1_truncated.txt": (None, "Device 66a1", 1, "1.7.0a0+9ddd3df", None, "3.6"),
    "torch-collect-env/torch1.7.1+cpu_windows10_cuda-build-could-not-collect_truncated.txt": (None, None, 0, "1.7.1+cpu", None, None),
    "torch-collect-env/torch2.0.1+cu117_windows11_gtx1050ti_drv535.98_truncated.txt": ("535.98", "NVIDIA GeForce GTX 1050 Ti", 1, "2.0.1+cu117", "11.7", "3.9.16"),
    "torch-collect-env/torch2.4.0+cu121_wsl2_rtx4070-laptop_drv551.88_vllm-script_truncated.txt": ("551.88", "NVIDIA GeForce RTX 4070 Laptop GPU", 1, "2.4.0+cu121", "12.1", "3.12.3"),
    "torch-collect-env/torch2.6.0+cpu_ubuntu24.10_cuda-build-None_truncated.txt": (None, None, 0, "2.6.0+cpu", None, "3.12.9"),
    "torch-collect-env/torch2.7.0dev+rocm6.3_gentoo_rx5700xt-gfx1010_truncated.txt": (None, "AMD Radeon RX 5700 XT (gfx1010:xnack-)", 1, "2.7.0.dev20250123+rocm6.3", None, "3.12.8"),
    "torch-collect-env/torch2.8.0dev+cpu_windows11_xpu-field_truncated.txt": (None, None, 0, "2.8.0.dev20250528+cpu", None, "3.10.17"),
}
# Facts besides the table's, per file: (dotted path into the snapshot's values, expected)
MORE = {
    "lspci-acs/grep-acsctl_12-ports_5-redirect_nccl523_truncated.txt": [('pci.acs.ports', 12), ('pci.acs.redirecting.4.flags', 'SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-')],
    "lspci-acs/grep-acsctl_9-ports_no-redirect_amd-switch_nccl606.txt": [('pci.acs.ports', 9), ('pci.acs.redirecting', [])],
    "lspci-acs/grep-acsctl-tabs_15-ports_4-redirect_nccl629_truncated.txt": [('pci.acs.ports', 15), ('pci.acs.redirecting.3.flags', 'SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-')],
    "docker-info/docker-18.06.1-ce_nvidia-default_centos7_full.txt": [('container_engine.server_version', '18.06.1-ce'), ('container_engine.runtimes', ['runc', 'nvidia']), ('container_engine.default_runtime', 'nvidia'), ('container_engine.cgroup_driver', 'cgroupfs'), ('container_engine.cgroup_version', None), ('container_engine.rootless', False)],
    "docker-info/docker-18.09.0-ce_nvidia-default_manjaro_full.txt": [('container_engine.server_version', '18.09.0-ce'), ('container_engine.runtimes', ['nvidia', 'runc']), ('container_engine.default_runtime', 'nvidia'), ('container_engine.cgroup_driver', 'cgroupfs'), ('container_engine.cgroup_version', None), ('container_engine.rootless', False)],
    "docker-info/docker-19.03.12_kata-and-nvidia-runtimes_nvidia-default_partial.txt": [('container_engine.server_version', '19.03.12'), ('container_engine.runtimes', ['kata-clh', 'kata-fc', 'kata-qemu', 'kata-qemu-virtiofs', 'kata-runtime', 'nvidia', 'runc']), ('container_engine.default_runtime', 'nvidia'), ('container_engine.cgroup_driver', 'cgroupfs'), ('container_engine.cgroup_version', None), ('container_engine.rootless', False)],
    "docker-info/docker-19.03.12_runc-only_partial.txt": [('container_engine.server_version', '19.03.12'), ('container_engine.runtimes', ['runc']), ('container_engine.default_runtime', 'runc'), ('container_engine.cgroup_driver', 'cgroupfs'), ('container_engine.cgroup_version', None), ('container_engine.rootless', None)],
    "docker-info/docker-2024-apt-upgrade_runc-only_grep-runtime.txt": [('container_engine.server_version', None), ('container_engine.runtimes', ['io.containerd.runc.v2', 'runc']), ('container_engine.default_runtime', 'runc'), ('container_engine.cgroup_driver', None), ('container_engine.cgroup_version', None), ('container_engine.rootless', None)],
    "docker-info/docker-24.0.7_nvidia-default_grep-runtime.txt": [('container_engine.server_version', None), ('container_engine.runtimes', ['io.containerd.runc.v2', 'nvidia', 'runc']), ('container_engine.default_runtime', 'nvidia'), ('container_engine.cgroup_driver', None), ('container_engine.cgroup_version', None), ('container_engine.rootless', None)],
    "docker-info/docker-24.0.7_nvidia-registered-runc-default_cgroup2-systemd_full.txt": [('container_engine.server_version', '24.0.7'), ('container_engine.runtimes', ['io.containerd.runc.v2', 'nvidia', 'runc']), ('container_engine.default_runtime', 'runc'), ('container_engine.cgroup_driver', 'systemd'), ('container_engine.cgroup_version', '2'), ('container_engine.rootless', False), ('host.kernel', '5.15.0-125-generic'), ('host.machine', 'x86_64'), ('host.memory_mib', 32061)],
    "docker-info/docker-recent_runc-only_warning-seccomp_grep-runtime.txt": [('container_engine.server_version', None), ('container_engine.runtimes', ['io.containerd.runc.v2', 'runc']), ('container_engine.default_runtime', 'runc'), ('container_engine.cgroup_driver', None), ('container_engine.cgroup_version', None), ('container_engine.rootless', None)],
    "docker-info/docker-rootful-sudo_runc-and-nvidia_grep-runtimes.txt": [('container_engine.server_version', None), ('container_engine.runtimes', ['io.containerd.runc.v2', 'runc', 'nvidia']), ('container_engine.default_runtime', None), ('container_engine.cgroup_driver', None), ('container_engine.cgroup_version', None), ('container_engine.rootless', None)],
    "docker-info/docker-rootless_runc-only_grep-runtimes.txt": [('container_engine.server_version', None), ('container_engine.runtimes', ['io.containerd.runc.v2', 'runc']), ('container_engine.default_runtime', None), ('container_engine.cgroup_driver', None), ('container_engine.cgroup_version', None), ('container_engine.rootless', None)],
    "lspci/h100-sxm5-8gpu_nvswitch-x4_lspci-nn_tdx-guest.txt": [("gpus.0.pci_device_id", "10de:2330"),
                                                                ("gpus.0.pci_bus_id", "0000:05:00.0")],
    "lspci/rtx3090-as-device-2204_old-pci-ids_grep-vga.txt": [("gpus.0.pci_device_id", "10de:2204"),
                                                              ("gpus.0.name_source", "pci.ids")],
    "lspci/quadro-t1000-mobile_vfio-pci_lspci-nnk.txt": [("gpus.0.kernel_driver", "vfio-pci")],
    "lspci/mx130-gtx970-egpu_lspci-nn.txt": [("gpus.1.name", "GeForce GTX 970")],
    "conda-info/conda23.1.0_cuda11.2_glibc2.27_gpfs_truncated.txt": [
        ("driver.cuda_max", "11.2"), ("host.glibc", "2.27"), ("host.machine", "x86_64"), ("conda.version", "23.1.0"),
        ("conda.active_env", "base"), ("conda.channels.0", "https://conda-registry.invalid/pkgs/main/linux-64")],
    "conda-info/conda25.3.0_miniforge_cuda12.3_wsl2_no-active-env_truncated.txt": [
        ("driver.cuda_max", "12.3"), ("conda.version", "25.3.0"), ("host.glibc", "2.39"),
        ("conda.channels.0", "https://conda-registry.invalid/conda-forge/linux-64")],
    "conda-info/conda23.3.1_cuda12.1_tsinghua-mirror-channels_truncated.txt": [
        ("driver.cuda_max", "12.1"), ("conda.active_env", "seg_next"),
        ("conda.channels.0", "https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch/linux-64")],
    # pixi's virtual packages: the older layout (no "System" heading) and the newer one
    "pixi-info/pixi0.13.0_cuda12.3_docs.txt": [
        ("driver.cuda_max", "12.3"), ("host.glibc", "2.36"), ("host.machine", "x86_64"), ("pixi.version", "0.13.0")],
    "pixi-info/pixi0.50.2_cuda12.9_glibc2.35.txt": [
        ("driver.cuda_max", "12.9"), ("host.glibc", "2.35"), ("pixi.platform", "linux-64"), ("pixi.version", "0.50.2")],
    "nvidia-smi-topo-p2p/h100-8gpu_p2p-r_all-ok.txt": [("gpu_p2p.gpu_count", 8), ("gpu_p2p.not_ok", []),
                                                      ("gpu_p2p.matrix.GPU7.GPU0", "OK")],
    "nvidia-smi-topo-p2p/l4-2gpu_p2p-r_cns_no-legend.txt": [("gpu_p2p.not_ok.0.status", "CNS"),
                                                           ("gpu_p2p.not_ok.0.gpus", [0, 1])],
    "nvidia-smi-topo-p2p/rtx5090-2gpu_p2p-rw_gns_tabs.txt": [("gpu_p2p.not_ok.0.status", "GNS")],
    "nvidia-smi-topo-p2p/rtx50-mixed-5gpu_p2p-p_ok_patched-driver_truncated.txt": [("gpu_p2p.gpu_count", 5)],
    "nvidia-container-cli-info/rtx2080ti_drv418.56_cuda10.1_debug-lines.txt": [
        ("driver.cuda_max", "10.1"), ("gpus.0.compute_capability", "7.5"),
        ("gpus.0.uuid", "GPU-f07a200a-0b51-e058-fb70-c707941ad92e"), ("gpus.0.pci_bus_id", "00000000:01:00.0")],
    "nvidia-container-cli-info/jetson-xavier_nvrm-null_cuda10.2.txt": [
        ("driver.cuda_max", "10.2"), ("gpus.0.compute_capability", "7.2")],
    "ldconfig/cudnn4_nvidia-cuda-7.5-cudnn4-runtime.txt": [("cudnn.0.version", "4")],
    "ldconfig/cudnn8-split_nvinfer8_wider-grep_truncated.txt": [
        ("cudnn.0.version", "8"), ("cudnn.0.path", "/usr/local/cuda/lib64/libcudnn_ops_train.so.8")],
    "ldconfig/cudnn9-split-libraries_truncated.txt": [("cudnn.0.version", "9")],
    "docker-inspect/nvidia-cuda-10.0_container-inspect_partial.txt": [
        ("env.NVIDIA_REQUIRE_CUDA", "cuda>=10.0 brand=tesla,driver>=384,driver<385"),
        ("cuda_toolkits.0.version", "10.0.130"), ("nccl.0.version", "2.3.7")],
    "docker-inspect/cuda10.0-based-image_grep-nvidia.txt": [
        ("env.NVIDIA_REQUIRE_CUDA", "cuda>=10.0 brand=tesla,driver>=384,driver<385 brand=tesla,driver>=410,driver<411")],
    "vllm-collect-env/h100_vllm0.8.4_cu124_drv550.127.txt": [("frameworks.vllm.version", "0.8.4"), ("host.os.id", "ubuntu")],
    "vllm-collect-env/oldformat_aarch64_torch2.1.0_vllm0.6.3dev_all-could-not-collect.txt": [
        ("frameworks.torch.cuda_reported", "Could not collect"), ("frameworks.torch.cuda_unreadable", True),
        ("host.machine", "aarch64")],
    "vllm-collect-env/rocm_rx7900xtx_vllm0.9.0.txt": [("frameworks.vllm.version", "0.9.0")],
    "sglang-check-env/b200_sglang0.4.7_drv570.124.txt": [("gpus.0.compute_capability", "10.0"), ("frameworks.sglang", None)],
    "llamafactory-env/llamafactory0.9.3dev0_a100x8_torch2.3.0-cu121_gpu-number-memory.txt": [("gpus.7.memory_total_mib", 81152)],
    "xformers-info/xformers0.0.16_rtx3090_torch1.13.1-cu117_build-info_truncated.txt": [
        ("frameworks.xformers.compiled_with.cuda", "11.7"), ("gpus.0.compute_capability", "8.6")],
    "bitsandbytes/bnb-0.4x_k80-cc3.7_cuda101_azureml_cpu-fallback_truncated.txt": [("gpus.0.compute_capability", "3.7")],
    "jax-env/jax0.4.33_a10g-x8_aws_drv550.127_platform-uname_truncated.txt": [
        ("frameworks.jax.device_count", 8), ("frameworks.jax.device_platform", "gpu"), ("driver.cuda_max", "12.4")],
    "tensorflow-build-info/tf2.x_sysconfig-build-info_cuda11.2_rtx3060_devices.txt": [("gpus.0.compute_capability", "8.6")],
    "paddle-run-check/paddle2.5_pascal-cc6.1_arch-70-75-80-86-warning_works-on-1-gpu.txt": [
        ("driver.cuda_max", "11.7"), ("gpus.0.compute_capability", "6.1"), ("cudnn.0.version", "8.2")],
    "paddle-run-check/paddle1.4.1_fluid-install-check_cc70_cudnn-mismatch-warning.txt": [
        ("frameworks.paddle.version", "1.4.1"), ("frameworks.paddle.cuda", "9.0"), ("gpus.0.compute_capability", "7.0")],
    "mindspore-run-check/mindspore2.1.1_ascend310p3_success-then-opinfo-error.txt": [
        ("frameworks.mindspore.version", "2.1.1"), ("frameworks.mindspore.device_target", "Ascend")],
    "proc-driver-nvidia-version/open-kernel-module_575.57.08_b200_with-fabricmanager-nvlink-pkgs.txt": [
        ("driver.kernel_module", "575.57.08")],
    "torch-collect-env/torch1.7.1+cpu_windows10_cuda-build-could-not-collect_truncated.txt": [("host.os.system", "Windows")],
    "torch-collect-env/torch2.6.0+cpu_ubuntu24.10_cuda-build-None_truncated.txt": [("frameworks.torch.cuda_reported", "None")],
    "torch-collect-env/torch2.7.0dev+rocm6.3_gentoo_rx5700xt-gfx1010_truncated.txt": [("frameworks.torch.hip", "6.3.42131-fa1d09cbd")],
    "torch-collect-env/torch2.4.0+cu121_wsl2_rtx4070-laptop_drv551.88_vllm-script_truncated.txt": [("host.wsl", True)],
    "torch-collect-env/torch1.5.0+cu101_windows-server-2019_titan-rtx-x2_quoted-with-gt_truncated.txt": [
        ("host.os.system", "Windows"), ("cudnn.0.version", "7")],
}


def _files():
    for directory, kind in DIRECTORIES.items():
        for path in sorted((FIXTURES / directory).glob("*.txt")):
            relative = "{}/{}".format(directory, path.name)
            if relative in EXPECTED:
                yield pytest.param(kind, relative, id=relative)


def _value(snapshot, dotted):
    parts = dotted.split(".")
    if parts[0] in ("host", "driver"):
        node = snapshot[parts[0]][parts[1]]["value"]
        rest = parts[2:]
    else:
        node = snapshot[parts[0]]["value"]
        rest = parts[1:]
    for part in rest:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def test_every_new_fixture_is_in_the_table():
    listed = {"{}/{}".format(d, p.name) for d in DIRECTORIES if d not in ("torch-collect-env", "proc-driver-nvidia-version")
              for p in (FIXTURES / d).glob("*.txt")}
    assert listed <= set(EXPECTED)
    assert len([f for f in EXPECTED if f.startswith("vllm-collect-env/")]) == 17


@pytest.mark.parametrize("kind,relative", list(_files()))
def test_facts_read(kind, relative):
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    assert detect_kind(text) == kind
    snapshot = validate_snapshot(parse(kind, text, relative), relative)
    view = SnapshotView(snapshot)
    driver, gpu_name, gpu_count, torch_version, torch_cuda, python = EXPECTED[relative]
    assert view.driver_version == driver
    assert len(view.gpus) == gpu_count
    assert [gpu["index"] for gpu in view.gpus] == list(range(gpu_count))
    if gpu_count:
        assert view.gpus[0]["name"] == gpu_name
    torch = view.frameworks.get("torch")
    assert (torch or {}).get("version") == torch_version
    if torch_version is not None:
        assert torch.get("cuda", ABSENT) == torch_cuda
    assert view.python_version == python
    for dotted, expected in MORE.get(relative, []):
        if expected is None:
            continue
        assert _value(snapshot, dotted) == expected, dotted
    for section in ("driver", "host"):
        for fact in snapshot.get(section, {}).values():
            if fact["status"] == "found":
                assert fact["source"] in ("pasted:" + kind, "pasted:nvidia-smi")


@pytest.mark.parametrize("kind,relative", list(_files()))
def test_found_inside_an_issue_text(kind, relative):
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    issue = ("### Your current environment\n\nI ran the command the template asks for:\n\n```text\n" + text +
             "\n```\n\n### Describe the bug\n\nThe server crashes at start-up with: RuntimeError: CUDA error.\n"
             "Any idea? Thanks!\n")
    assert detect_kind(issue) == kind
    embedded = SnapshotView(parse_embedded(issue))
    alone = SnapshotView(parse(kind, text, relative))
    assert any(entry in ("embedded:" + kind, "embedded:collect-env") for entry in embedded.snapshot["origin"]["inputs"]) \
        if hasattr(embedded, "snapshot") else True
    assert embedded.driver_version == alone.driver_version
    assert [gpu["name"] for gpu in embedded.gpus] == [gpu["name"] for gpu in alone.gpus]
    assert embedded.python_version == alone.python_version
    if "torch" in alone.frameworks:
        assert embedded.frameworks["torch"]["version"] == alone.frameworks["torch"]["version"]


def test_torch_build_without_cuda_is_never_the_default_build():
    for relative, expected in EXPECTED.items():
        if expected[3] and expected[4] is None:
            text = (FIXTURES / relative).read_text(encoding="utf-8")
            torch = parse(detect_kind(text), text)["frameworks"]["value"]["torch"]
            assert "cuda" in torch and torch["cuda"] is None, relative


NEW_KINDS = sorted(set(DIRECTORIES.values()))


def _sample(kind):
    directory = next(d for d, k in DIRECTORIES.items() if k == kind)
    return max(((FIXTURES / directory).glob("*.txt")), key=lambda p: p.stat().st_size).read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", NEW_KINDS)
@pytest.mark.parametrize("shape", ["section", "blank-lines"])
def test_200kb_of_a_repeated_section_parses_in_well_under_a_second(kind, shape):
    text = _sample(kind)
    lines = text.split("\n")
    middle = len(lines) // 2
    section = "\n".join(lines[max(0, middle - 3):middle + 3]) + "\n"
    if shape == "blank-lines":
        section = "\n\n\n" + section.replace("\n", "\n\n")
    repeated = section * (200 * 1024 // len(section) + 1)
    big = "\n".join(lines[:middle]) + "\n" + repeated + "\n".join(lines[middle:])
    assert len(big) > 200 * 1024
    # This process's CPU time, not the wall clock: a backtracking parse burns CPU, while other work on a shared machine
    # only delays the wall clock (these guards failed under a load of 8 on 2 cores with time.perf_counter).
    started = time.process_time()
    try:
        parse(kind, big, "big.txt")
    except InputError:
        pass  # a repeated section may contradict itself; refusing it is fine, taking long is not
    detect_kind(big)
    parse_embedded("prose\n```\n" + big + "\n```\nmore prose\n")
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize("kind", NEW_KINDS)
def test_past_the_kind_limit_is_one_input_error_line(kind):
    limit = BY_NAME[kind].max_chars
    assert limit >= 512 * 1024  # well above any real output (the longest sample is ~15 KB)
    text = _sample(kind)
    big = text + "\n" * (limit + 1 - len(text)) + text
    with pytest.raises(InputError) as raised:
        parse(kind, big, "big.txt")
    assert "\n" not in raised.value.message and "KiB" in raised.value.message


def test_the_registry_is_the_one_list():
    assert KINDS == tuple(kind.name for kind in REGISTRY)
    for kind in REGISTRY:
        assert kind.label == "ingest.kind." + kind.name
        for lang in ("en", "zh"):
            assert display_name(kind.name, lang) != kind.label  # the catalog names it
    assert display_name("vllm-collect-env", "en") == "vLLM collect_env report"

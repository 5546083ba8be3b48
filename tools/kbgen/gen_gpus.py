import sys
sys.path.insert(0, "/tmp/kbgen")
from tomlw import table
OUT = "/work/main/src/gpuvet/kb/data/gpus.toml"
CC = "https://developer.nvidia.com/cuda-gpus"
LEG = "https://developer.nvidia.com/cuda-legacy-gpus"
OGKM = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/df1c9a3de2be4b130f4fc7680f7198193d8ac6ad/README.md"
INST = "https://github.com/NVIDIA/nvidia-installer/blob/00aaa9f9b4677d606a1897c5554d9c93e5870980/nvGpus.h"
LIT = "https://github.com/Lightning-AI/pytorch-lightning/blob/7f0c3436cd3f6ad3753125672024fc415cbcb414/src/lightning/fabric/utilities/throughput.py"
MLE = "https://github.com/stas00/ml-engineering/blob/744d01e18b79512572f64a6bbd8b5f4a725203a7/compute/accelerator/README.md"
LOCK_B = "https://glennklockwood.com/garden/processors/B200"
LOCK_A = "https://glennklockwood.com/garden/processors/A100"
SEC = "shared/reference/nvidia/gpus.yaml (datasheet figures not re-retrieved)"
CN = "https://willitrunai.com/es/gpus/h20-96gb"
MUL = "https://www.mullet.se/product.html?product_id=355414"
PRESS = "https://gpu.name/posts/nvidia-unveils-rtx-pro-6000-blackwell-gpu-with-24-064-cores-and-96gb-memory"
GIST = "https://gist.github.com/mikasenghaas/d63ded03f1f0417b1677627119bacc0d"
MLPERF = "https://github.com/mlcommons/inference_results_v4.1/blob/main/closed/NVIDIA/systems/H200-SXM-141GBx8_TRT_MaxQ.json"
ALL_SPEC = ["memory_gib", "bandwidth_gbs", "tflops", "pcie_gen"]

def g(name, aliases, arch, cc, mem, bw, tf, nvlink, seg, pcie, srcs, unv=("pcie_gen",), note=None):
    return {"name": name, "aliases": list(aliases), "architecture": arch, "compute_capability": cc,
            "memory_gib": mem, "bandwidth_gbs": bw, "tflops": tf, "nvlink": nvlink, "segment": seg,
            "pcie_gen": pcie, "unverified": list(unv), "note": note, "source": "; ".join(srcs)}

GPUS = [
 g("Tesla K80", ["K80", "NVIDIA Tesla K80"], "Kepler", "3.7", 12, 240, {"fp32": 4.37}, False, "datacenter", 3,
   [LEG, INST, SEC], ALL_SPEC, "Dual-GPU board: nvidia-smi shows two GPUs of 12 GB each; last driver branch R470."),
 g("Tesla M40", ["M40"], "Maxwell", "5.2", 12, 288, {"fp32": 7.0}, False, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC),
 g("Tesla M40 24GB", ["M40 24GB"], "Maxwell", "5.2", 24, 288, {"fp32": 7.0}, False, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC,
   "nvidia-smi memory.total 22939 MiB observed."),
 g("Tesla P4", ["P4"], "Pascal", "6.1", 8, 192, {"fp32": 5.5, "int8": 22.0}, False, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC),
 g("Tesla P40", ["P40"], "Pascal", "6.1", 24, 346, {"fp32": 11.76, "int8": 47.0}, False, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC),
 g("Tesla P100-PCIE-12GB", ["P100 12GB"], "Pascal", "6.0", 12, 549, {"fp32": 9.3}, False, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC),
 g("Tesla P100-PCIE-16GB", ["P100 PCIe"], "Pascal", "6.0", 16, 732, {"fp32": 9.3}, False, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC),
 g("Tesla P100-SXM2-16GB", ["P100", "P100 SXM2"], "Pascal", "6.0", 16, 732, {"fp32": 10.6}, True, "datacenter", 3, [LEG, INST, SEC], ALL_SPEC),
 g("Tesla V100-SXM2-16GB", ["V100 SXM2 16GB"], "Volta", "7.0", 16, 900, {"fp32": 15.7, "fp16": 125.0}, True, "datacenter", 3,
   [LEG, INST, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("Tesla V100-SXM2-32GB", ["V100", "V100 SXM2", "V100 32GB"], "Volta", "7.0", 32, 900, {"fp32": 15.7, "fp16": 125.0}, True, "datacenter", 3,
   [LEG, INST, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("Tesla V100-PCIE-16GB", ["V100 PCIe 16GB"], "Volta", "7.0", 16, 900, {"fp32": 14.0, "fp16": 112.0}, False, "datacenter", 3,
   [LEG, INST, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("Tesla V100-PCIE-32GB", ["V100 PCIe", "V100 PCIe 32GB"], "Volta", "7.0", 32, 900, {"fp32": 14.0, "fp16": 112.0}, False, "datacenter", 3,
   [LEG, INST, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("Tesla V100S-PCIE-32GB", ["V100S"], "Volta", "7.0", 32, 1134, {"fp32": 16.4, "fp16": 130.0}, False, "datacenter", 3,
   [LEG, INST, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("Tesla T4", ["T4", "NVIDIA T4"], "Turing", "7.5", 16, 320, {"fp32": 8.1, "fp16": 65.0, "int8": 130.0}, False, "datacenter", 3,
   [CC, OGKM, LIT, SEC], ["bandwidth_gbs", "tflops.int8", "pcie_gen"]),
 g("NVIDIA GeForce RTX 2080 Ti", ["RTX 2080 Ti", "2080 Ti", "GeForce RTX 2080 Ti"], "Turing", "7.5", 11, 616, {"fp32": 13.4}, False, "consumer", 3,
   [CC, OGKM, SEC], ALL_SPEC, "Has a 2-way NVLink bridge connector; nvlink=false here means no NVLink between GPUs unless a bridge is fitted."),
 g("NVIDIA TITAN RTX", ["TITAN RTX"], "Turing", "7.5", 24, 672, {"fp32": 16.3, "fp16": 130.0}, False, "consumer", 3, [CC, OGKM, SEC], ALL_SPEC),
 g("NVIDIA A10", ["A10"], "Ampere", "8.6", 24, 600, {"fp32": 31.2, "tf32": 62.5, "bf16": 125.0, "fp16": 125.0}, False, "datacenter", 4,
   [CC, OGKM, LIT], ["pcie_gen"]),
 g("NVIDIA A10G", ["A10G"], "Ampere", "8.6", 24, 600, {"fp32": 31.2}, False, "datacenter", 4, [OGKM, LIT, SEC], ALL_SPEC + ["compute_capability"],
   "AWS G5 only; no public NVIDIA datasheet: figures are A10's, an upper bound. CC from the GA102 chip."),
 g("NVIDIA A16", ["A16"], "Ampere", "8.6", 16, 200, {"fp32": 4.5}, False, "datacenter", 4, [CC, OGKM, SEC], ALL_SPEC,
   "Quad-GPU board: nvidia-smi shows four GPUs of 16 GB."),
 g("NVIDIA A30", ["A30"], "Ampere", "8.0", 24, 933, {"fp32": 10.3, "bf16": 165.0, "fp16": 165.0}, False, "datacenter", 4, [OGKM, SEC], ALL_SPEC,
   "CC 8.0 from older copies of the NVIDIA CUDA GPUs page."),
 g("NVIDIA A40", ["A40"], "Ampere", "8.6", 48, 696, {"fp32": 37.4, "tf32": 74.8, "bf16": 149.7, "fp16": 149.7}, False, "datacenter", 4,
   [CC, OGKM, LIT], ["pcie_gen"]),
 g("NVIDIA A100-PCIE-40GB", ["A100 PCIe 40GB", "A100 40GB PCIe"], "Ampere", "8.0", 40, 1555, {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0}, False, "datacenter", 4,
   [OGKM, LOCK_A, LIT], ["tflops.tf32", "pcie_gen"]),
 g("NVIDIA A100 80GB PCIe", ["A100 PCIe", "A100 80GB PCIe"], "Ampere", "8.0", 80, 1935, {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0}, False, "datacenter", 4,
   [OGKM, LOCK_A, MLE], ["tflops.tf32", "pcie_gen"]),
 g("NVIDIA A100-SXM4-40GB", ["A100 SXM4 40GB", "A100 40GB"], "Ampere", "8.0", 40, 1555, {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0}, True, "datacenter", 4,
   [OGKM, LOCK_A, LIT], ["tflops.tf32", "pcie_gen"]),
 g("NVIDIA A100-SXM4-80GB", ["A100", "A100 SXM4", "A100 80GB"], "Ampere", "8.0", 80, 2039, {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0}, True, "datacenter", 4,
   [OGKM, LOCK_A, MLE], ["tflops.tf32", "pcie_gen"]),
 g("NVIDIA A800-SXM4-80GB", ["A800", "A800 SXM4 80GB"], "Ampere", "8.0", 80, 2039, {"fp32": 19.5, "bf16": 312.0, "fp16": 312.0}, True, "datacenter", 4,
   [OGKM, SEC], ALL_SPEC + ["compute_capability"], "China-market A100 variant; NVLink reduced to 400 GB/s. CC from the GA100 chip."),
 g("NVIDIA A800-SXM4-40GB", ["A800 40GB"], "Ampere", "8.0", 40, None, {}, True, "datacenter", 4, [OGKM, SEC], ALL_SPEC + ["compute_capability"]),
 g("NVIDIA A800 80GB PCIe", ["A800 PCIe", "NVIDIA A800 80GB PCIe LC"], "Ampere", "8.0", 80, None, {}, False, "datacenter", 4, [OGKM, SEC], ALL_SPEC + ["compute_capability"]),
 g("NVIDIA A800 40GB Active", ["A800 40GB Active"], "Ampere", "8.0", 40, None, {}, False, "workstation", 4, [OGKM, SEC], ALL_SPEC + ["compute_capability"]),
 g("NVIDIA RTX A6000", ["RTX A6000", "A6000"], "Ampere", "8.6", 48, 768, {"fp32": 38.7}, False, "workstation", 4, [CC, OGKM, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("NVIDIA GeForce RTX 3090", ["RTX 3090", "3090", "GeForce RTX 3090"], "Ampere", "8.6", 24, 936, {"fp32": 35.6}, False, "consumer", 4, [CC, OGKM, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("NVIDIA GeForce RTX 3090 Ti", ["RTX 3090 Ti", "3090 Ti"], "Ampere", "8.6", 24, 1008, {"fp32": 40.0}, False, "consumer", 4, [CC, OGKM, LIT, SEC], ["bandwidth_gbs", "pcie_gen"]),
 g("NVIDIA GeForce RTX 4090", ["RTX 4090", "4090", "GeForce RTX 4090"], "Ada Lovelace", "8.9", 24, 1008, {"fp32": 82.6, "bf16": 165.2, "fp16": 165.2}, False, "consumer", 4,
   [CC, OGKM, LIT, GIST], ["tflops.bf16", "tflops.fp16", "pcie_gen"], "Tensor figures are FP32-accumulate (GeForce; FP16-accumulate is twice that)."),
 g("NVIDIA GeForce RTX 4090 D", ["RTX 4090 D", "4090 D", "4090D"], "Ada Lovelace", "8.9", 24, 1008, {"fp32": 73.5}, False, "consumer", 4,
   [OGKM, SEC], ALL_SPEC + ["compute_capability"], "China-market variant (14,592 CUDA cores). CC from the AD102 chip."),
 g("NVIDIA RTX 6000 Ada Generation", ["RTX 6000 Ada"], "Ada Lovelace", "8.9", 48, 960, {"fp32": 91.1}, False, "workstation", 4, [CC, OGKM, SEC], ALL_SPEC),
 g("NVIDIA L4", ["L4"], "Ada Lovelace", "8.9", 24, 300, {"fp32": 30.3, "tf32": 60.0, "bf16": 121.0, "fp16": 121.0}, False, "datacenter", 4,
   [CC, OGKM, LIT], ["bandwidth_gbs", "pcie_gen"]),
 g("NVIDIA L20", ["L20"], "Ada Lovelace", "8.9", 48, 864, {"fp32": 59.8, "bf16": 119.5, "fp16": 119.5}, False, "datacenter", 4,
   [OGKM, CN, SEC], ALL_SPEC + ["compute_capability"], "China-market; no public NVIDIA datasheet. CC from the AD102 chip."),
 g("NVIDIA L40", ["L40"], "Ada Lovelace", "8.9", 48, 864, {"fp32": 90.5, "tf32": 90.5, "bf16": 181.05, "fp16": 181.05}, False, "datacenter", 4,
   [CC, OGKM, MUL, LIT], ["pcie_gen"]),
 g("NVIDIA L40S", ["L40S"], "Ada Lovelace", "8.9", 48, 864, {"fp32": 91.6, "tf32": 183.0, "bf16": 362.05, "fp16": 362.05, "fp8": 733.0}, False, "datacenter", 4,
   [CC, OGKM, MUL, MLE], ["pcie_gen"]),
 g("NVIDIA H100 80GB HBM3", ["H100", "H100 SXM", "H100 SXM5", "H100 80GB"], "Hopper", "9.0", 80, 3350,
   {"fp32": 67.0, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979.0}, True, "datacenter", 5, [CC, OGKM, LIT, MLE], ["pcie_gen"]),
 g("NVIDIA H100 PCIe", ["H100 PCIe"], "Hopper", "9.0", 80, 2000, {"fp32": 51.0, "tf32": 378.0, "bf16": 756.0, "fp16": 756.0, "fp8": 1513.0}, False, "datacenter", 5,
   [CC, OGKM, LIT, MLE], ["pcie_gen"], "nvlink=false: NVLink only through an optional bridge."),
 g("NVIDIA H100 NVL", ["H100 NVL"], "Hopper", "9.0", 94, 3900, {"fp32": 60.0, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5}, False, "datacenter", 5,
   [CC, OGKM, LIT], ["bandwidth_gbs", "pcie_gen"], "nvlink=false: NVLink only through an optional bridge."),
 g("NVIDIA H100", ["H100 SXM5 64GB/94GB/96GB"], "Hopper", "9.0", None, None, {}, True, "datacenter", 5, [CC, OGKM], ["pcie_gen"],
   "Other SXM5 SKUs (64/94/96 GB) report the bare name; memory unknown from the name."),
 g("NVIDIA H800", ["H800"], "Hopper", "9.0", 80, 3350, {"fp32": 67.0, "bf16": 989.5, "fp16": 989.5}, True, "datacenter", 5,
   [OGKM, SEC], ALL_SPEC + ["compute_capability"], "China-market H100 variant; NVLink 400 GB/s. CC from the GH100 chip."),
 g("NVIDIA H800 PCIe", ["H800 PCIe"], "Hopper", "9.0", 80, None, {}, False, "datacenter", 5, [OGKM, SEC], ALL_SPEC + ["compute_capability"]),
 g("NVIDIA H20", ["H20"], "Hopper", "9.0", 96, 4000, {"fp32": 44.0, "tf32": 74.0, "bf16": 148.0, "fp16": 148.0, "fp8": 296.0, "int8": 296.0}, True, "datacenter", 5,
   [OGKM, CN, SEC], ALL_SPEC + ["compute_capability"], "China-market Hopper; no public NVIDIA datasheet. CC from the GH100 chip."),
 g("NVIDIA H20-3e", ["H20-3e", "H20 3e"], "Hopper", "9.0", 141, None, {}, True, "datacenter", 5, [SEC], ALL_SPEC + ["compute_capability"]),
 g("NVIDIA H200", ["H200", "H200 SXM", "H200 141GB"], "Hopper", "9.0", 141, 4800, {"fp32": 67.0, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "fp8": 1979.0}, True, "datacenter", 5,
   [CC, OGKM, LIT, MLE, MLPERF], ["pcie_gen"]),
 g("NVIDIA H200 NVL", ["H200 NVL"], "Hopper", "9.0", 141, 4800, {"fp32": 60.0, "tf32": 420.0, "bf16": 840.0, "fp16": 840.0}, False, "datacenter", 5,
   [CC, OGKM, LIT], ["pcie_gen"], "nvlink=false: NVLink only through an optional bridge."),
 g("NVIDIA GH200 120GB", ["GH200", "NVIDIA GH200 480GB", "GH200 96GB"], "Hopper", "9.0", 96, 4000, {"fp32": 67.0, "bf16": 989.0, "fp16": 989.0}, True, "datacenter", 5,
   [CC, OGKM, MLE], ["pcie_gen"], "The 120GB/480GB suffix is the Grace LPDDR5X size, not GPU memory (unverified). Needs the open kernel modules."),
 g("NVIDIA GH200 144G HBM3e", ["GH200 144GB"], "Hopper", "9.0", 144, 4800, {"fp32": 67.0, "bf16": 989.0, "fp16": 989.0}, True, "datacenter", 5,
   [CC, OGKM, MLE], ["pcie_gen"], "About 141 GB usable."),
 g("NVIDIA B200", ["B200", "HGX B200"], "Blackwell", "10.0", 180, 8000, {"fp32": 80.0, "tf32": 1100.0, "bf16": 2250.0, "fp16": 2250.0, "fp8": 4500.0}, True, "datacenter", 6,
   [CC, OGKM, LOCK_B, MLE], ["pcie_gen"], "About 179 GB reported by nvidia-smi; NVLink 5 (NV18 in topo)."),
 g("NVIDIA GB200", ["GB200"], "Blackwell", "10.0", 186, 8000, {"fp32": 90.0, "tf32": 1250.0, "bf16": 2500.0, "fp16": 2500.0, "fp8": 5000.0}, True, "datacenter", 6,
   [CC, LOCK_B, MLE], ["memory_gib", "pcie_gen"], "Per GPU of the superchip; 186 GB (ml-engineering) vs 192 GB (Lockwood). Needs the open kernel modules."),
 g("NVIDIA B300 SXM6 AC", ["B300"], "Blackwell", "10.3", 288, 8000, {"fp32": 80.0, "bf16": 2250.0, "fp16": 2250.0}, True, "datacenter", 6,
   [CC, OGKM, MLE], ["pcie_gen"]),
 g("NVIDIA GB300", ["GB300"], "Blackwell", "10.3", 288, 8000, {"bf16": 2500.0, "fp16": 2500.0}, True, "datacenter", 6, [CC, OGKM, MLE], ["memory_gib", "bandwidth_gbs", "pcie_gen"]),
 g("NVIDIA GeForce RTX 5090", ["RTX 5090", "5090", "GeForce RTX 5090"], "Blackwell", "12.0", 32, 1792, {"fp32": 104.8}, False, "consumer", 5,
   [CC, OGKM, PRESS], ["tflops", "pcie_gen"], "Needs CUDA >= 12.8 binaries (sm_120)."),
 g("NVIDIA GeForce RTX 5090 D", ["RTX 5090 D", "5090 D", "NVIDIA GeForce RTX 5090 D v2"], "Blackwell", "12.0", 32, 1792, {}, False, "consumer", 5,
   [CC, OGKM, PRESS], ALL_SPEC, "China-market variants of the RTX 5090."),
 g("NVIDIA RTX PRO 6000 Blackwell Server Edition", ["RTX PRO 6000 Blackwell", "RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
   "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"], "Blackwell", "12.0", 96, 1792, {"fp32": 117.0}, False, "workstation", 5,
   [CC, OGKM, PRESS], ["tflops", "pcie_gen"], "Editions differ in power limit (Max-Q lower)."),
]
parts = ["# GPU models as nvidia-smi / NVML name them. Compute capability from NVIDIA's CUDA GPUs pages unless flagged.\n"
         "# memory_gib: nominal datasheet size (nvidia-smi shows slightly less). tflops: dense peak, no sparsity;\n"
         "# fp16/bf16/tf32/fp8/int8 = tensor-core figures (int8 in TOPS). `unverified` lists fields not read from an NVIDIA document.\n"]
for r in GPUS:
    tf = r.pop("tflops"); src = r.pop("source")
    r["source"] = src
    parts.append(table("[[gpu]]", r) + ("tflops = %s\n" % __import__("tomlw").val(tf) if tf else ""))
open(OUT, "w").write("\n".join(parts))
print(len(GPUS))

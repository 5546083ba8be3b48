import re, sys, yaml
sys.path.insert(0, "/tmp/kbgen")
from tomlw import table, val
REF = "/work/shared/reference/nvidia/"
OUT = "/work/main/src/gpuvet/kb/data/"
S = {
 "S01": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html (CUDA 13.4 Update 1 release notes)",
 "S01b": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/ (CUDA 13.5 release notes, cudart 13.5.37)",
 "S02": "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html (Table 3)",
 "S03": "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html",
 "S04": "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
 "S05": "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
 "S07": "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html",
 "S08": "https://developer.nvidia.com/cuda-gpus",
 "S09": "https://developer.nvidia.com/cuda-legacy-gpus",
 "S13": "https://github.com/NVIDIA/nvidia-installer/blob/00aaa9f9b4677d606a1897c5554d9c93e5870980/nvGpus.h",
 "S14": "https://github.com/NVIDIA/nccl/tree/5067397c2676d5aed50042fc39e5c8ee96eb0027 (makefiles/common.mk, src/nccl.h.in)",
 "S17": "ptxas --help / nvcc --list-gpu-code from NVIDIA's PyPI wheels nvidia-cuda-nvcc(-cu11/-cu12) (shared/reference/nvidia/evidence/ptxas_archs.txt)",
 "S18": "NVIDIA PyPI nvidia-cuda-runtime-cu12 12.9.79 include/cuda.h (cuDriverGetVersion)",
 "S22": "https://docs.nvidia.com/deeplearning/cudnn/latest/reference/support-matrix.html",
 "S23": "https://docs.nvidia.com/deeplearning/nccl/release-notes/index.html",
 "S24": "https://github.com/Kitware/CMake/blob/7f36e0ff6ec624668b1353ad706c0663637cbbb7/Modules/CUDA/architectures.cmake",
 "S25": "https://docs.nvidia.com/cuda/archive/12.6.3/cufft/deprecated-functionality.html",
 "S26": "https://forums.developer.nvidia.com/t/minimum-required-cuda-version-by-gpu/276955/2",
 "S35": "real nvidia-smi captures (shared/reference/nvidia/SOURCES.md S35)",
 "S39": "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
 "S50": "third-party quotes of https://docs.nvidia.com/cuda/archive/13.3.0/cuda-toolkit-release-notes/index.html",
}
def src(ids):
    if isinstance(ids, str): ids = [ids]
    return "; ".join(S[i] for i in ids)

cd = yaml.safe_load(open(REF + "cuda_driver.yaml"))
parts = ['# CUDA toolkit -> NVIDIA driver. Encoded from shared/reference/nvidia/cuda_driver.yaml; re-check at the sources.\n'
         '# toolkit.linux/windows = driver PACKAGED with that toolkit (Table 3 of the CUDA release notes), a ">=" value.\n'
         '# Since CUDA 11 the real floor is the family minimum (minor-version compatibility), see [[family]].\n']
for e in cd["toolkit_driver_table"]["entries"]:
    rec = {"cuda": e["cuda"].replace(".x", ""), "label": e["label"]}
    lin = e.get("linux")
    if lin and re.match(r"^\d+(\.\d+)+$", lin):
        rec["linux"] = lin
    if e.get("windows"):
        rec["windows"] = e["windows"]
    if e["cuda"].startswith("13.3"):
        rec["source"] = src("S50"); rec["unverified"] = True
    elif e["cuda"].startswith("13.4"):
        rec["cuda"] = "13.4.0"; rec["source"] = src("S01")
    elif e["cuda"].startswith("13."):
        rec["source"] = src(["S02", "S03"])
    else:
        rec["source"] = src(["S01", "S02"])
    if e.get("note"):
        rec["note"] = " ".join(e["note"].split())
    if e["cuda"].startswith("13.4"):
        rec["note"] = "Linux driver no longer bundled from 13.4; release notes give only the branch (R615). " + rec.get("note", "")
    parts.append(table("[[toolkit]]", rec))
parts.append(table("[[toolkit]]", {"cuda": "13.5.0", "label": "CUDA 13.5",
    "note": "Release notes exist (cudart 13.5.37); no packaged driver printed (driver unbundled on Linux since 13.4).",
    "source": src("S01b")}))
for f in cd["minor_version_compatibility"]["families"]:
    rec = {"major": f["major"], "minor_compat": True, "linux_min": f["linux_min_exact"], "windows_min": f.get("windows_min_exact"),
           "branch_min": f["min_branch"], "note": " ".join(f["note"].split()), "source": src(["S04", "S01", "S22"])}
    parts.append(table("[[family]]", rec))
parts.append(table("[[family]]", {"major": 10, "minor_compat": False,
    "note": "Pre-CUDA-11 toolkits have no minor-version compatibility: the packaged driver is a hard minimum.", "source": src(["S04", "S01"])}))
# branch -> max CUDA; first driver of the branch = the lowest packaged Linux driver of a toolkit with that major.minor
first = {}
for e in cd["toolkit_driver_table"]["entries"]:
    lin = e.get("linux") or ""
    if not re.match(r"^\d+(\.\d+)+$", lin):
        continue
    br = int(lin.split(".")[0]); mm = ".".join(e["cuda"].split(".")[:2])
    key = (br, mm)
    from packaging.version import Version
    if key not in first or Version(lin) < Version(first[key]):
        first[key] = lin
branches = [{"branch": 367, "cuda": "8.0", "basis": "Table 3 (367.48 packaged with CUDA 8.0.44)", "verified": True},
            {"branch": 375, "cuda": "8.0", "basis": "Table 3 (375.26 packaged with CUDA 8.0.61)", "verified": True}] + cd["branch_to_max_cuda"]["entries"]
for b in branches:
    rec = {"branch": b["branch"], "cuda": b["cuda"]}
    fd = first.get((b["branch"], b["cuda"]))
    if fd: rec["first_driver"] = fd
    rec["basis"] = " ".join(b["basis"].split())
    if b["branch"] == 620:
        rec["basis"] = "NVIDIA driver redist manifest: driver 620.70.06 (2026-11-04) ships its cuda_compat package for cuda13.5 only (a compat package is built from the driver matching that CUDA release)."
        rec["source"] = "https://developer.download.nvidia.com/compute/nvidia-driver/redist/redistrib_620.70.06.json"
        parts.append(table("[[branch]]", rec))
        continue
    if b.get("unverified"): rec["unverified"] = True
    rec["source"] = src(["S01", "S02"] + (["S35"] if "S35" in b["basis"] else []) + (["S07"] if "S07" in b["basis"] else []))
    parts.append(table("[[branch]]", rec))
for b in cd["toolkit_driver_branch_13x"]["entries"]:
    pass
fc = cd["forward_compatibility"]
parts.append(table("[forward_compat]", {
    "introduced": "10.0",
    "summary": "Run a NEWER CUDA major on an OLDER driver branch by installing cuda-compat-<major>-<minor> (a newer user-mode libcuda in /usr/local/cuda-X.Y/compat, first on LD_LIBRARY_PATH); the kernel module stays.",
    "hardware": ["NVIDIA Data Center GPUs", "Select NGC Server Ready SKUs of RTX cards", "Jetson boards"],
    "not_applicable": "GeForce / consumer GPUs: CUDA error 804 'forward compatibility was attempted on non supported HW'.",
    "max_major_without_compat": {"R535": 12, "R580": 13, "R595": 13, "R610": 13, "R620": 13},
    "source": src(["S05", "S07", "S18"])}))
parts.append(table("[nvidia_smi_cuda_version]", {
    "meaning": "The 'CUDA Version' in the nvidia-smi banner is cuDriverGetVersion(): the newest CUDA the driver supports, not an installed toolkit.",
    "source": src(["S18"])}))
open(OUT + "cuda_driver.toml", "w").write("\n".join(parts))

# ---- cuda_arch
ca = yaml.safe_load(open(REF + "cuda_arch_support.yaml"))
KNOWN = [30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87]
parts = ["# Which sm_XX each CUDA toolkit can compile SASS for. 11.7+ read from NVIDIA's ptxas/nvcc binaries (PyPI wheels);\n"
         "# 9.0-11.6 expanded from min/max ranges in CMake/LLVM/cuFFT notes (unverified).\n"]
for t in ca["toolkits"]:
    if "sm" in t:
        sm = ["sm_%s" % s for s in t["sm"]]
        rec = {"cuda": t["cuda"], "sm": sm, "ptxas_default": t.get("ptxas_default"), "ptxas_version": t.get("ptxas_version")}
        if t.get("notes"): rec["note"] = " ".join(t["notes"].split())
        rec["source"] = src("S17") + ("; " + src("S02") if t["cuda"] == "13.0" else "")
    else:
        sm = ["sm_%d" % s for s in KNOWN if t["sm_min"] <= s <= t["sm_max"]]
        rec = {"cuda": t["cuda"], "sm": sm}
        rec["note"] = ("Expanded from the range sm_%d..sm_%d. " % (t["sm_min"], t["sm_max"])) + " ".join((t.get("notes") or "").split())
        rec["unverified"] = True
        rec["source"] = src(["S24", "S25", "S26"])
    parts.append(table("[[toolkit]]", rec))
for a in ca["architectures"]:
    rec = {"sm": "sm_%s" % a["sm"], "compute_capability": a["cc"], "architecture": a["arch"]}
    for k in ("first_cuda", "last_cuda", "removed_in"):
        if a.get(k): rec[k] = str(a[k])
    if a.get("note"): rec["note"] = a["note"]
    if a.get("unverified"): rec["unverified"] = True
    rec["source"] = src([s for s in a["source"] if s in S])
    parts.append(table("[[arch]]", rec))
parts.append(table("[rules]", {
    "sass": "A cubin (SASS) for sm_XY runs only on GPUs of the same major X with minor >= Y (sm_80 runs on 8.6/8.9, never on 9.0).",
    "ptx": "PTX for compute_XY is JIT-compiled by the driver for any GPU with compute capability >= X.Y, if the driver's JIT knows that PTX ISA (PTX from a newer toolkit than the driver fails: error 222).",
    "arch_specific": "'a' targets (sm_90a, sm_100a, ...) run only on exactly that compute capability; 'f' targets (12.9+) run within the family (unverified semantics).",
    "no_kernel_image": "No matching SASS and no usable PTX: 'no kernel image is available for execution on the device' (error 209).",
    "source": src(["S39", "S18"])}))
open(OUT + "cuda_arch.toml", "w").write("\n".join(parts))
print("ok")

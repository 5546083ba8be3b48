import re, sys, yaml
sys.path.insert(0, "/tmp/kbgen")
from tomlw import table, val
from packaging.version import Version
REF = "/work/shared/reference/frameworks/pytorch.yaml"
OUT = "/work/main/src/gpuvet/kb/data/frameworks/torch.toml"
d = yaml.safe_load(open(REF))
minors = {m["minor"]: m for m in d["minors"]}
matrix = {r["torch"]: r for r in d["release_compatibility_matrix"]["rows"]}
DATES = {"2.11": "2026-03-18", "2.12": "2026-05-13", "2.13": "2026-07-08", "2.14": "2026-09-02", "2.15": "2026-10-28",
         "2.1": "2023-10", "2.2": "2024-01", "2.3": "2024-04", "2.4": "2024-07", "2.5": "2024-10", "2.6": "2025-01",
         "2.7": "2025-04", "2.8": "2025-07", "2.9": "2025-10", "2.10": "2026-01"}
MATRIX_SRC = "PyTorch RELEASE.md 'Release Compatibility Matrix' (translated mirror, search-index file 66643764700) https://github.com/pytorch/pytorch/blob/main/RELEASE.md"
PYPI = "PyPI: torch{v}/ (wheel metadata via pip install --dry-run --report; torch/version.py and arch flags in libtorch_python.so; cuobjdump --list-elf/--list-ptx)"
MATRIX_TI = "https://github.com/pytorch/test-infra/blob/61a77570/tools/scripts/generate_binary_build_matrix.py (release matrix history)"
PREV = "https://github.com/pytorch/pytorch.github.io/blob/04862e37/_get_started/previous-versions.md"

def cu_to_cuda(name):
    digits = name[2:]
    return digits[:-1] + "." + digits[-1]

def archs(s):
    s = s.split(" (")[0]
    sass, ptx = [], []
    for a in s.split(";"):
        a = a.strip()
        plus = a.endswith("+PTX")
        a = a.replace("+PTX", "")
        sm = a.replace(".", "")
        sass.append("sm_" + sm)
        if plus: ptx.append("compute_" + sm)
    key = lambda a: (int(re.sub(r'\D', '', a)[:-1] or 0), a)
    return sorted(sass, key=lambda a: int(re.match(r'sm_(\d+)', a).group(1))), ptx

def pin(pins, key):
    v = pins.get(key)
    if not v: return None
    v = v.split(";")[0].strip()
    return v.split("==")[1] if "==" in v else None

def matrix_pins(minor, cuda):
    row = matrix.get(minor)
    if not row: return None, None
    text = (row.get("stable_cuda") or "") + ", " + (row.get("experimental_cuda") or "")
    m = re.search(r"CUDA %s \(CUDNN ([\d.]+)\)(?: \(NCCL ([\d.]+)\))?" % re.escape(cuda), text)
    if m: return m.group(1), m.group(2)
    return None, None

scanned = {}
for r in d["releases"]:
    b = r["pypi_default_linux_x86_64"]["build"]
    if isinstance(b, dict):
        scanned.setdefault(".".join(r["version"].split(".")[:2]), b)

parts = ['''# PyTorch releases 1.12 -> 2.15 (Linux x86_64). Encoded from shared/reference/frameworks/pytorch.yaml.
# default_variant = what plain `pip install torch==X` gives on Linux x86_64 (PyPI). sass = the arch list compiled in
# (torch.cuda.get_arch_list()); extra sass_cubins_partial = arch-specific cubins with only a few kernels (cuobjdump).
# PyPI wheels carry no PTX. Fields from secondary sources are listed in the record's `unverified`.

[framework]
name = "torch"
display = "PyTorch"
distributions = ["torch"]
index_url = "https://download.pytorch.org/whl"
source = "https://pytorch.org/get-started/previous-versions/"
''']
for r in reversed(d["releases"]):
    v = r["version"]; minor = ".".join(v.split(".")[:2])
    p = r["pypi_default_linux_x86_64"]; pins = p.get("requires_dist_cuda_pins") or {}
    b = p["build"]; inherited = False
    if not isinstance(b, dict):
        b = scanned[minor]; inherited = True
    default = b["local_version"].split("+")[1]
    pys = [x for x in r["python"]["cpython_wheels_on_pypi_linux_x86_64"] if not x.endswith("t")]
    pys.sort(key=Version)
    hi = pys[-1].split(".")
    rel = {"version": v}
    unv = []
    if v.endswith(".0") and minor in DATES:
        rel["released"] = DATES[minor]; unv.append("released")
    rel["python"] = ">=%s,<%s.%d" % (pys[0], hi[0], int(hi[1]) + 1)
    rel["default_variant"] = default
    comp = {}
    if r.get("torchvision"): comp["torchvision"] = str(r["torchvision"][-1]).split(" ")[0] if len(r["torchvision"]) > 1 and "declares" in str(r["torchvision"][0]) else str(r["torchvision"][0]).split(" ")[0]
    if r.get("torchaudio"): comp["torchaudio"] = str(r["torchaudio"][0]).split(" ")[0]
    rel["companions"] = comp
    if any("declares" in str(x) for x in (r.get("torchvision") or []) + (r.get("torchaudio") or [])):
        rel["companions_note"] = "Some companions declare only torch>=X (no pin to this minor); the newest such release is listed."
    rel["glibc_min"] = "2.28" if Version(v) >= Version("2.7") else "2.17"
    rel["manylinux_tag"] = p.get("manylinux_tag")
    if p.get("requires_dist_cuda_pins", {}).get("triton"):
        rel["triton"] = p["requires_dist_cuda_pins"]["triton"].split(";")[0].strip()
    if unv: rel["unverified"] = unv
    rel["source"] = PYPI.format(v=v) + "; glibc floor: max GLIBC_ symbol in the wheel (shared/reference/frameworks/evidence/glibc.txt)"
    out = [table("[[release]]", rel)]
    # default variant
    cuda = b.get("torch.version.cuda") or cu_to_cuda(default)
    sass = b["arch_flags_string"].split()
    var = {"name": default, "cuda": cuda, "cudnn": pin(pins, "cudnn"), "nccl": pin(pins, "nccl"), "sass": sass, "ptx": [],
           "index_url": "PyPI (pip's default index)",
           "install": "pip install torch==%s" % v}
    s = p.get("sass_ptx_from_cuobjdump")
    if isinstance(s, dict) and s.get("sass_cubins_by_arch (arch(count))"):
        cubins = [re.sub(r"\(\d+\)", "", x) for x in s["sass_cubins_by_arch (arch(count))"].split()]
        extra = [c for c in cubins if c not in sass]
        if extra: var["sass_cubins_partial"] = extra
    if v.startswith("1.12"):
        var["note"] = "The 1.12 wheels bundle CUDA 10.2, cuDNN and NCCL inside the wheel (no nvidia-* dependencies)."
    if inherited:
        var["note"] = "Arch list from the scanned wheel of the same minor (%s); pins read from this release's metadata." % b["local_version"].split("+")[0]
    var["source"] = PYPI.format(v=v)
    out.append(table("[[release.variant]]", var, "  "))
    m = minors.get(minor) or {}
    vlist = list(m.get("cuda_variants") or [])
    alt_arch = m.get("arch_lists_by_variant") or {}
    fork = (m.get("arch_lists_non_default_variants_unverified") or {}).get("lists") or {}
    for name in vlist:
        if name == default: continue
        cu = cu_to_cuda(name)
        var = {"name": name, "cuda": cu}
        unv = []
        cudnn, nccl = matrix_pins(minor, cu)
        if cudnn: var["cudnn"] = cudnn; unv.append("cudnn")
        if nccl: var["nccl"] = nccl; unv.append("nccl")
        if name in alt_arch:
            var["sass"], var["ptx"] = archs(alt_arch[name])
            if m.get("arch_unverified"): unv += ["sass", "ptx"]
        else:
            key = cu if cu in fork else ("13.0/13.2" if cu in ("13.0", "13.2") and "13.0/13.2" in fork else None)
            if key:
                var["sass"], var["ptx"] = archs(fork[key]); unv += ["sass", "ptx"]
        url = "https://download.pytorch.org/whl/" + name
        var["index_url"] = url
        if Version(v) < Version("2.0"):
            var["install"] = "pip install torch==%s+%s --extra-index-url %s" % (v, name, url)
        else:
            var["install"] = "pip install torch==%s --index-url %s" % (v, url)
        if unv: var["unverified"] = unv
        srcs = [PREV if Version(v) < Version("2.1") else MATRIX_TI]
        if name in alt_arch: srcs.append(m.get("arch_source", "").split(" (")[0])
        elif "sass" in var: srcs.append("https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh (TORCH_CUDA_ARCH_LIST per CUDA version, read from a copy of this file newer than the release, so the arch lists stay unverified)")
        if cudnn: srcs.append(MATRIX_SRC)
        var["source"] = "; ".join(s for s in srcs if s)
        out.append(table("[[release.variant]]", var, "  "))
    # cpu
    url = "https://download.pytorch.org/whl/cpu"
    var = {"name": "cpu", "sass": [], "ptx": [], "index_url": url,
           "install": ("pip install torch==%s+cpu --extra-index-url %s" % (v, url)) if Version(v) < Version("2.0") else ("pip install torch==%s --index-url %s" % (v, url))}
    if not vlist:
        var["unverified"] = ["name"]
        var["note"] = "The variant list of this release is not in a stored source; a cpu build has shipped for every release so far."
    var["source"] = (PREV if Version(v) < Version("2.1") else MATRIX_TI) if vlist else "https://download.pytorch.org/whl/cpu"
    out.append(table("[[release.variant]]", var, "  "))
    for name in m.get("rocm_variants") or []:
        url = "https://download.pytorch.org/whl/" + name
        var = {"name": name, "rocm": name[4:], "index_url": url,
               "install": ("pip install torch==%s+%s --extra-index-url %s" % (v, name, url)) if Version(v) < Version("2.0") else ("pip install torch==%s --index-url %s" % (v, url)),
               "source": PREV if Version(v) < Version("2.1") else MATRIX_TI}
        out.append(table("[[release.variant]]", var, "  "))
    parts.append("\n".join(out))
import os
os.makedirs(os.path.dirname(OUT), exist_ok=True)
open(OUT, "w").write("\n".join(parts))
print("ok")

import sys; sys.path.insert(0, '/tmp/kbgen')
from common import *
d = load('llm_stack.yaml')
pt = load('pytorch.yaml')
TORCH_CUDA = {}
for r in pt['releases']:
    b = r['pypi_default_linux_x86_64']
    b = b.get('build') if isinstance(b, dict) else None
    if isinstance(b, dict): TORCH_CUDA[r['version']] = b['torch.version.cuda']
def torch_pin(specs):
    for s in specs:
        s = s.replace(' ', '').split(';')[0]
        if s.startswith('torch=='): return s[len('torch'):]
    return None
def cu(c): return 'cu' + c.replace('.', '')
FD = '/work/main/src/gpuvet/kb/data/frameworks/'

# ---------------- vLLM
v = d['vllm']; out = []; W = out.append
W('''# vLLM: one PyPI wheel per release (cp38-abi3 manylinux), which pins one exact torch; that torch's PyPI default
# build fixes the CUDA flavour of the whole stack. Releases 0.5.5 -> 0.33.0 (every minor; 0.21.0 does not exist).
# Facts from /work/shared/reference/frameworks/llm_stack.yaml (PyPI metadata + cuobjdump of the wheel kernels).
#
# Optional keys used in this file:
#   release.requires                pinned dependencies (torch, xformers) from the wheel's Requires-Dist
#   release.min_compute_capability  lowest GPU compute capability with kernels in the PyPI wheel: 7.0 up to 0.17.0
#                                   (docs + SASS scans), 7.5 from 0.20.0 (SASS scans: lowest sm_75, no PTX below 8.0);
#                                   left out for 0.18.0-0.19.1 (not scanned)
#   release.features                per-feature compute-capability floors inside vLLM (its FlashAttention 2/3 kernels)
#   release.notes                   one-line facts
#   variant.cuda_from               "torch": the CUDA version is that of the pinned torch's PyPI default build
# released dates omitted (not collected).

[framework]
name = "vllm"
display = "vLLM"
distributions = ["vllm"]
source = "https://docs.vllm.ai/en/latest/getting_started/installation/gpu/ ; PyPI: vllm"
verify = "python -c \\"import vllm; print(vllm.__version__)\\""
''')
for r in sorted(v['releases'], key=lambda r: vkey(r['version']), reverse=True):
    ver = r['version']; V = vkey(ver)
    tp = torch_pin(r['torch']); tv = tp[2:]
    cuda = TORCH_CUDA[tv]
    W('[[release]]'); W(kv('version', ver)); W(kv('python', r['requires_python'].replace(' ', '')))
    W(kv('default_variant', cu(cuda)))
    req = {'torch': tp}
    xp = torch_pin([x.replace('xformers', 'torch', 1) for x in (r.get('xformers') or [])])
    if xp: req['xformers'] = xp
    W(kv('requires', req)); W('companions = {}')
    W(kv('os', ['linux']))
    scanned = r.get('wheel_kernel_scan')
    if V <= vkey('0.17.0'): W('min_compute_capability = "7.0"')
    elif V >= vkey('0.20.0'): W('min_compute_capability = "7.5"')
    if V >= vkey('0.8.5'):
        W('features = { flash_attention_2 = "8.0", flash_attention_3 = "9.0" }')
    notes = ['installing vllm replaces torch with torch%s from PyPI (CUDA %s build)' % (tp, cuda)]
    if V >= vkey('0.20.0'): notes.append('V100 (sm_70) no longer has kernels in the PyPI wheel')
    if vkey('0.18.0') <= V < vkey('0.20.0'): notes.append('lowest compute capability not scanned for this release')
    if V <= vkey('0.6.1'): notes.append('+cu118 wheels were published on GitHub releases')
    W(kv('notes', '; '.join(notes)))
    srcs = ['PyPI: vllm%s/ (Requires-Python, Requires-Dist; pip --dry-run --report 2026-11-29)' % ver]
    if scanned: srcs.append('cuobjdump 13.5 --list-elf on the %s wheel kernels (libcudart.so.%s)' % (ver, scanned['links_libcudart_major'][0]))
    if V <= vkey('0.5.5'): srcs.append('https://docs.vllm.ai/en/v0.5.0/_sources/getting_started/installation.rst (compute capability 7.0+)')
    elif V <= vkey('0.6.3'): srcs.append('https://docs.vllm.ai/en/v0.6.1.post2/_sources/getting_started/installation.rst (compute capability 7.0+)')
    elif V <= vkey('0.17.0'): srcs.append('https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/ (compute capability 7.0+)')
    else: srcs.append('https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/gpu.cuda.inc.md (compute capability 7.5+)')
    W(kv('source', ' ; '.join(srcs)))
    W('  [[release.variant]]'); W('  ' + kv('name', cu(cuda))); W('  ' + kv('cuda', cuda)); W('  cuda_from = "torch"')
    W('  ' + kv('install', 'pip install vllm==%s' % ver))
    W('  ' + kv('source', 'PyPI: vllm%s/ (torch%s) ; PyPI: torch%s/ (PyPI default build: CUDA %s, read from torch/version.py in the wheel)' % (ver, tp, tv, cuda)))
    W('')
open(FD + 'vllm.toml', 'w').write('\n'.join(out))

# ---------------- xformers
x = d['xformers']; out = []; W = out.append
W('''# xFormers: every wheel up to 0.0.34 pins one exact torch (==); 0.0.35 is a py39-none wheel needing torch>=2.10.
# Releases 0.0.20 -> 0.0.35 from PyPI metadata (/work/shared/reference/frameworks/llm_stack.yaml).
#
# Optional keys used in this file:
#   release.requires     pinned dependencies from Requires-Dist (torch)
#   release.notes        one-line facts
#   variant.cuda_from    "torch": the PyPI wheel is built for the pinned torch's PyPI default CUDA (its CUDA version
#                        is that torch build's; not recorded separately here)
# python is the wheel's Requires-Python (the cp-specific wheels up to 0.0.30 cover fewer versions: not collected).
# released dates, CUDA versions and compiled archs of the xformers wheels were not collected: left out.

[framework]
name = "xformers"
display = "xFormers"
distributions = ["xformers"]
source = "PyPI: xformers ; https://github.com/facebookresearch/xformers"
verify = "python -m xformers.info"
''')
for r in sorted(x['releases'], key=lambda r: vkey(r['version']), reverse=True):
    ver = r['version']
    t = r['torch'][0].replace(' ', '')[len('torch'):]
    W('[[release]]'); W(kv('version', ver)); W(kv('python', r['requires_python']))
    W('default_variant = "pypi"'); W(kv('requires', {'torch': t})); W('companions = {}')
    W(kv('notes', 'installing xformers==%s makes pip install torch%s' % (ver, t) if t.startswith('==') else 'no exact torch pin from 0.0.35 (torch%s)' % t))
    W(kv('source', 'PyPI: xformers%s/ (Requires-Dist torch%s; wheel %s; pip --dry-run --report 2026-11-29)' % (ver, t, r['wheel'])))
    W('  [[release.variant]]'); W('  name = "pypi"'); W('  cuda_from = "torch"')
    W('  ' + kv('install', 'pip install xformers==%s' % ver))
    W('  ' + kv('source', 'PyPI: xformers%s/' % ver))
    W('')
open(FD + 'xformers.toml', 'w').write('\n'.join(out))

# ---------------- SGLang
s = d['sglang']; out = []; W = out.append
W('''# SGLang: sampled releases 0.4.0 -> 0.5.23 from PyPI metadata (/work/shared/reference/frameworks/llm_stack.yaml).
# Torch is pinned exactly from 0.4.6 (in the [srt] extra up to 0.5.2, in the base requirements from 0.5.4); that torch's
# PyPI default build fixes the CUDA flavour. A version not listed here is unknown, not unsupported.
#
# Optional keys used in this file:
#   release.requires     pinned dependencies (torch, flashinfer-python, sgl-kernel/sglang-kernel) from Requires-Dist
#   release.notes        one-line facts
#   variant.cuda_from    "torch": the CUDA version is that of the pinned torch's PyPI default build
# Minimum GPU / compute capability of SGLang is not verified in the reference: left out (unknown).

[framework]
name = "sglang"
display = "SGLang"
distributions = ["sglang"]
source = "PyPI: sglang ; https://github.com/sgl-project/sglang"
''')
for r in sorted(s['releases'], key=lambda r: vkey(r['version']), reverse=True):
    ver = r['version']; V = vkey(ver)
    tp = torch_pin(r['torch'])
    W('[[release]]'); W(kv('version', ver)); W(kv('python', r['requires_python']))
    extra = '' if V >= vkey('0.5.4') else '[srt]'
    req = {}
    if tp: req['torch'] = tp
    for key in ('flashinfer', 'sgl_kernel'):
        for spec in r.get(key) or []:
            sp = spec.replace(' ', '').split(';')[0]
            if ('extra' not in spec or 'extra=="srt"' in spec.replace(' ', '')) and '==' in sp:
                name, pin = sp.split('==')
                req[name.split('[')[0].replace('_', '-').lower()] = '==' + pin
    cuda = TORCH_CUDA.get(tp[2:]) if tp else None
    W(kv('default_variant', cu(cuda) if cuda else 'pypi'))
    W(kv('requires', req)); W('companions = {}')
    notes = []
    if tp: notes.append('installing sglang%s==%s makes pip install torch%s' % (extra, ver, tp))
    else: notes.append('torch is not pinned in this release')
    if V >= vkey('0.5.12'): notes.append('ships cp312 manylinux_2_34 wheels')
    W(kv('notes', '; '.join(notes)))
    W(kv('source', 'PyPI: sglang%s/ (Requires-Python, Requires-Dist; pip --dry-run --report 2026-11-29)' % ver))
    W('  [[release.variant]]'); W('  ' + kv('name', cu(cuda) if cuda else 'pypi'))
    if cuda: W('  ' + kv('cuda', cuda)); W('  cuda_from = "torch"')
    W('  ' + kv('install', 'pip install "sglang%s==%s"' % (extra, ver)))
    W('  ' + kv('source', 'PyPI: sglang%s/' % ver + (' ; PyPI: torch%s/ (PyPI default build: CUDA %s)' % (tp[2:], cuda) if cuda else '')))
    W('')
open(FD + 'sglang.toml', 'w').write('\n'.join(out))

# ---------------- bitsandbytes
b = d['bitsandbytes']; out = []; W = out.append
SRC_DOC = 'https://huggingface.co/docs/bitsandbytes/main/en/installation (bitsandbytes-foundation/bitsandbytes docs/source/installation.mdx @95f9af30 and tags 0.43.0..0.50.0)'
W('''# bitsandbytes: one py3-none wheel per release bundling libbitsandbytes_cudaXYZ.so for several CUDA versions; the one
# matching torch.version.cuda is loaded (recent releases fall back within the same CUDA major, never across majors;
# BNB_CUDA_VERSION=XYZ overrides). Releases 0.43.0 -> 0.50.2 (/work/shared/reference/frameworks/llm_stack.yaml).
#
# Optional keys used in this file:
#   release.requires                torch requirement from Requires-Dist
#   release.min_compute_capability  overall floor of the CUDA build (docs: 5.0+ for 0.46.0-0.47.0, 6.0+ from 0.48.0);
#                                   left out before 0.46.0 (not collected)
#   release.features                compute-capability floors per feature: llm_int8 (LLM.int8() matmul) 7.5,
#                                   optimizers_8bit 6.0, quant_4bit (NF4/FP4) 6.0 (docs table, from 0.46.0)
#   release.cuda_libs               CUDA versions with a bundled library in the wheel (file listing; only where read)
#   release.glibc_min               manylinux_2_24 wheels
#   variant.cuda_from               "torch": the library is chosen by the installed torch's CUDA version
# released dates omitted (not collected).

[framework]
name = "bitsandbytes"
display = "bitsandbytes"
distributions = ["bitsandbytes"]
source = "%s ; PyPI: bitsandbytes"
verify = "python -m bitsandbytes"
''' % SRC_DOC)
for r in sorted(b['releases'], key=lambda r: vkey(r['version']), reverse=True):
    ver = r['version']; V = vkey(ver)
    W('[[release]]'); W(kv('version', ver))
    W(kv('python', r['requires_python'] or ''))  # '' = Requires-Python not declared (any)
    W('default_variant = "cuda"')
    t = r['torch'][0].replace(' ', '')[len('torch'):]
    W(kv('requires', {'torch': t} if t else {}))
    W('companions = {}'); W('glibc_min = "2.24"')
    if V >= vkey('0.48.0'): W('min_compute_capability = "6.0"')
    elif V >= vkey('0.46.0'): W('min_compute_capability = "5.0"')
    if V >= vkey('0.46.0'):
        W('features = { llm_int8 = "7.5", optimizers_8bit = "6.0", quant_4bit = "6.0" }')
    libs = [l[len('libbitsandbytes_cuda'):-3] for l in r.get('bundled_native_libs') or [] if l.startswith('libbitsandbytes_cuda') and 'nocublaslt' not in l]
    if libs:
        W(kv('cuda_libs', [l[:-1] + '.' + l[-1] for l in libs]))
    W(kv('notes', 'a torch whose CUDA version has no bundled library fails to load the CUDA backend; set BNB_CUDA_VERSION or upgrade bitsandbytes'))
    srcs = ['PyPI: bitsandbytes%s/ (Requires-Dist; wheel %s)' % (ver, r['wheel'])]
    if V >= vkey('0.46.0'): srcs.append(SRC_DOC + ' (compute capability table and build targets)')
    W(kv('source', ' ; '.join(srcs)))
    W('  [[release.variant]]'); W('  name = "cuda"'); W('  cuda_from = "torch"')
    W('  ' + kv('install', 'pip install bitsandbytes==%s' % ver))
    W('  ' + kv('source', 'https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/cextension.py (library chosen from torch.version.cuda) ; PyPI: bitsandbytes%s/' % ver))
    W('')
open(FD + 'bitsandbytes.toml', 'w').write('\n'.join(out))

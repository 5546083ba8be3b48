import sys; sys.path.insert(0, '/tmp/kbgen')
from common import *
d = load('jax.yaml')
SRC_DOC = 'https://docs.jax.dev/en/latest/installation.html (jax-ml/jax docs/installation.md @cec06d11 and its git history)'
SRC_CL = 'https://github.com/jax-ml/jax/blob/main/CHANGELOG.md (@cec06d11)'
def src_pypi(v, plugin):
    return 'PyPI: jax%s/ and https://PyPI/project/%s/%s/ (Requires-Python, extras, with-cuda pins; pip --dry-run --report 2026-11-29)' % (v, plugin, v)
out = []; W = out.append
W('''# JAX on NVIDIA GPUs: jax + jaxlib + the CUDA plugin (jax-cuda12-plugin / jax-cuda13-plugin, pulled by the
# jax[cuda12] / jax[cuda13] extras). Releases 0.4.23 -> 0.12.0.1 as sampled from PyPI (not every patch release:
# a version missing here is unknown, not unsupported). Facts from /work/shared/reference/frameworks/jax.yaml.
#
# Optional keys used in this file:
#   release.numpy                 the numpy specifier of jax's Requires-Dist (numpy>=2.0 from 0.7.2)
#   release.notes                 one-line facts worth showing
#   variant.min_driver            minimum NVIDIA driver the JAX docs state for this wheel family
#   variant.min_compute_capability  lowest GPU compute capability the wheels support (docs: SM 5.2 for CUDA 12, 7.5 for CUDA 13)
#   variant.cuda_min              oldest CUDA the plugin accepts when CUDA libraries come from elsewhere ("supports" column)
#   variant.cudnn_range           the cuDNN requirement of the plugin's with-cuda extra (PEP 440)
#   variant.bundles_cuda          true: the extra pulls NVIDIA's CUDA/cuDNN/NCCL pip wheels (no system toolkit needed)
# variant.cuda is the CUDA version the wheel was built with (docs table / CHANGELOG).
# released dates are omitted (not collected). sass/ptx lists of jaxlib wheels were not collected: left out.

[framework]
name = "jax"
display = "JAX"
distributions = ["jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt"]
source = "%s ; %s"
verify = "python -c \\"import jax; print(jax.devices())\\""
''' % (SRC_DOC, SRC_CL))

def built_with(V):
    if V >= vkey('0.7.1'): return '12.9'
    if V >= vkey('0.6.0'): return '12.8'
    return '12.3'

rels = sorted(d['pypi_releases']['releases'], key=lambda r: vkey(r['version']), reverse=True)
for r in rels:
    v = r['version']; V = vkey(v)
    wheels = r['jaxlib_cpython_wheels_linux_x86_64']
    lo = r['jax_requires_python'].replace('>=', '')
    hi = max(wheels, key=lambda s: tuple(map(int, s.split('.'))))
    W('[[release]]')
    W(kv('version', v))
    W(kv('python', pyrange([lo, hi])))
    W(kv('default_variant', 'cpu'))
    W('companions = { jaxlib = "==%s" }' % v if V >= vkey('0.4.31') and False else 'companions = {}')
    W(kv('glibc_min', '2.27' if V >= vkey('0.7.1') else '2.17'))
    nps = [x.replace(' ', '') for x in r['jax_base_requires'] if x.replace(' ', '').startswith('numpy') and ';' not in x]
    if nps: W(kv('numpy', nps[0][len('numpy'):]))
    notes = []
    if V < vkey('0.4.26'): notes.append('CUDA 11.8 wheels still published (dropped in jaxlib 0.4.26)')
    if V >= vkey('0.4.30'): notes.append('plugin-only CUDA install (monolithic CUDA jaxlib dropped in 0.4.30)')
    if V >= vkey('0.7.2'): notes.append('requires numpy >= 2.0')
    W(kv('notes', '; '.join(notes)))
    W(kv('source', src_pypi(v, 'jax-cuda12-plugin') + ' ; ' + SRC_DOC))
    # CPU: plain pip install jax gives the CPU jaxlib
    W('  [[release.variant]]')
    W('  name = "cpu"')
    W('  ' + kv('install', 'pip install jax==%s' % v))
    W('  ' + kv('source', SRC_DOC + ' (pip install -U jax: CPU-only)'))
    p12 = r.get('jax_cuda12_plugin')
    if isinstance(p12, dict):
        cud = p12.get('with_cuda_extra_cudnn')
        W('  [[release.variant]]')
        W('  name = "cuda12"')
        W('  ' + kv('cuda', '12.2' if v == '0.4.23' else built_with(V)))
        W('  os = ["linux"]')
        if cud:
            rng = cud.replace('nvidia-cudnn-cu12', '').replace(' ', '')
            lo_c = [p[2:] for p in rng.split(',') if p.startswith('>=')][0]
            W('  ' + kv('cudnn', '.'.join(lo_c.split('.')[:2])))
            W('  ' + kv('cudnn_range', rng))
            W('  ' + kv('bundles_cuda', True))
            nccl = [x for x in p12.get('with_cuda_extra_all') or [] if 'nccl' in x]
            if nccl: W('  ' + kv('nccl', '.'.join(nccl[0].split('>=')[1].split('.')[:2])))
        else:
            # 0.4.23/0.4.26: cuDNN came from jax's own cuda12 extra (nvidia-cudnn-cu12 >=8.9 / >=8.9.2.26,<9.0)
            W('  cudnn = "8.9"')
            W('  ' + kv('cudnn_range', '>=8.9' if v == '0.4.23' else '<9.0,>=8.9.2.26'))
            W('  ' + kv('bundles_cuda', True))
        W('  ' + kv('cuda_min', '12.1' if V >= vkey('0.4.26') else '12.2'))
        W('  min_driver = "525.60.13"')
        W('  min_compute_capability = "5.2"')
        W('  ' + kv('install', 'pip install "jax[cuda12]==%s"' % v))
        W('  ' + kv('source', src_pypi(v, 'jax-cuda12-plugin') + ' ; ' + SRC_DOC + ' ; ' + SRC_CL))
    if v == '0.4.23':
        W('  [[release.variant]]')
        W('  name = "cuda11"')
        W('  cuda = "11.8"')
        W('  cudnn = "8.6"')
        W('  os = ["linux"]')
        W('  min_driver = "450.80.02"')
        W('  min_compute_capability = "5.2"')
        W('  index_url = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"')
        W('  ' + kv('install', 'pip install "jax[cuda11_pip]==0.4.23" -f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html'))
        W('  ' + kv('source', src_pypi(v, 'jax') + ' (extra cuda11_pip: jaxlib==0.4.23+cuda11.cudnn86, nvidia-cudnn-cu11>=8.8) ; ' + SRC_DOC + ' (2023-09: CUDA 11 + cuDNN 8.6 wheels, driver >= 450.80.02, SM >= 5.2) ; ' + SRC_CL + ' (jaxlib 0.4.26 dropped CUDA 11.8)'))
    p13 = r.get('jax_cuda13_plugin')
    if isinstance(p13, dict):
        rng = p13['with_cuda_extra_cudnn'].replace('nvidia-cudnn-cu13', '').replace(' ', '')
        W('  [[release.variant]]')
        W('  name = "cuda13"')
        W('  cuda = "13.0"')
        W('  os = ["linux"]')
        W('  cudnn = "9.12"')
        W('  ' + kv('cudnn_range', rng))
        W('  ' + kv('bundles_cuda', True))
        nccl = [x for x in p13.get('with_cuda_extra_all') or [] if 'nccl' in x]
        if nccl: W('  ' + kv('nccl', '.'.join(nccl[0].split('>=')[1].split('.')[:2])))
        W('  cuda_min = "13.0"')
        W('  min_driver = "580"')
        W('  min_compute_capability = "7.5"')
        W('  ' + kv('install', 'pip install "jax[cuda13]==%s"' % v))
        W('  ' + kv('source', src_pypi(v, 'jax-cuda13-plugin') + ' ; ' + SRC_DOC + ' (CUDA 13 wheels: SM >= 7.5, driver >= 580)'))
    W('')
open('/work/main/src/gpuvet/kb/data/frameworks/jax.toml', 'w').write('\n'.join(out))

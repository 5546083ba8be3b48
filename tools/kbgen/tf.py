import sys; sys.path.insert(0, '/tmp/kbgen')
from common import *
d = load('tensorflow.yaml')
table = {}
for r in d['tested_build_configurations_linux_gpu']['rows']:
    table['.'.join(r['version'].split('.')[:2])] = r
SRC_TABLE = 'https://www.tensorflow.org/install/source#gpu (tensorflow/docs site/en/install/source.md @7c365021, tested build configurations, Linux GPU)'
SRC_PYPI = 'PyPI: tensorflow{v}/ (Requires-Python, Requires-Dist and Linux x86_64 wheels, read with pip --dry-run --report 2026-11-29)'
SRC_BAZELRC = 'https://github.com/tensorflow/tensorflow/blob/master/.bazelrc (HERMETIC_CUDA_COMPUTE_CAPABILITIES / cuda12_version "sm_60,sm_70,sm_80,sm_89,compute_90", "the same as the official TensorFlow builds"; confirmed for v2.18.0 by orfeotoolbox otbtf build config, unchanged at later heads for CUDA 12.5.1 builds)'
out = []
W = out.append
W('''# TensorFlow: official Linux x86_64 pip builds, 2.4 -> newest (2.21.0 on 2026-11-29).
# Facts from /work/shared/reference/frameworks/tensorflow.yaml, re-read at the sources named per record.
#
# Optional keys used in this file (beyond the shared schema in docs/KB.md):
#   release.min_compute_capability  lowest GPU compute capability the official wheels support ("6.0")
#   release.cpu_isa                 x86 instruction-set extensions the wheels need (TensorFlow is built with -mavx)
#   release.windows_gpu             whether native Windows gets a GPU build of this release (last: 2.10)
#   release.numpy / release.protobuf  the Requires-Dist specifier of the Linux wheel (PEP 440)
#   release.notes                   one-line facts a reader needs (what changed, what to watch)
#   variant.system_cuda             true: the wheel loads a system CUDA toolkit + cuDNN (installed separately);
#                                   false: the install command pulls NVIDIA's pip wheels ([and-cuda] extra)
#   variant.pins                    exact pip pins of the [and-cuda] extra (nvidia-cudnn-cu12 ...), for conflict checks
# released dates are omitted: the reference did not collect them ("unknown" rather than a guess).

[framework]
name = "tensorflow"
display = "TensorFlow"
distributions = ["tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly"]
source = "https://www.tensorflow.org/install/pip ; https://www.tensorflow.org/install/source#gpu"
verify = "python -c \\"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\\""
''')
rels = [r for r in d['pypi_metadata']['releases'] if vkey(r['version']) >= vkey('2.4.0')]
rels.sort(key=lambda r: vkey(r['version']), reverse=True)
for r in rels:
    v = r['version']; mm = '.'.join(v.split('.')[:2]); t = table[mm]
    V = vkey(v)
    wheels = r['cpython_wheels_on_pypi_linux_x86_64']
    tlo, thi = t['python'].split('-')
    # the doc table is the stated range; the wheel list (harvested from 3.7 up) narrows a patch release that dropped a Python
    lo = min(wheels, key=lambda s: tuple(map(int, s.split('.'))))
    if tuple(map(int, lo.split('.'))) <= (3, 7) or tuple(map(int, lo.split('.'))) < tuple(map(int, tlo.split('.'))):
        lo = tlo
    hi = max(wheels + [thi], key=lambda s: tuple(map(int, s.split('.'))))
    py = pyrange([lo, hi])
    W('[[release]]')
    W(kv('version', v))
    W(kv('python', py))
    cuda_major = t['cuda'].split('.')[0]
    variant = 'cuda' + cuda_major
    W(kv('default_variant', variant))
    W('companions = {}')
    W(kv('glibc_min', '2.27' if V >= vkey('2.21') else ('2.17' if V >= vkey('2.9') else '2.12')))
    if V >= vkey('2.17'):
        W(kv('min_compute_capability', '6.0'))
    elif cuda_major == '11':
        W(kv('min_compute_capability', '3.5'))
    W(kv('cpu_isa', ['avx']))
    W(kv('windows_gpu', V < vkey('2.11')))
    np_ = [x.replace('numpy', '', 1).strip() for x in r['numpy']]
    # 2.16/2.17 split numpy by Python version; the shared upper bound is what conflict checks need
    W(kv('numpy', np_[0].split(';')[0].strip().replace(' ', '')))
    W(kv('protobuf', r['protobuf'][0].replace('protobuf', '', 1).strip().replace(' ', '')))
    notes = []
    if V < vkey('2.11'): notes.append('native Windows GPU builds exist up to 2.10 (CUDA %s, cuDNN %s)' % (t['cuda'], t['cudnn']))
    else: notes.append('no native Windows GPU build: use WSL2 or tensorflow-cpu + DirectML plugin')
    if mm == '2.14' and v == '2.14.0': notes.append('metadata allows numpy 2 (no upper bound) but the build targets numpy 1: pin numpy<2')
    if mm == '2.17': notes.append('last release with TensorRT; compute capability 5.x removed, 8.9 added')
    if mm == '2.18': notes.append('first release built with NumPy 2.0; TensorRT disabled; hermetic CUDA')
    if v == '2.15.0': notes.append('[and-cuda] also pinned tensorrt 8.6.1 (removed in 2.15.0.post1)')
    if mm in ('2.15', '2.16'): notes.append('lowest supported compute capability not published for this release (CUDA 12 builds cannot target Kepler)')
    W(kv('notes', '; '.join(notes)))
    srcs = [SRC_TABLE, SRC_PYPI.format(v=v)]
    if mm in ('2.17', '2.18'): srcs.append('https://github.com/tensorflow/tensorflow/releases/tag/v%s.0' % mm)
    W(kv('source', ' ; '.join(srcs)))
    W('  [[release.variant]]')
    W('  ' + kv('name', variant))
    W('  ' + kv('cuda', t['cuda']))
    W('  ' + kv('cudnn', t['cudnn']))
    pins = {}
    for p in r.get('and_cuda_extra') or []:
        p = p.replace(' ', '')
        for op in ('==', '<', '>='):
            if op in p:
                name = p.split(op)[0] if op != '<' else p.split('<')[0]
                break
        pins[name] = p[len(name):]
    nccl = pins.get('nvidia-nccl-cu12') or pins.get('nvidia-nccl-cu11')
    if nccl and nccl.startswith('=='):
        W('  ' + kv('nccl', '.'.join(nccl[2:].split('.')[:2])))
    if mm in ('2.18', '2.19', '2.20', '2.21'):
        W('  ' + kv('sass', ['sm_60', 'sm_70', 'sm_80', 'sm_89']))
        W('  ' + kv('ptx', ['compute_90']))
    if pins:
        W('  ' + kv('system_cuda', False))
        W('  ' + kv('install', "pip install 'tensorflow[and-cuda]==%s'" % v))
        W('  ' + kv('pins', pins))
        W('  ' + kv('source', 'PyPI: tensorflow%s/ (Requires-Dist extra == "and-cuda") ; %s' % (v, SRC_TABLE) + (' ; ' + SRC_BAZELRC if mm in ('2.18','2.19','2.20','2.21') else '')))
    else:
        W('  ' + kv('system_cuda', True))
        W('  ' + kv('install', 'pip install tensorflow==%s  # needs CUDA %s and cuDNN %s installed on the system' % (v, t['cuda'], t['cudnn'])))
        W('  ' + kv('source', SRC_TABLE + ' ; https://www.tensorflow.org/install/pip'))
    W('')
open('/work/main/src/gpuvet/kb/data/frameworks/tensorflow.toml', 'w').write('\n'.join(out))

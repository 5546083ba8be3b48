"""The environment variables that decide how GPU software behaves, with secrets removed."""

import os

from gpuvet.probe import facts
from gpuvet.probe.redact import redact_env

# Exact names worth recording, and whole families by prefix.
_NAMES = frozenset([
    "PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
    "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE",
    "OMP_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE",
    "XLA_FLAGS", "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "TF_CPP_MIN_LOG_LEVEL", "TF_FORCE_GPU_ALLOW_GROWTH", "HF_ENDPOINT", "HF_HOME",
])
_PREFIXES = ("CUDA_", "CUDNN_", "NCCL_", "NVIDIA_", "PIP_", "TORCH_", "PYTORCH_", "UV_INDEX", "UV_EXTRA_INDEX")


def is_relevant(name):
    return name in _NAMES or name.startswith(_PREFIXES)


def collect(environ=None):
    environ = os.environ if environ is None else environ
    selected = dict((name, value) for name, value in environ.items() if is_relevant(name))
    return facts.found(dict(sorted(redact_env(selected).items())), "env")

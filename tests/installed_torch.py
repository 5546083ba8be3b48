"""What the torch installed beside the tests is, read from its own ``torch/version.py`` (where ``torch.__version__``
and ``torch.version.cuda`` come from) without importing torch. The suite runs with whichever build could be
installed: PyTorch's CPU index serves ``2.13.0+cpu`` (``cuda`` None), PyPI serves the CUDA build (``2.13.0`` in its
metadata, ``2.13.0+cu130`` in ``__version__``, ``cuda`` "13.0"). Tests of the live machine expect what this one is."""

from __future__ import annotations

import importlib.util
import os
import runpy
from typing import NamedTuple, Optional

import pytest


class TorchBuild(NamedTuple):
    version: str  # torch.__version__, local label included
    cuda: Optional[str]  # torch.version.cuda: None for a CPU build


def installed_torch() -> Optional[TorchBuild]:
    spec = importlib.util.find_spec("torch")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "version.py")
        if os.path.isfile(path):
            values = runpy.run_path(path)
            return TorchBuild(str(values["__version__"]), values.get("cuda"))
    return None


# For the tests that run torch itself (smoke): PyPI's torch 2.13.0 needs Python 3.10+, so on 3.8/3.9 scripts/test
# installs none.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="torch is not installed (torch 2.13.0 needs Python 3.10+)")

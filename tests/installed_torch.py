"""What the torch installed beside the tests is, read from its own ``torch/version.py`` (where ``torch.__version__``
and ``torch.version.cuda`` come from) without importing torch. The suite runs with whichever build could be
installed: PyTorch's CPU index serves ``2.13.0+cpu`` (``cuda`` None), PyPI serves the CUDA build (``2.13.0`` in its
metadata, ``2.13.0+cu130`` in ``__version__``, ``cuda`` "13.0"). Tests of the live machine expect what this one is."""

from __future__ import annotations

import importlib.util
import os
import runpy
from typing import NamedTuple, Optional


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

"""Every real captured output in tests/fixtures parses, is detected as its kind, and yields the driver, GPU count
and names its file name encodes (``<gpu>-<N>gpu_drv<driver>``)."""

import re
from pathlib import Path

import pytest

from gpuvet.errors import InputError
from gpuvet.ingest import detect_kind, parse
from gpuvet.snapshot import SnapshotView, validate_snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DIRECTORY_KIND = {
    "nvidia-smi": "nvidia-smi",
    "nvidia-smi-q": "nvidia-smi-q",
    "nvidia-smi-q-x": "nvidia-smi-xml",
    "nvidia-smi-query-gpu-csv": "nvidia-smi-csv",
    "nvidia-smi-topo-m": "nvidia-smi-topo",
    "nvidia-smi-L": "nvidia-smi-list",
    "nvcc-version": "nvcc",
    "torch-collect-env": "collect-env",
    "ds_report": "ds-report",
    "pip-freeze": "pip-freeze",
    "pip-list": "pip-list",
    "conda-list": "conda-list",
}
# Real outputs that are not what their directory's tool prints when it works: an error message.
NOT_OUTPUT = {"nvidia-smi-topo-m/rtx-2080-super-1gpu_drv591.86_windows.txt"}  # "ERROR: Option -m is missing its value"

# Highest CUDA each driver branch supports, as nvidia-smi prints it (NVIDIA CUDA Toolkit release notes, table 3;
# kb/data/cuda_driver.toml). Branches before R410 print no CUDA Version at all.
BRANCH_CUDA = {
    "410": "10.0", "418": "10.1", "436": "10.1", "440": "10.2", "450": "11.0", "455": "11.1", "460": "11.2",
    "470": "11.4", "510": "11.6", "515": "11.7", "525": "12.0", "535": "12.2", "536": "12.2", "550": "12.4",
    "555": "12.5", "560": "12.6", "565": "12.7", "570": "12.8", "575": "12.9", "590": "13.1", "591": "13.1",
    "595": "13.2", "610": "13.3",
}
NO_CUDA_LINE = {
    # cuda_version "Not Found" in the XML although R430 supports 10.1: reported as missing, never guessed
    "nvidia-smi-q-x/tesla-k80-4gpu_drv430.26_azure-out-of-order.xml",
}


def _cases():
    for directory, kind in DIRECTORY_KIND.items():
        for path in sorted((FIXTURES / directory).glob("*")):
            relative = "{}/{}".format(directory, path.name)
            yield pytest.param(kind, relative, id=relative)


def _expected_driver(file_name):
    match = re.search(r"_drv(\d{3}\.\d+(?:\.\d+)?)", file_name)
    return match.group(1) if match else None


def _expected_gpu_count(file_name):
    of = re.search(r"(\d+)of\d+gpu", file_name)
    if of:
        return int(of.group(1))
    if re.search(r"gpu\d+-of-\d+", file_name):
        return 1
    count = re.search(r"-(\d+)gpu", file_name)
    if count:
        return int(count.group(1))
    if "-mig-" in file_name or "_mig-" in file_name:
        return 1  # "h100-80gb-hbm3-mig-4inst": one GPU split into instances
    return None


@pytest.mark.parametrize("kind,relative", list(_cases()))
def test_fixture(kind, relative):
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    if relative in NOT_OUTPUT:
        with pytest.raises(InputError):
            parse(kind, text, relative)
        assert detect_kind(text) is None
        return
    assert detect_kind(text) == kind
    snapshot = validate_snapshot(parse(kind, text, relative), relative)
    view = SnapshotView(snapshot)
    name = Path(relative).name
    for section in ("driver", "host"):
        for fact in snapshot.get(section, {}).values():
            if fact["status"] == "found":
                assert fact["source"] == "pasted:" + kind
    driver = _expected_driver(name)
    if driver and kind not in ("nvidia-smi-list", "nvidia-smi-topo"):
        assert view.driver_version == driver
        branch = driver.split(".")[0]
        if relative in NO_CUDA_LINE or branch not in BRANCH_CUDA:
            assert view.driver_cuda_max is None
            assert kind in ("nvidia-smi-csv", "collect-env") or snapshot["driver"]["cuda_max"]["status"] == "missing"
        elif kind not in ("nvidia-smi-csv", "collect-env"):  # neither prints the driver's maximum CUDA
            assert view.driver_cuda_max == BRANCH_CUDA[branch]
    count = _expected_gpu_count(name)
    if count is not None:
        if kind == "nvidia-smi-topo":
            assert snapshot["topology"]["value"]["gpu_count"] == count
        elif "head10" not in name:
            assert len(view.gpus) == count
            assert [gpu["index"] for gpu in view.gpus] == list(range(count))
    for gpu in view.gpus:
        assert gpu["name"] is None or "N/A" not in gpu["name"]

"""The two tools that write release data from public files: tools/release_listing.py (PyPI's PEP 691 listing ->
tests/kb/pypi_releases.toml) and tools/prebuilt_wheels.py (flash-attn's publish.yml and setup.py at a tag ->
kb/data/prebuilt_wheels.toml). Their pure parts, on documents shaped as the real ones are."""

from __future__ import annotations

import datetime
import importlib.util
from pathlib import Path

import pytest

from gpuvet.tomlfile import loads_toml

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


listing = _tool("release_listing")
prebuilt = _tool("prebuilt_wheels")


def _file(name, day, yanked=False):
    return {"filename": name, "upload-time": f"{day}T10:00:00.000000Z", "yanked": yanked}


def test_a_release_is_dated_by_its_first_file_and_prereleases_and_yanked_files_are_left_out():
    project = {
        "versions": ["0.9.0", "1.0.0rc1", "1.0.0", "1.0.1", "1.1.0"],
        "files": [
            _file("pkg-0.9.0.tar.gz", "2023-12-30"),                       # before the window
            _file("pkg-1.0.0rc1-py3-none-any.whl", "2024-02-01"),          # a pre-release
            _file("pkg-1.0.0-cp311-cp311-manylinux1_x86_64.whl", "2024-03-05"),
            _file("pkg-1.0.0.tar.gz", "2024-03-04"),                       # the first file dates the release
            _file("pkg-1.0.1-py3-none-any.whl", "2024-04-01", yanked=True),  # only a yanked file
            _file("pkg-1.1.0-py3-none-any.whl", "2027-01-02"),             # after the window
        ],
    }
    got = listing.releases_in_window(project, datetime.date(2024, 1, 1), datetime.date(2026, 12, 31))
    assert got == [("1.0.0", "2024-03-04")]


def test_the_listing_renders_as_dated_toml_that_names_pypi():
    text = listing.render({"pkg": [("1.0.0", "2024-03-04")]}, "2026-12-05", "2024-01-01", "2026-12-31")
    document = loads_toml(text)
    assert document["source"].startswith("PyPI: ") and document["read_on"] == "2026-12-05"
    assert document["pkg"]["releases"] == [["1.0.0", "2024-03-04"]]


WORKFLOW_27 = """
jobs:
  build_wheels:
    strategy:
      matrix:
          python-version: ['3.9', '3.13']
          torch-version: ['2.5.1', '2.6.0.dev20241001']
          cuda-version: ['11.8.0', '12.3.2']
          cxx11_abi: ['FALSE', 'TRUE']
          exclude:
            - torch-version: '2.5.1'
              python-version: '3.13'
            - torch-version: '2.5.1'
              cuda-version: '11.8.0'
    steps:
      - run: |
          echo "WHEEL_CUDA_VERSION=$(echo ${{ matrix.cuda-version }} | awk -F \\\\. {'print $1'})" >> $GITHUB_ENV
          tmpname=cu${WHEEL_CUDA_VERSION}torch${MATRIX_TORCH_VERSION}cxx11abi${{ matrix.cxx11_abi }}
"""


def test_the_matrix_keeps_torch_dev_snapshots_apart_and_names_cuda_as_the_wheels_do():
    record = prebuilt.matrix(WORKFLOW_27)
    assert record["torch"] == ["2.5"] and record["torch_dev"] == {"2.6": "2.6.0.dev20241001"}
    assert record["cuda"] == {"11": "11.8.0", "12": "12.3.2"}
    assert record["exclude"] == [["2.5", "python", "3.13"], ["2.5", "cuda", "11"]]


def test_a_workflow_naming_wheels_another_way_is_refused():
    with pytest.raises(ValueError):
        prebuilt.matrix(WORKFLOW_27.replace("tmpname=cu${WHEEL_CUDA_VERSION}", "tmpname=${OTHER}"))


SETUP_ONE_LINE = '''
def get_wheel_url():
    torch_cuda_version = parse(torch.version.cuda)
    torch_cuda_version = parse("11.8") if torch_cuda_version.major == 11 else parse("12.3")
    cuda_version = f"{torch_cuda_version.major}{torch_cuda_version.minor}"
    wheel_url = BASE_WHEEL_URL.format()
'''
SETUP_IF_ELIF = '''
def get_wheel_url():
    torch_cuda_version = parse(torch.version.cuda)
    if torch_cuda_version.major == 11:
        torch_cuda_version = parse("11.8")
    elif torch_cuda_version.major == 12:
        torch_cuda_version = parse("12.3")
    else:
        torch_cuda_version = parse("13.0")
    cuda_version = f"{torch_cuda_version.major}"
    wheel_url = BASE_WHEEL_URL.format()
'''


@pytest.mark.parametrize("setup, wants", [
    (SETUP_ONE_LINE, {"11": "118", "12": "123", "13": "123"}),  # 2.6.x: a CUDA 13 torch also takes the cu123 wheel
    (SETUP_IF_ELIF, {"11": "11", "12": "12", "13": "13"}),
])
def test_setup_py_maps_torch_cuda_major_to_the_wheel_it_asks_for(setup, wants):
    assert prebuilt.wanted_cuda(setup) == wants

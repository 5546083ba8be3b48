"""What a project declares, read as pip and uv would read it on the Linux server: markers evaluated for Linux, the
index deciding the torch build (a PyTorch cu118 index serves 2.1.2+cu118 above PyPI's 2.1.2), uv's sources naming
the index outright, and every line left out said with its reason."""

import pytest

from gpuvet.ingest.project import read_pyproject, read_requirements


@pytest.mark.parametrize("text, expected", [
    ("torch==2.1.2\n", ["torch==2.1.2"]),
    ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.1.2\n", ["torch==2.1.2+cu118"]),
    ("--index-url=https://download.pytorch.org/whl/cpu\ntorch==2.3.0\ntorchvision==0.18.0\n",
     ["torch==2.3.0+cpu", "torchvision==0.18.0+cpu"]),
    ("-f https://download.pytorch.org/whl/cu121\ntorch==2.1.2+cu121\n", ["torch==2.1.2+cu121"]),  # already pinned
    ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch>=2.0\n", ["torch>=2.0"]),  # a range stays one
    # two CUDA indexes: which build pip takes is not certain, so none is assumed
    ("--extra-index-url https://download.pytorch.org/whl/cu118\n--extra-index-url https://download.pytorch.org/whl/cu121\n"
     "torch==2.1.2\n", ["torch==2.1.2"]),
    ("torch==2.1.2 ; sys_platform == 'linux'\npywin32==306; sys_platform == 'win32'\n", ["torch==2.1.2"]),
    ("vllm==0.6.3  # serving\n  \n# a comment\nflash-attn==2.6.3 \\\n  --no-build-isolation\n",
     ["vllm==0.6.3", "flash-attn==2.6.3"]),
])
def test_requirements_lines(text, expected):
    assert read_requirements(text).targets == expected


def test_what_is_left_out_is_said():
    declared = read_requirements("-r base.txt\n-e .\ngit+https://github.com/org/repo.git\ntorch @ file:///C:/wheels/torch.whl\n"
                                 "pywin32==306; sys_platform == 'win32'\n")
    assert declared.includes == ["base.txt"]
    reasons = dict(declared.skipped)
    assert reasons["torch @ file:///C:/wheels/torch.whl"].startswith("a direct URL or path")
    assert reasons["pywin32==306; sys_platform == 'win32'"] == "its marker is false on Linux"
    assert declared.targets == []


def test_python_markers_follow_the_machine():
    text = "torch==2.1.2; python_version < '3.12'\ntorch==2.5.1; python_version >= '3.12'\n"
    assert read_requirements(text, python="3.11.9").targets == ["torch==2.1.2"]
    assert read_requirements(text, python="3.12.3").targets == ["torch==2.5.1"]


def test_uv_sources_name_the_index_of_torch():
    document = {"project": {"dependencies": ["torch==2.5.1", "numpy>=1.26"]},
                "tool": {"uv": {"sources": {"torch": [{"index": "pytorch-cu124", "marker": "sys_platform == 'linux'"}]},
                                "index": [{"name": "pytorch-cu124", "url": "https://download.pytorch.org/whl/cu124",
                                           "explicit": True}]}}}
    assert read_pyproject(document).targets == ["torch==2.5.1+cu124", "numpy>=1.26"]
    assert read_pyproject({"project": {"dependencies": ["torch==2.5.1"]}}).targets == ["torch==2.5.1"]

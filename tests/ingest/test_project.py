"""What a project declares, read as pip and uv would read it on the Linux server: markers evaluated for Linux, the
index deciding the torch build (a PyTorch cu118 index serves 2.1.2+cu118 above PyPI's 2.1.2), uv's sources naming
the index outright, and every line left out said with its reason."""

import pytest

from gpuvet.i18n import render
from gpuvet.ingest.project import read_pyproject, read_requirements


def said(declared):
    """(line, why) of each skipped line, the reason as the English report says it (a catalog Message)."""
    return [(line, render(why, "en")) for line, why in declared.skipped]


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
    reasons = dict(said(declared))
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


def test_uv_torch_backend_is_said_not_to_choose_the_build():
    """uv reads torch-backend in its pip interface only: the build `uv sync` installs is the index's or the lock's."""
    declared = read_pyproject({"project": {"dependencies": ["torch==2.5.1"]},
                               "tool": {"uv": {"pip": {"torch-backend": "auto"}}}})
    assert declared.targets == ["torch==2.5.1"]
    assert declared.skipped[0][0] == "[tool.uv.pip] torch-backend = auto"
    assert said(declared)[0][1].startswith("read by uv pip commands only")


# --- lockfiles: uv.lock and pixi.lock, read as what uv sync / pixi install put on the Linux server

def _uv(*packages):
    return {"version": 1, "package": list(packages)}


@pytest.mark.parametrize("package, expected", [
    # the locked version carries the build its index served
    ({"name": "torch", "version": "2.5.1+cu124", "source": {"registry": "https://download.pytorch.org/whl/cu124"}},
     ["torch==2.5.1+cu124"]),
    # a version without a local label from a PyTorch index: that index's build, as pip would install it
    ({"name": "torchvision", "version": "0.20.1", "source": {"registry": "https://download.pytorch.org/whl/cu121"}},
     ["torchvision==0.20.1+cu121"]),
    # PyPI's own build: no label (pip's default index)
    ({"name": "torch", "version": "2.5.1", "source": {"registry": "https://registry.invalid/simple"}}, ["torch==2.5.1"]),
    # a direct wheel URL: the version (and build) its file name carries, %2B decoded
    ({"name": "torch", "version": "2.4.0+cu121", "source": {
        "url": "https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp311-cp311-linux_x86_64.whl"}},
     ["torch==2.4.0+cu121"]),
    # a marker false on Linux x86_64 (the macOS build of a split lock)
    ({"name": "torch", "version": "2.7.1", "source": {"registry": "https://registry.invalid/simple"},
      "resolution-markers": ["sys_platform == 'darwin'"]}, []),
    # uv's conflicting extras: the only build of the package, selected by an extra, is read
    ({"name": "torch", "version": "2.5.1+cu124", "source": {"registry": "https://download.pytorch.org/whl/cu124"},
      "resolution-markers": ["sys_platform == 'linux' and extra == 'extra-7-project-cu124'"]}, ["torch==2.5.1+cu124"]),
])
def test_uv_lock_packages(package, expected):
    from gpuvet.ingest.lockfiles import read_uv_lock

    assert read_uv_lock(_uv(package)).targets == expected


def test_uv_lock_builds_chosen_by_conflicting_extras_are_each_named():
    """uv's PyTorch guide pattern: extras cpu and cu124 in conflict, one torch build per extra (markers as uv writes
    them). Which one is installed is `uv sync --extra ...`'s choice, so neither is assumed; each is named with the
    command that checks it."""
    from gpuvet.ingest.lockfiles import read_uv_lock

    lock = _uv({"name": "torch", "version": "2.5.1+cpu", "source": {"registry": "https://download.pytorch.org/whl/cpu"},
                "resolution-markers": ["extra == 'extra-7-project-cpu' and extra != 'extra-7-project-cu124'"]},
               {"name": "torch", "version": "2.5.1+cu124", "source": {"registry": "https://download.pytorch.org/whl/cu124"},
                "resolution-markers": ["extra != 'extra-7-project-cpu' and extra == 'extra-7-project-cu124'"]},
               {"name": "vllm", "version": "0.6.3", "source": {"registry": "https://registry.invalid/simple"}})
    declared = read_uv_lock(lock)
    assert declared.targets == ["vllm==0.6.3"]
    assert [line for line, _ in declared.skipped] == ["torch==2.5.1+cpu", "torch==2.5.1+cu124"]
    assert said(declared)[1][1] == ("installed by uv sync --extra cu124 (the lock has 2 builds of torch for Linux): check it "
                                      "with gpuvet check torch==2.5.1+cu124")


def test_uv_lock_builds_reached_through_a_members_extras():
    """The lock uv writes for its PyTorch guide's conflicting extras (entries as in astral-sh/uv#14540, with uv's
    extra-<len>-<package>-<extra> markers): PyPI's build without resolution markers is what a plain `uv sync`
    installs (the member's dependency edge holds with no extra), +cpu and +cu126 only with --extra."""
    from gpuvet.ingest.lockfiles import read_uv_lock

    pypi, cpu = {"registry": "https://registry.invalid/simple"}, {"registry": "https://download.pytorch.org/whl/cpu"}
    cu126 = {"registry": "https://download.pytorch.org/whl/cu126"}
    plain = "extra != 'extra-2-ml-pytorch-cpu' and extra != 'extra-2-ml-pytorch-gpu'"
    lock = _uv(
        {"name": "ml", "version": "1.0.0", "source": {"virtual": "."},
         "dependencies": [{"name": "torch", "version": "2.6.0", "source": pypi, "marker": plain}],
         "optional-dependencies": {
             "pytorch-cpu": [{"name": "torch", "version": "2.6.0+cpu", "source": cpu, "marker": "sys_platform != 'darwin'"}],
             "pytorch-gpu": [{"name": "torch", "version": "2.6.0+cu126", "source": cu126}]}},
        {"name": "torch", "version": "2.6.0", "source": cpu, "resolution-markers": ["sys_platform == 'darwin'"]},
        {"name": "torch", "version": "2.6.0", "source": pypi},
        {"name": "torch", "version": "2.6.0+cpu", "source": cpu, "resolution-markers": ["sys_platform != 'darwin'"]},
        {"name": "torch", "version": "2.6.0+cu126", "source": cu126})
    declared = read_uv_lock(lock, wanted=lambda name: name == "torch")
    assert declared.targets == ["torch==2.6.0"]
    assert [(line, why.split(" (")[0]) for line, why in said(declared)] == [
        ("torch==2.6.0+cpu", "installed by uv sync --extra pytorch-cpu"),
        ("torch==2.6.0+cu126", "installed by uv sync --extra pytorch-gpu")]


def test_uv_lock_python_markers_follow_the_machine():
    from gpuvet.ingest.lockfiles import read_uv_lock

    lock = _uv({"name": "torch", "version": "2.2.2", "source": {"registry": "https://registry.invalid/simple"},
                "resolution-markers": ["python_full_version < '3.10'"]},
               {"name": "torch", "version": "2.5.1", "source": {"registry": "https://registry.invalid/simple"},
                "resolution-markers": ["python_full_version >= '3.10'"]})
    assert read_uv_lock(lock, python="3.9.18").targets == ["torch==2.2.2"]
    assert read_uv_lock(lock, python="3.12.3").targets == ["torch==2.5.1"]
    assert read_uv_lock(lock).targets == ["torch==2.2.2", "torch==2.5.1"]  # Python not known: both builds


def test_uv_lock_entries_it_cannot_read_are_named():
    from gpuvet.ingest.lockfiles import read_uv_lock

    declared = read_uv_lock(_uv(
        {"name": "torch", "version": "2.5.0", "source": {"git": "https://github.com/pytorch/pytorch?rev=v2.5.0"}},
        {"name": "vllm", "version": "0.6.3", "source": {"url": "https://example.com/vllm-0.6.3.tar.gz"}},
        {"version": "1.0"}, "not a table",
        {"name": "xformers", "source": {"registry": "https://registry.invalid/simple"}},
        {"name": "numpy", "version": "2.1.0", "source": {"registry": "https://registry.invalid/simple"}}),
        wanted=lambda name: name != "numpy")
    assert declared.targets == []
    assert said(declared) == [
        ("torch 2.5.0", "locked from a git, not a release gpuvet can look up"),
        ("vllm 0.6.3", "locked as a direct URL to a source archive: which build is not known"),
        ("[[package]] #3", "an entry without a name"), ("[[package]] #4", "an entry without a name"),
        ("xformers ?", "an entry without a version")]
    assert said(read_uv_lock({"version": 1})) == [("[[package]]", "no [[package]] entries: not a uv.lock gpuvet can read")]


def _pixi(*urls, platform="linux-64"):
    return {"version": 6, "environments": {"default": {"packages": {platform: [
        {"pypi" if url.endswith(".whl") else "conda": url} for url in urls]}}}}


@pytest.mark.parametrize("urls, expected", [
    # conda-forge: the CUDA in the build string; ".conda": a conda build, whose arch lists are its own
    (["https://registry.invalid/conda-forge/linux-64/pytorch-2.5.1-cuda126_py312h1763f6d_303.conda"],
     ["torch==2.5.1+cu126.conda"]),
    (["https://registry.invalid/conda-forge/linux-64/pytorch-2.5.1-cpu_mkl_py312_heeca0f5_108.conda"],
     ["torch==2.5.1+cpu.conda"]),
    # the pytorch channel's own builds name CUDA dotted
    (["https://registry.invalid/pytorch/linux-64/pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0.tar.bz2"],
     ["torch==2.1.0+cu121.conda"]),
    # no CUDA in the build string: the locked cuda-version decides
    (["https://registry.invalid/conda-forge/noarch/cuda-version-11.8-h70ddcb2_3.conda",
      "https://registry.invalid/conda-forge/linux-64/pytorch-2.0.0-py311h1234567_0.conda"], ["torch==2.0.0+cu118.conda"]),
    # pytorch-gpu is a metapackage beside pytorch: the build is pytorch's
    (["https://registry.invalid/conda-forge/linux-64/pytorch-2.8.0-cuda129_mkl_py313_h7947483_302.conda",
      "https://registry.invalid/conda-forge/linux-64/pytorch-gpu-2.8.0-cuda129_mkl_h43a4b0b_302.conda"],
     ["torch==2.8.0+cu129.conda"]),
    # a PyPI wheel in the environment
    (["https://registry.invalid/packages/ab/cd/vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl"], ["vllm==0.6.3"]),
])
def test_pixi_lock_packages(urls, expected):
    from gpuvet.ingest.lockfiles import read_pixi_lock

    assert read_pixi_lock(_pixi(*urls)).targets == expected


def test_pixi_lock_what_it_cannot_judge_is_named():
    from gpuvet.ingest.lockfiles import read_pixi_lock

    declared = read_pixi_lock(_pixi(
        "https://registry.invalid/conda-forge/linux-64/pytorch-2.0.0-py311h1234567_0.conda",
        "https://registry.invalid/conda-forge/linux-64/tensorflow-2.17.0-cuda120py312h02ad488_203.conda"))
    assert declared.targets == []
    assert said(declared) == [
        ("pytorch 2.0.0 py311h1234567_0 (conda-forge)",
         "its build string names no CUDA version: which build is locked is not known"),
        ("tensorflow 2.17.0 cuda120py312h02ad488_203 (conda-forge)",
         "a conda build: gpuvet knows this framework's PyPI builds only")]
    # only the Linux server's platform is read
    osx = read_pixi_lock(_pixi("https://registry.invalid/conda-forge/osx-arm64/pytorch-2.5.1-cpu_generic_py312_0.conda",
                               platform="osx-arm64"))
    assert osx.targets == [] and osx.skipped[0][0] == "environments.default"
    assert said(read_pixi_lock({"version": 3, "package": []})) == [
        ("version: 3", "not a pixi.lock format gpuvet reads (4 and later)")]
    assert said(read_pixi_lock(["a", "list"]))[0][1].startswith("not a pixi.lock format")


# --- DataLoader workers that would use CUDA once they fork (Linux) instead of spawn (Windows); read with ast

DATASETS = '''
import torch
from torch.utils.data import Dataset


class OnGpu(Dataset):
    def __init__(self, items):
        self.items = torch.tensor(items, device="cuda")

    def __getitem__(self, index):
        return self.items[index]


class MovesEachItem(Dataset):
    def __getitem__(self, index):
        return torch.zeros(3).to(torch.device("cuda:0"))


class CallsCuda(Dataset):
    def __getitem__(self, index):
        return torch.zeros(3).cuda()


class Augmented(CallsCuda):
    pass


class StaysOnCpu(Dataset):
    def __getitem__(self, index):
        x = torch.zeros(3)
        return x.to("cpu")  # "cuda" in a comment or elsewhere is not a device
'''


@pytest.mark.parametrize("loader, flagged", [
    ("DataLoader(OnGpu([1]), batch_size=2, num_workers=4)", "OnGpu, which puts data on the GPU: device=\"cuda\" in __init__"),
    ("DataLoader(MovesEachItem(), num_workers=args.workers)", ".to(\"cuda\") in __getitem__"),  # a variable may be > 0
    ("torch.utils.data.DataLoader(dataset=CallsCuda(), num_workers=2)", ".cuda() in __getitem__"),
    ("DataLoader(CallsCuda(), 8, True, None, None, 2)", ".cuda() in __getitem__"),  # num_workers given by position
    ("DataLoader(CallsCuda(), num_workers=2, multiprocessing_context='fork')", ".cuda() in __getitem__"),
    ("DataLoader(CallsCuda())", None),  # no workers: the main process loads
    ("DataLoader(CallsCuda(), num_workers=0)", None),
    ("DataLoader(CallsCuda(), num_workers=2, multiprocessing_context='spawn')", None),
    ("DataLoader(StaysOnCpu(), num_workers=8)", None),
    ("DataLoader(SomethingElse(), num_workers=8)", None),  # a class gpuvet cannot see is not guessed
    ("DataLoader(Augmented(), num_workers=8)", ".cuda() in __getitem__"),  # inherits CallsCuda's __getitem__
])
def test_dataloader_fork_risks(loader, flagged):
    from gpuvet.ingest.dataloader import dataloader_fork_risks

    train = "import torch\nfrom torch.utils.data import DataLoader\nfrom data import *\nloader = %s\n" % loader
    found = dataloader_fork_risks({"data.py": DATASETS, "train.py": train})
    if flagged is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0]["file"] == "train.py" and found[0]["problem"] == "dataloader_fork"
        assert found[0]["line"].startswith("4: DataLoader(num_workers=") and flagged in found[0]["line"]
        assert "(data.py:" in found[0]["line"]


def test_dataloader_fork_risks_follow_a_variable_and_the_start_method():
    from gpuvet.ingest.dataloader import dataloader_fork_risks

    train = ("from torch.utils.data import DataLoader\nfrom data import OnGpu\n\n\ndef main():\n"
             "    dataset = OnGpu([1, 2])\n    return DataLoader(dataset, num_workers=4)\n\n\n"
             "if __name__ == \"__main__\":\n    main()\n")
    found = dataloader_fork_risks({"data.py": DATASETS, "train.py": train})
    assert [entry["line"][:2] for entry in found] == ["7:"]
    assert "guard" not in found[0]["line"]  # the script has its __main__ guard: spawn is a one-line change
    unguarded = dataloader_fork_risks({"data.py": DATASETS, "t.py": "loader = DataLoader(CallsCuda(), num_workers=2)\n"})
    assert unguarded[0]["line"].endswith('no if __name__ == "__main__": guard in this file')
    # the project already starts workers with spawn (or forkserver): nothing to say
    for fix in ("import torch.multiprocessing as mp\nmp.set_start_method('spawn', force=True)\n",
                "import multiprocessing\nmultiprocessing.set_start_method(method='forkserver')\n"):
        assert dataloader_fork_risks({"data.py": DATASETS, "train.py": train, "launch.py": fix}) == []
    # Python 3.14 starts them with forkserver on Linux; a file that does not parse is left alone
    assert dataloader_fork_risks({"data.py": DATASETS, "train.py": train}, python="3.14.0") == []
    assert dataloader_fork_risks({"data.py": DATASETS, "train.py": train}, python="3.13.1") != []
    assert dataloader_fork_risks({"broken.py": "def (:\n", "data.py": DATASETS}) == []


# --- lockfiles of any shape: a parsed TOML/YAML document that is not what uv or pixi write is said, never a crash

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                     st.sampled_from(["torch", "2.5.1+cu124", "cuda129_py312_0", "extra == 'x'", "linux-64",
                                      "https://registry.invalid/conda-forge/linux-64/pytorch-2.5.1-cuda126_0.conda"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(["name", "version", "source", "registry", "url", "git", "resolution-markers",
                                     "dependencies", "optional-dependencies", "marker", "extra", "virtual",
                                     "environments", "default", "packages", "linux-64", "conda", "pypi"]),
                    inner, max_size=5)), max_leaves=20)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(packages=st.lists(_VALUES, max_size=4), environments=_VALUES, linux=st.lists(_VALUES, max_size=4))
def test_lock_readers_take_any_shape(packages, environments, linux):
    from gpuvet.ingest.lockfiles import read_pixi_lock, read_uv_lock

    uv = read_uv_lock({"version": 1, "package": packages})
    rivals = [{"name": "torch", "version": v, "source": {"registry": "https://registry.invalid/simple"}}
              for v in ("2.5.1", "2.6.0")]  # two builds of one package: the walk from the members runs
    uv.targets += read_uv_lock({"package": rivals + [dict(p, source={"virtual": "."}) if isinstance(p, dict) else p
                                                     for p in packages]}).targets
    pixi = read_pixi_lock({"version": 6, "environments": environments})
    pixi.targets += read_pixi_lock({"environments": {"default": {"packages": {"linux-64": linux}}}}).targets
    assert all(isinstance(t, str) for t in uv.targets + pixi.targets)


def test_uv_lock_walk_takes_odd_tables():
    from gpuvet.ingest.lockfiles import read_uv_lock

    rivals = [{"name": "torch", "version": v, "source": {"registry": "https://registry.invalid/simple"}}
              for v in ("2.5.1", "2.6.0")]
    odd = [{"name": "a", "source": 5}, {"name": "b", "source": {"virtual": "."}, "dev-dependencies": ["dev"],
                                         "optional-dependencies": 3, "dependencies": [{"name": "torch", "extra": 7}]}]
    assert read_uv_lock({"package": rivals + odd}).targets == ["torch==2.5.1", "torch==2.6.0"]


def test_a_pixi_lock_of_nested_yaml_aliases_is_refused_in_no_time(tmp_path, capsys):
    """A "billion laughs" pixi.lock: PyYAML shares aliased nodes, and gpuvet counts each use of one (what any walk
    of the document would cost) and refuses the file past gpuvet.userfiles.MAX_VALUES, naming it, without
    expanding it."""
    import time

    from gpuvet.cli import main

    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]" % ((i, i) + (i - 1,) * 10) for i in range(1, 9)]
    (tmp_path / "pixi.lock").write_text("\n".join(levels) + "\nversion: 6\nenvironments:\n  default:\n    packages:\n"
                                        "      linux-64: [*a8]\n")
    fixtures = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"
    smi = str(fixtures / "nvidia-smi" / "a10-1gpu_drv550.90.12.txt")
    # A guard against a hang, not a timing test: relative to the same command on a two-level lock (100 values)
    # measured here, so a loaded machine (11 s beside two CPU hogs) is not read as an expansion, which takes hours.
    small = tmp_path / "small"
    small.mkdir()
    (small / "pixi.lock").write_text("\n".join(levels[:2]) + "\nversion: 6\nenvironments:\n  default:\n"
                                     "    packages:\n      linux-64: [*a1]\n")
    start = time.monotonic()
    main(["check", "--project", str(small), "--from", smi, "--no-network", "-f", "json"])
    baseline = time.monotonic() - start
    start = time.monotonic()
    code = main(["check", "--project", str(tmp_path), "--from", smi, "--no-network", "-f", "json"])
    assert time.monotonic() - start < 10 + 5 * baseline and code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "pixi.lock: more than 2,000,000 values" in err

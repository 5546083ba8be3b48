"""--installer conda and --installer pixi: every install command gpuvet prints, in that installer's own form.

conda rows follow PyTorch's "previous versions" page (https://pytorch.org/get-started/previous-versions/, the Conda
commands for Linux of each release) and PyTorch's announcement that its Anaconda channel gets no release after 2.5
(https://github.com/pytorch/pytorch/issues/138506). pixi rows follow pixi's PyTorch guide
(https://pixi.sh/latest/python/pytorch/: PyTorch from its index as a PyPI dependency, system-requirements cuda) and
its CLI reference (pixi add --pypi/--index, pixi workspace system-requirements add cuda, pixi remove --pypi,
pixi reinstall)."""

import json
import shlex
from pathlib import Path

import pytest

from gpuvet.checks.installer import as_conda, as_pixi
from gpuvet.cli import main
from gpuvet.kb import load

T4_455 = str(Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "tesla-t4-1gpu_drv455.45.01.txt")
CU = "https://download.pytorch.org/whl/"


@pytest.fixture(scope="module")
def kb():
    return load()


@pytest.mark.parametrize("pip, conda", [
    # v2.5.1, "CUDA 12.1": conda install pytorch==2.5.1 ... pytorch-cuda=12.1 -c pytorch -c nvidia
    ("pip install torch==2.5.1 --index-url " + CU + "cu121", "conda install pytorch==2.5.1 pytorch-cuda=12.1 -c pytorch -c nvidia"),
    # v2.0.1, "CUDA 11.7"
    ("pip install torch==2.0.1 --index-url " + CU + "cu117", "conda install pytorch==2.0.1 pytorch-cuda=11.7 -c pytorch -c nvidia"),
    # v2.3.1, "CPU Only": ... cpuonly -c pytorch
    ("pip install torch==2.3.1 --index-url " + CU + "cpu", "conda install pytorch==2.3.1 cpuonly -c pytorch"),
    # v1.12.1, "CUDA 11.6": cudatoolkit=11.6 -c pytorch -c conda-forge (before pytorch-cuda existed)
    ("pip install torch==1.12.1+cu116 --extra-index-url " + CU + "cu116",
     "conda install pytorch==1.12.1 cudatoolkit=11.6 -c pytorch -c conda-forge"),
    # v1.12.1, "CUDA 11.3": cudatoolkit=11.3 -c pytorch
    ("pip install torch==1.12.1+cu113 --extra-index-url " + CU + "cu113", "conda install pytorch==1.12.1 cudatoolkit=11.3 -c pytorch"),
    # conda install takes --force-reinstall as pip does
    ("pip install torch==2.4.0 --index-url " + CU + "cu124 --force-reinstall",
     "conda install pytorch==2.4.0 pytorch-cuda=12.4 -c pytorch -c nvidia --force-reinstall"),
])
def test_builds_pytorch_published_on_its_conda_channel(kb, pip, conda):
    assert as_conda(pip, kb) == conda


def test_pypi_default_torch_is_the_cuda_build_the_data_names(kb):
    # PyPI's own torch 2.5.1 wheel is a CUDA build (its variant in gpuvet's data); the page lists 2.5.1 for CUDA 12.4.
    variant = next(v for v in kb.framework("torch").release("2.5.1").variants.values()
                   if v.install == "pip install torch==2.5.1")
    assert variant.cuda and variant.cuda.startswith("12.4")
    assert as_conda("pip install torch==2.5.1", kb) == "conda install pytorch==2.5.1 pytorch-cuda=12.4 -c pytorch -c nvidia"


@pytest.mark.parametrize("pip, why", [
    # torch 2.7 cu128: PyTorch published no conda packages after 2.5
    ("pip install torch==2.7.0 --index-url " + CU + "cu128", "no conda package of torch 2.7.0"),
    # v2.3.1's conda builds are CUDA 11.8 and 12.1 only
    ("pip install torch==2.3.1 --index-url " + CU + "cu124", "torch 2.3.1 (cu124)"),
    ("pip install vllm==0.6.3", "no conda package of this build"),
])
def test_no_conda_form_says_so_and_runs_pip_inside_the_environment(kb, pip, why):
    written = as_conda(pip, kb)
    command, _, comment = written.partition("  # ")
    assert command == "python -m pip " + pip.split(" ", 1)[1]
    assert why in comment and "pip inside the conda environment" in comment
    assert "conda install" not in written


def test_a_chain_keeps_its_comment_after_the_last_command(kb):
    written = as_conda("pip install torch==2.6.0 --index-url " + CU + "cu126 && pip install tensorrt_llm==0.17.0 "
                       "--extra-index-url https://registry.invalid/simple", kb)
    commands, _, comment = written.partition("  # ")
    assert "#" not in commands and commands.count("python -m pip install") == 2 and comment


@pytest.mark.parametrize("pip, pixi", [
    ("pip install torch==2.5.1 --index-url " + CU + "cu121",
     "pixi workspace system-requirements add cuda 12 && pixi add --pypi torch==2.5.1 --index " + CU + "cu121"),
    ("pip install torch==2.7.0 --index-url " + CU + "cu128",
     "pixi workspace system-requirements add cuda 12 && pixi add --pypi torch==2.7.0 --index " + CU + "cu128"),
    ("pip install torch==2.5.1 --index-url " + CU + "cu118 --force-reinstall",
     "pixi workspace system-requirements add cuda 11 && pixi add --pypi torch==2.5.1 --index " + CU + "cu118"
     " && pixi reinstall torch"),
    ("pip install torch==2.3.1 --index-url " + CU + "cpu", "pixi add --pypi torch==2.3.1 --index " + CU + "cpu"),
    ("python -m pip install paddlepaddle-gpu==2.6.1 -i https://www.paddlepaddle.org.cn/packages/stable/cu118/",
     "pixi add --pypi paddlepaddle-gpu==2.6.1 --index https://www.paddlepaddle.org.cn/packages/stable/cu118/"),
    ("pip uninstall -y torch", "pixi remove --pypi torch"),
    ("sudo reboot", "sudo reboot"),
])
def test_pixi_forms(kb, pip, pixi):
    assert as_pixi(pip, kb) == pixi


@pytest.mark.parametrize("pip, said", [
    ("pip install tensorrt_llm==0.17.0 --extra-index-url https://registry.invalid/simple",
     "https://registry.invalid/simple to [pypi-options] extra-index-urls"),
    ("pip install flash-attn==2.5.8 --no-build-isolation", "flash-attn in [pypi-options] no-build-isolation"),
    ("pip install torch==2.4.1 --no-deps", "no --no-deps"),
])
def test_what_pixi_add_cannot_say_goes_to_the_manifest(kb, pip, said):
    command, _, comment = as_pixi(pip, kb).partition("  # ")
    assert command.startswith("pixi add --pypi ") and "--extra-index-url" not in command and said in comment


def test_every_install_command_of_the_data_reads_as_shell_words_in_both(kb):
    for framework in kb.frameworks():
        for release in framework.releases:
            for variant in release.variants.values():
                if not variant.install:
                    continue
                for written in (as_conda(variant.install, kb), as_pixi(variant.install, kb)):
                    command = written.split("  # ")[0]
                    assert shlex.split(command), written
                    assert not command.startswith("pip "), written
                assert "pip install" not in as_pixi(variant.install, kb).split("  # ")[0]


def _commands(capsys, installer):
    assert main(["check", "torch==2.8.0", "--from", T4_455, "--no-network", "-f", "json", "--installer", installer]) == 1
    document = json.loads(capsys.readouterr().out)
    found = [f for t in document["targets"] for f in t["findings"] if f.get("fix") and f["fix"]["commands"]]
    return [c for f in found for c in f["fix"]["commands"]], [s for f in found for s in f["sources"]]


def test_check_speaks_conda_and_pixi(capsys):
    # T4, driver 455 (CUDA 11.1): the newest build that fits is torch 2.7.1 cu118 (PyTorch's own index; its arch list
    # from the release's build files). PyTorch's conda channel ended with 2.5.1, so the conda fix is pip inside the
    # conda environment, and says why.
    commands, sources = _commands(capsys, "conda")
    assert [c for c in commands if c.startswith("python -m pip install torch==2.7.1 --index-url " + CU + "cu118")]
    assert any("pytorch channel ended with 2.5.1" in c for c in commands)
    assert not [c for c in commands if c.startswith("pip ")]
    assert any("pytorch.org/get-started/previous-versions" in s for s in sources)
    commands, sources = _commands(capsys, "pixi")
    assert ("pixi workspace system-requirements add cuda 11 && pixi add --pypi torch==2.7.1 --index "
            + CU + "cu118") in commands
    assert any("pixi.sh" in s for s in sources)


def test_an_unknown_installer_is_a_usage_error(capsys):
    assert main(["check", "--from", T4_455, "--no-network", "--installer", "npm"]) == 2
    assert "--installer" in capsys.readouterr().err

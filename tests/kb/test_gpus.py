import glob
import os
import re

import pytest

from gpuvet.ingest.reader import read_input
from gpuvet.kb import gpumatch, load
from gpuvet.tomlfile import load_toml

kb = load()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, os.pardir, "src", "gpuvet", "kb", "data")


@pytest.mark.parametrize("name,cc,memory", [
    ("NVIDIA H100 80GB HBM3", "9.0", 80),
    ("NVIDIA A800-SXM4-80GB", "8.0", 80),
    ("NVIDIA H20", "9.0", 96),
    ("Tesla V100-SXM2-16GB", "7.0", 16),
    ("NVIDIA GH200 480GB", "9.0", 96),
    ("NVIDIA L40S", "8.9", 48),
    ("NVIDIA GeForce RTX 5090", "12.0", 32),
    ("NVIDIA B200", "10.0", 180),
    ("GeForce RTX 3090", "8.6", 24),  # older drivers print no "NVIDIA " prefix
    ("H100", "9.0", None),  # "NVIDIA H100" is a printed name (64/94/96 GB SXM5 parts): memory not guessed
    ("H100 SXM", "9.0", 80),
    ("4090", "8.9", 24),
])
def test_names(name, cc, memory):
    model = kb.gpu(name)
    assert model is not None, name
    assert model.compute_capability == cc
    assert model.memory_gib == memory
    assert model.source


# Names printed by the real nvidia-smi captures under tests/fixtures, with the compute capability NVIDIA's CUDA GPUs
# pages give that product (None: the name alone cannot tell).
FIXTURE_NAMES = {
    "A100-SXM4-40GB": "8.0",
    "GRID K520": "3.0",
    "GeForce GT 730": None,  # GF108 (2.1), GK107 (3.0) and GK208 (3.5) boards all print this name
    "GeForce GTX 1050": "6.1",
    "GeForce GTX 1050 Ti": "6.1",
    "GeForce GTX 1060 6GB": "6.1",
    "GeForce GTX 1070": "6.1",
    "GeForce GTX 1070 Ti": "6.1",
    "GeForce GTX 108...": "6.1",  # 1080 or 1080 Ti
    "GeForce GTX 1080": "6.1",
    "GeForce GTX 1650 SUPER": "7.5",
    "GeForce GTX 750 Ti": "5.0",
    "GeForce RTX 2070": "7.5",
    "GeForce RTX 2080 Ti": "7.5",
    "Graphics Device": None,  # a driver older than the GPU
    "NVIDIA A10": "8.6",
    "NVIDIA A100-SXM4-80GB": "8.0",
    "NVIDIA A10G": "8.6",
    "NVIDIA A40": "8.6",
    "NVIDIA A800 80G...": "8.0",
    "NVIDIA GH200 480GB": "9.0",
    "NVIDIA GeForce ...": None,  # every GeForce generation fits
    "NVIDIA GeForce GTX 1050": "6.1",
    "NVIDIA GeForce GTX 1050 Ti": "6.1",
    "NVIDIA GeForce GTX 680": "3.0",
    "NVIDIA GeForce RTX 2080 ...": "7.5",
    "NVIDIA GeForce RTX 2080 SUPER": "7.5",
    "NVIDIA GeForce RTX 3060": "8.6",
    "NVIDIA GeForce RTX 3070": "8.6",
    "NVIDIA GeForce RTX 3080": "8.6",
    "NVIDIA GeForce RTX 3090": "8.6",
    "NVIDIA GeForce RTX 4060 ...": "8.9",
    "NVIDIA GeForce RTX 4060 Ti": "8.9",
    "NVIDIA GeForce RTX 4080 ...": "8.9",
    "NVIDIA GeForce RTX 4080 SUPER": "8.9",
    "NVIDIA GeForce RTX 4090": "8.9",
    "NVIDIA GeForce RTX 5090": "12.0",
    "NVIDIA H100 80GB HBM3": "9.0",
    "NVIDIA H100 NVL": "9.0",
    "NVIDIA H200": "9.0",
    "NVIDIA H800": "9.0",
    "NVIDIA L4": "8.9",
    "NVIDIA L40S": "8.9",
    "NVIDIA RTX 2000 Ada Gene...": "8.9",
    "NVIDIA RTX 2000 Ada Generation": "8.9",
    "NVIDIA RTX 4000 Ada Gene...": "8.9",
    "NVIDIA RTX 4000 Ada Generation": "8.9",
    "NVIDIA RTX 4000 SFF Ada Generation": "8.9",
    "NVIDIA RTX 6000 Ada Gene...": "8.9",
    "NVIDIA RTX 6000 Ada Generation": "8.9",
    "NVIDIA RTX A6000": "8.6",
    "Quadro P2000": "6.1",
    "Quadro P2200": "6.1",
    "Quadro P400": "6.1",
    "TITAN Xp": "6.1",
    "Tesla K80": "3.7",
    "Tesla P100-PCIE-16GB": "6.0",
    "Tesla P100-PCIE...": "6.0",
    "Tesla T4": "7.5",
    "Tesla V100-PCIE-32GB": "7.0",
    "Tesla V100-SXM2-16GB": "7.0",
    "Tesla V100-SXM2...": "7.0",
    "Tesla V100S-PCIE-32GB": "7.0",
}


@pytest.mark.parametrize("name", sorted(FIXTURE_NAMES))
def test_fixture_names_map_to_their_compute_capability(name):
    model = kb.gpu(name)
    expected = FIXTURE_NAMES[name]
    if expected is None:
        assert model is None, (name, model and model.name)
    else:
        assert model is not None, name
        assert model.compute_capability == expected, (name, model.name)
        assert model.source


def _fixture_gpus():
    """(path, gpu entry) for every GPU of every parseable nvidia-smi fixture, read through the real ingest path."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures", "nvidia-smi*", "*"))):
        try:
            snapshot = read_input(path)
        except Exception:  # noqa: BLE001 - a fixture another parser cannot read (topology-only, partial) has no names
            continue
        gpus = snapshot.get("gpus") or {}
        items = gpus.get("value") if isinstance(gpus, dict) else gpus
        for gpu in items or ():
            if gpu.get("name"):
                found.append((os.path.relpath(path, ROOT), gpu))
    return found


FIXTURE_GPUS = _fixture_gpus()


def test_fixtures_were_read():
    assert len({gpu["name"] for _, gpu in FIXTURE_GPUS}) >= 50


def test_every_fixture_gpu_name_is_decided():
    """A new capture with a name nobody looked at fails here: add it to FIXTURE_NAMES (and the KB if it is missing)."""
    undecided = sorted({gpu["name"] for _, gpu in FIXTURE_GPUS} - set(FIXTURE_NAMES))
    assert undecided == []


def test_kb_agrees_with_the_compute_capability_the_gpu_reported():
    """Where the capture itself carries compute_cap (nvidia-smi --query-gpu), the KB must say the same."""
    checked = 0
    for path, gpu in FIXTURE_GPUS:
        reported = gpu.get("compute_capability")
        if not reported:
            continue
        model = kb.gpu(gpu["name"])
        assert model is not None and model.compute_capability == reported, (path, gpu["name"], reported)
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("alias,name", [
    ("4090", "NVIDIA GeForce RTX 4090"),
    ("H100 SXM", "NVIDIA H100 80GB HBM3"),
    ("RTX 3060", "NVIDIA GeForce RTX 3060"),
    ("3060 Ti", "NVIDIA GeForce RTX 3060 Ti"),
    ("K40", "Tesla K40m"),
    ("M60", "Tesla M60"),
    ("A2", "NVIDIA A2"),
    ("GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti"),
    ("TITAN V", "NVIDIA TITAN V"),
    ("V100 SXM3", "Tesla V100-SXM3-32GB"),
    ("Tesla V100-SXM2-32GB-LS", "Tesla V100-SXM2-32GB"),
    ("A100 SXM 64GB", "NVIDIA A100-SXM-64GB"),
    ("RTX A5000", "NVIDIA RTX A5000"),
    ("RTX 4000 Ada", "NVIDIA RTX 4000 Ada Generation"),
    ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
    ("B100", "NVIDIA B100"),
    ("L2", "NVIDIA L2"),
    ("H20 NVL16", "NVIDIA H20 NVL16"),
    ("GB10", "NVIDIA GB10"),
    ("Jetson AGX Orin", "Orin (nvgpu)"),
    ("Jetson Thor", "NVIDIA Thor"),
    ("NVIDIA GeForce RTX 2080 Super", "NVIDIA GeForce RTX 2080 SUPER"),  # the notebook part's spelling
    ("nvidia geforce rtx 4070 ti super", "NVIDIA GeForce RTX 4070 Ti SUPER"),
])
def test_aliases(alias, name):
    model = kb.gpu(alias)
    assert model is not None, alias
    assert model.name == name


@pytest.mark.parametrize("name,cc", [
    ("Orin (nvgpu)", "8.7"),  # every Jetson Orin module (JetPack 6 nvidia-smi)
    ("NVIDIA Thor", "11.0"),
    ("NVIDIA GB10", "12.1"),
    ("NVIDIA B300 SXM6 AC", "10.3"),
    ("Tesla K40m", "3.5"),
    ("NVIDIA GeForce GTX TITAN X", "5.2"),
    ("Quadro RTX 8000", "7.5"),
    ("NVIDIA GeForce RTX 5070 Ti", "12.0"),
    ("NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"),
])
def test_more_rented_models(name, cc):
    assert kb.gpu(name).compute_capability == cc


def test_no_two_records_claim_the_same_name():
    owner = {}
    for model in kb.gpu_models():
        for name in {gpumatch.normalize(n) for n in (model.name,) + tuple(model.aliases)}:
            assert name not in owner, f"{name!r} claimed by {owner.get(name)} and {model.name}"
            owner[name] = model.name


@pytest.mark.parametrize("name", [
    "NVIDIA GeForce RTX 2060",  # 6 GB and 12 GB
    "NVIDIA GeForce RTX 3060",  # 12 GB and 8 GB
    "NVIDIA GeForce RTX 3080",  # 10 GB and 12 GB
    "NVIDIA GeForce RTX 4060 Ti",  # 8 GB and 16 GB
    "NVIDIA GeForce RTX 5060 Ti",
    "NVIDIA GeForce GTX 1050",  # 2 GB and 3 GB
    "Orin (nvgpu)",  # shared memory, per module
])
def test_memory_is_unknown_when_one_name_covers_several_sizes(name):
    assert kb.gpu(name).memory_gib is None


def test_truncated_name_is_never_the_shorter_model():
    # nvidia-smi cut the name after "2080 ": the GPU is a 2080 SUPER or a 2080 Ti, never the plain RTX 2080.
    model = kb.gpu("NVIDIA GeForce RTX 2080 ...")
    assert model.compute_capability == "7.5"
    assert set(model.aliases) == {"NVIDIA GeForce RTX 2080 SUPER", "NVIDIA GeForce RTX 2080 Ti"}
    assert model.memory_gib is None  # 8 GB or 11 GB: not guessed


def test_truncated_unique_name():
    assert kb.gpu("NVIDIA RTX 4000 Ada Gene...").name == "NVIDIA RTX 4000 Ada Generation"
    assert kb.gpu("NVIDIA RTX 4000 Ada Gene...").memory_gib == 20
    assert kb.gpu("NVIDIA A800 80G...").name == "NVIDIA A800 80GB PCIe"


def test_truncated_mid_word_keeps_both_models():
    model = kb.gpu("GeForce GTX 108...")
    assert set(model.aliases) == {"NVIDIA GeForce GTX 1080", "NVIDIA GeForce GTX 1080 Ti"}
    assert model.compute_capability == "6.1"
    assert model.memory_gib is None  # 8 GB or 11 GB


def test_truncated_ambiguous_name_keeps_only_shared_facts():
    model = kb.gpu("Tesla V100-SXM2...")
    assert model.compute_capability == "7.0"
    assert model.memory_gib is None  # 16 GB or 32 GB: not guessed
    assert set(model.aliases) == {"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB"}


def test_truncated_full_name_falls_back_to_the_exact_model():
    # Some tools append "..." without cutting anything: with nothing longer to fit, the exact model is the answer.
    assert kb.gpu("NVIDIA L40S...").name == "NVIDIA L40S"
    # ...but where longer names exist, they are what was cut: a 4090 D or a 4090 Laptop GPU (memory differs).
    model = kb.gpu("NVIDIA GeForce RTX 4090...")
    assert set(model.aliases) == {"NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 4090 Laptop GPU"}
    assert model.compute_capability == "8.9" and model.memory_gib is None


def test_unknown_and_cross_architecture_ambiguity():
    assert kb.gpu("NVIDIA H...") is None
    assert kb.gpu("") is None
    assert kb.gpu("NVIDIA GeForce ...") is None
    assert kb.gpu("Graphics Device") is None
    assert kb.gpu("GeForce GT 730") is None
    assert kb.gpu("RTX 6000") is None  # Quadro RTX 6000 (7.5) or RTX 6000 Ada (8.9)
    assert kb.gpu("AMD Instinct MI300X") is None


def test_models_have_dense_tflops_keys_only():
    allowed = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8"}
    for model in kb.gpu_models():
        assert set(model.tflops) <= allowed, model.name
        assert model.segment in ("datacenter", "workstation", "consumer", "embedded"), model.name


def test_every_compute_capability_is_a_known_architecture():
    """checks/recommend look the CC up in cuda_arch.toml; a GPU whose CC is missing there could never be judged."""
    arch = load_toml(os.path.join(DATA, "cuda_arch.toml"))
    known = {str(record["compute_capability"]) for record in arch["arch"]}
    for model in kb.gpu_models():
        assert re.fullmatch(r"\d+\.\d+", model.compute_capability), model.name
        assert model.compute_capability in known, model.name


def test_facts_not_read_from_nvidia_are_flagged():
    """A record with a fact taken from a secondary source names it in `unverified`; names are real field names."""
    fields = {"name", "memory_gib", "bandwidth_gbs", "tflops", "pcie_gen", "compute_capability", "nvlink"}
    for model in kb.gpu_models():
        for item in model.unverified:
            assert item.split(".")[0] in fields, (model.name, item)

"""The renter's own words (user_words.toml) and the ranked second causes (codes.toml `neighbours`), issue 31.

Prose with no program's message names a cause "from the user's words", at a low confidence; a program's message
always wins over prose, a passing state names nothing, and a neighbour of a cause is offered after it only when the
log carries its terms, never beside a cause it contradicts (docs/CONTRACT.md §7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.diagnose.engine import read_text
from gpuvet.diagnose.signatures import DATA_DIR, WORDS_MAX, load_signatures
from gpuvet.errors import KnowledgeBaseError
from gpuvet.i18n import render
from gpuvet.models import FINDING_CODES
from gpuvet.tomlfile import load_toml

REPO = Path(__file__).resolve().parents[2]
WORDS = load_toml(DATA_DIR / "user_words.toml")

# What renters write, one clause each, in Chinese and English: the cause docs/CONTRACT.md §4 defines for it.
CHINESE = [
    ("跑 70B 模型的时候 VRAM 不够", "insufficient_vram"),
    ("显卡内存爆了，batch 已经调到 1", "insufficient_vram"),
    ("14B 的模型单卡放不下", "insufficient_vram"),
    ("一跑就 OOM", "insufficient_vram"),
    ("是不是需要更新驱动", "driver_too_old"),
    ("驱动是 470 的，是不是太老了", "driver_too_old"),
    ("显卡是 5090，装了 torch 2.5 用不了", "arch_not_in_build"),
    ("驱动太旧了吧，是不是要升级", "driver_too_old"),
    ("显卡驱动太老，装不了新的 torch", "driver_too_old"),
    ("nvcc 的版本和 torch 对不上", "toolkit_mismatch"),
    ("CUDA 运行时库找不到", "cuda_library_missing"),
    ("cuDNN 版本不匹配", "cudnn_mismatch"),
    ("显卡算力不支持", "arch_not_in_build"),
    ("新显卡跑不起来", "arch_not_in_build"),
    ("V100 不支持 bf16 吗", "feature_arch_unsupported"),
    ("下载的是 CPU 版本的 pytorch", "cpu_only_build"),
    ("pip 装不上，没有对应的 whl", "python_unsupported"),
    ("容器里 /dev/shm 太小", "shm_too_small"),
    ("系统盘满了", "disk_full"),
    ("多卡训练卡住不动", "nccl_comm_failure"),
    ("docker 容器里看不到显卡", "container_gpu_not_exposed"),
    ("升级驱动后没重启", "nvml_driver_mismatch"),
    ("huggingface 一直连不上", "network_unreachable"),
    ("RTX5090显卡支持？", "arch_not_in_build"),
    ("以前用 3070 可以，换了显卡就用不了了", "arch_not_in_build"),
    ("推理几次以后显存一直上涨", "not_a_stack_problem"),
    ("我有一张V100，但是不支持CUDA13", "gpu_unsupported_by_cuda"),
]
ENGLISH = [
    ("my driver is too old", "driver_too_old"),
    ("the GPU keeps running out of memory at step 200", "insufficient_vram"),
    ("the 70B model won't fit in VRAM", "insufficient_vram"),
    ("torch says my GPU is too new", "arch_not_in_build"),
    ("I need to upgrade the driver", "driver_too_old"),
    ("the wheel doesn't support my GPU", "arch_not_in_build"),
    ("not enough VRAM to load the model", "insufficient_vram"),
    ("the CUDA version of nvcc doesn't match torch's", "toolkit_mismatch"),
    ("libcudart is missing after the upgrade", "cuda_library_missing"),
    ("conda pulled a CPU build of pytorch", "cpu_only_build"),
    ("no wheels for Python 3.13 yet", "python_unsupported"),
    ("my T4 doesn't support bf16", "feature_arch_unsupported"),
    ("the docker container can't see the GPU", "container_gpu_not_exposed"),
    ("the disk is full again", "disk_full"),
    ("training hangs on multi-node all-reduce", "nccl_comm_failure"),
    ("I updated the NVIDIA driver without a reboot", "nvml_driver_mismatch"),
    ("GPU memory keeps growing after every request", "not_a_stack_problem"),
    ("my P40 is not supported by CUDA 13", "gpu_unsupported_by_cuda"),
]


@pytest.mark.parametrize("prose, code", CHINESE + ENGLISH)
def test_the_users_words_name_the_cause_at_a_low_confidence(prose, code):
    (first, *_) = read_text(prose + "\n").diagnoses
    assert first.code == code
    assert first.basis == "words" and first.confidence <= WORDS_MAX < 0.9
    said = first.explanations[0]
    assert said.id == "diagnose.from_words" and said.params["words"] in prose
    assert "user" not in render(said, "zh") and "报告的文字" in render(said, "zh")


def test_a_real_program_message_wins_over_the_users_words():
    log = ("I think my driver is too old\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    found = read_text(log).diagnoses
    assert (found[0].code, found[0].basis) == ("arch_not_in_build", "message")
    words = [d for d in found if d.basis == "words"]
    assert [d.code for d in words] == ["driver_too_old"] and words[0].confidence < found[0].confidence


def test_the_users_words_never_contradict_a_cause_a_message_names():
    # a driver that is too old cannot be the cause where none is loaded (codes.toml excludes), ...
    log = "RuntimeError: Found no NVIDIA driver on your system.\nmaybe the driver is too old?\n"
    assert [d.code for d in read_text(log).diagnoses][:1] == ["no_driver"]
    assert "driver_too_old" not in [d.code for d in read_text(log).diagnoses]
    # ...and no stack cause stands beside "the stack looks fine"
    bug = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\nmy driver is too old?\n"
    assert [d.code for d in read_text(bug).diagnoses] == ["not_a_stack_problem"]


def test_memory_said_to_grow_is_named_after_an_out_of_memory_never_beside_a_link_of_the_stack():
    # PyTorch's FAQ on "out of memory": memory kept across iterations is the program's; the OOM stays first
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.95 GiB. GPU 0 has a total capacity of "
           "39.56 GiB of which 1.78 GiB is free.\n")
    found = read_text(oom + "显存从最开始的30G一直上涨\n").diagnoses
    assert [(d.code, d.basis) for d in found[:2]] == [("insufficient_vram", "message"), ("not_a_stack_problem", "words")]
    assert "not_a_stack_problem" not in [d.code for d in read_text(oom).diagnoses]
    # "the stack is fine" never beside a failed link of the stack, whatever the words say
    arch = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert "not_a_stack_problem" not in [d.code for d in read_text(arch + "memory keeps growing\n").diagnoses]


def test_a_passing_state_names_no_cause_from_words():
    log = ("Successfully installed nvidia-cuda-runtime-cu12-12.4.127 torch-2.6.0\n"
           "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |\n"
           ">>> torch.cuda.is_available()\nTrue\n"
           "The driver and the CUDA version are fine, VRAM usage 3 GiB of 24 GiB.\n")
    reading = read_text(log)
    assert reading.diagnoses == () and not reading.no_known_cause


@pytest.mark.parametrize("prose", ["并不是因为 VRAM 不够，是数据的问题", "it's not because the driver is too old",
                                   "排除了 cuDNN 版本不匹配"])
def test_words_a_negation_denies_name_nothing(prose):
    assert read_text(prose + "\n").diagnoses == ()


def test_a_harmless_message_stays_harmless_whatever_words_it_holds():
    # "could not find TensorRT" in the user's words is a missing library; in TensorFlow's TF-TRT warning it is harmless
    said = read_text("could not find TensorRT on this box\n").diagnoses
    assert [(d.code, d.basis) for d in said] == [("cuda_library_missing", "words")]
    reading = read_text("2024-01-01 12:00:00.1: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT "
                        "Warning: Could not find TensorRT\n")
    assert reading.diagnoses == () and len(reading.harmless) == 1


# --- second and third causes ----------------------------------------------------------------------------------------

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def test_a_neighbour_with_its_terms_in_the_log_is_ranked_after_the_cause():
    found = read_text(NO_KERNEL + "training in bf16 with flash-attn on one GPU\n").diagnoses
    assert [(d.code, d.basis) for d in found][:2] == [("arch_not_in_build", "message"),
                                                      ("feature_arch_unsupported", "neighbour")]
    assert found[1].confidence < found[0].confidence and found[1].confidence <= 0.35
    assert found[1].evidence[0].line == 2 and found[1].explanations[0].params["term"] == "bf16"


def test_no_neighbour_without_its_terms_in_the_log():
    assert [d.code for d in read_text(NO_KERNEL).diagnoses] == ["arch_not_in_build"]


def test_a_neighbour_takes_a_free_place_and_the_near_misses_keep_theirs():
    log = ("ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
           "nvcc --version says 11.8; libcudnn.so.9 is there too\n")
    reading = read_text(log)
    found = reading.diagnoses
    assert found[0].code == "cuda_library_missing"
    assert [(d.code, d.basis) for d in found[1:]] == [("cudnn_mismatch", "neighbour")]
    assert found[0].confidence > found[1].confidence
    # the near miss keeps the last place: toolkit_mismatch's term (nvcc) is there, but no place is left for it
    assert reading.nearest and len(found) + len(reading.nearest) == 3


def test_a_neighbour_never_contradicts_a_cause_found():
    # cpu_only_build and arch_not_in_build exclude each other: the arch terms make no neighbour of a CPU-only build
    log = "AssertionError: Torch not compiled with CUDA enabled\nTORCH_CUDA_ARCH_LIST=8.6 sm_86\n"
    codes = [d.code for d in read_text(log).diagnoses]
    assert codes[0] == "cpu_only_build" and "arch_not_in_build" not in codes


def test_the_json_says_what_names_each_cause(tmp_path):
    path = tmp_path / "words.log"
    path.write_text("显卡算力不支持。训练用的是 bf16\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gpuvet", "diagnose", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)["diagnoses"]
    assert [(d["code"], d["basis"]) for d in found] == [("arch_not_in_build", "words"),
                                                        ("feature_arch_unsupported", "neighbour")]


# --- the data -------------------------------------------------------------------------------------------------------

def test_every_words_record_is_sourced_and_weighs_less_than_a_message():
    for record in WORDS["cause"]:
        assert record["code"] in FINDING_CODES
        assert record["source"].startswith("https://") and record["paraphrases"]
        assert 0 < record["weight"] <= WORDS_MAX
        assert record.get("nouns") or record.get("phrases")


def test_neighbours_and_exclusions_are_codes_and_never_both():
    for code, info in load_signatures().codes.items():
        assert not set(info.neighbours) & set(info.excludes), code
        for other in info.excludes:  # an exclusion holds both ways, so neither side may list the other as neighbour
            assert code not in load_signatures().codes[other].neighbours, (code, other)


def test_a_words_record_weighing_like_a_message_is_refused(tmp_path):
    (tmp_path / "codes.toml").write_text((DATA_DIR / "codes.toml").read_text())
    (tmp_path / "user_words.toml").write_text(
        '[[cause]]\ncode = "driver_too_old"\nweight = 0.8\nparaphrases = "x"\nsource = "https://e/"\n'
        "nouns = ['driver']\npredicates = ['too old']\n", encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="user_words.toml cause 1"):
        load_signatures(str(tmp_path))


# --- real environment reports: every fact named, nothing wrong said --------------------------------------------------

REPORTS = ("nvidia-smi", "nvidia-smi-q", "torch-collect-env", "vllm-collect-env", "pip-freeze", "pip-list",
           "nvcc-version", "conda-info", "transformers-env")


def _reports():
    root = REPO / "tests" / "fixtures"
    return sorted(p for folder in REPORTS for p in (root / folder).glob("*") if p.is_file() and p.suffix != ".md")


def test_real_environment_reports_name_no_cause_from_words():
    # driver, CUDA version, cuDNN, Python version, "compute capability" are all named there: no predicate is said
    reports = _reports()
    assert len(reports) >= 40
    for path in reports:
        said = [d.code for d in read_text(path.read_text(encoding="utf-8", errors="replace")).diagnoses
                if d.basis == "words"]
        assert said == [], path.name


def test_a_term_is_a_whole_word_never_part_of_a_cpu_flag():
    flags = "Flags: fpu vme avx512f avx512_bf16 avx512_vnni\n"
    found = read_text(NO_KERNEL + flags).diagnoses
    assert [d.code for d in found] == ["arch_not_in_build"]
    assert [d.code for d in read_text(NO_KERNEL + "training with bf16\n").diagnoses][:2] == [
        "arch_not_in_build", "feature_arch_unsupported"]


@pytest.mark.parametrize("name", ["fixtures/paddle1.4.1_cudnn-mismatch-warning.txt", "code: cudnn_mismatch",
                                  "--no-build-isolation flash-attn-fails-to-build.log"])
def test_a_name_joined_by_dashes_or_underscores_is_not_the_users_words(name):
    assert [d for d in read_text(name + "\n").diagnoses if d.basis == "words"] == []


@pytest.mark.parametrize("log", [
    "win11, still running on CPU\nWARNING:app.utils.gpu_utils:No GPU found, use CPU instead\n",
    "WIN10, RTX 2080\nllm device: cpu\nembedding device: cpu\n",
    "C:\\Users\\me\\app> python demo.py\n显示运行在CPU模式\n",
])
def test_a_gpu_unused_on_windows_is_first_the_cpu_build_pypi_serves_there(log):
    # PyPI's torch for Windows is the CPU build; the display driver is there on a Windows desktop with the card
    found = read_text(log).diagnoses
    assert found[0].code == "cpu_only_build" and found[0].basis == "words"


def test_a_gpu_unused_elsewhere_keeps_the_driver_reading():
    found = read_text("ubuntu 22.04 server\nWARNING:app.utils.gpu_utils:No GPU found, use CPU instead\n").diagnoses
    assert [d.code for d in found][:1] == ["no_driver"]


@pytest.mark.parametrize("prose, code", [
    ("I'm training on a V100 and can't use Flash 2 at all", "feature_arch_unsupported"),
    ("在 T4 上开启 bfloat16 训练就失败", "feature_arch_unsupported"),
    ("使用 3090 显卡，但还是报错 out of memory", "insufficient_vram"),
    ("限制显存后 24G跑不起来", "insufficient_vram"),
])
def test_more_of_the_users_words(prose, code):
    (first, *_) = read_text(prose + "\n").diagnoses
    assert (first.code, first.basis) == (code, "words")


def test_an_ampere_card_beside_flash_attention_names_no_arch_floor():
    assert "feature_arch_unsupported" not in [d.code for d in read_text("A100 with flash-attn 2.8.3 works\n").diagnoses]


@pytest.mark.parametrize("prose, code", [
    ("RVC1006Nvidia not working with 5090 rtx ?", "arch_not_in_build"),
    ("由于 GPU 架构过新，xformers 库无法找到对应的预编译二进制文件，导致程序启动失败", "feature_no_kernels"),
    ("GPU usage stays at 0% while the model runs", "cpu_only_build"),
])
def test_still_more_of_the_users_words(prose, code):
    (first, *_) = read_text(prose + "\n").diagnoses
    assert (first.code, first.basis) == (code, "words")

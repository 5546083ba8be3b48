"""The one list of input kinds: each kind is one entry, in detection order (most specific signature first).

An entry names the kind, how to recognise it from content alone (``detect``), how to parse it (``parse``), the
message id of its display name (``label``, in ``i18n/<lang>/ingest.toml``), the most text any real output of the tool
can hold (``max_chars``: longer input is refused with one InputError line before any parser runs), how to cut its
blocks out of a larger log (``find``; None when the kind is never looked for inside a log) and, for those, the
merge order inside a log (``embed_order``: a later block's found facts win, so the tools that measure the driver and
the GPUs directly, nvidia-smi above all, come last).

``gpuvet.ingest.KINDS``, :func:`parse`, ``detect_kind`` and ``parse_embedded`` all read this list; adding a kind is one
entry here plus its display name in both catalogs.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from gpuvet.ingest import (
    collect_env,
    conda_info,
    container_cli,
    docker_info,
    docker_inspect,
    ds_report,
    embedded_blocks,
    frameworks_env,
    ibstat,
    ldconfig,
    lspci,
    nvcc,
    packages,
    pixi_info,
    proc_version,
    selfchecks,
    sglang_env,
    smi_csv,
    smi_list,
    smi_p2p,
    smi_query,
    smi_table,
    smi_topo,
    smi_xml,
    spec,
)
from gpuvet.ingest.common import clean_text, input_error

Parser = Callable[[str, str], Dict[str, Any]]
Finder = Callable[[List[str]], List[str]]

MiB = 1024 * 1024
CAP = 32 * MiB  # the reader's own limit (gpuvet.ingest.reader.MAX_BYTES): kinds that can be that long
REPORT = 1 * MiB  # the environment reports: the longest real one (vLLM collect_env, 8 GPUs, 10 NICs) is ~15 KB


class Kind(NamedTuple):
    name: str
    detect: Callable[[str], bool]
    parse: Parser
    label: str
    max_chars: int = CAP
    find: Optional[Finder] = None
    embed_order: int = 50


def _snapshot(text: str) -> bool:
    if not text.lstrip().startswith("{"):
        return False
    try:
        document = json.loads(text)
    except ValueError:
        return False
    return isinstance(document, dict) and document.get("kind") == "snapshot"


def _load_snapshot(text: str, name: str) -> Dict[str, Any]:
    from gpuvet.snapshot import load_snapshot  # also turns JSON nested past the parser's depth into an InputError

    return load_snapshot(text, name)


def _kind(name: str, detect: Callable[[str], bool], parse: Parser, max_chars: int = CAP,
          find: Optional[Finder] = None, embed_order: int = 50) -> Kind:
    return Kind(name, detect, parse, "ingest.kind." + name, max_chars, find, embed_order)


# Order matters: a collect_env report contains "[pip3] torch==..." lines, an -q report mentions "Driver Version",
# vLLM's report contains torch's, jax's and SGLang's carry an nvidia-smi table or topology matrix, /proc's paste an nvcc line.
REGISTRY: Tuple[Kind, ...] = (
    _kind("snapshot", _snapshot, _load_snapshot),
    _kind("docker-inspect", docker_inspect.looks_like, docker_inspect.parse, 4 * MiB, docker_inspect.blocks, 16),
    _kind("nvidia-smi-xml", lambda text: "<nvidia_smi_log" in text, smi_xml.parse),
    _kind("nvidia-smi-q", smi_query.looks_like, smi_query.parse),
    _kind("vllm-collect-env", collect_env.looks_like_vllm, collect_env.parse_vllm, REPORT,
          collect_env.vllm_blocks, 22),
    _kind("collect-env", collect_env.looks_like, collect_env.parse, 4 * MiB, embedded_blocks.collect_env_blocks, 20),
    _kind("ds-report", ds_report.looks_like, ds_report.parse, 4 * MiB, embedded_blocks.ds_report_blocks, 30),
    _kind("sglang-check-env", sglang_env.looks_like, sglang_env.parse, REPORT, sglang_env.blocks, 24),
    _kind("jax-env", frameworks_env.looks_like_jax, frameworks_env.parse_jax, REPORT, frameworks_env.jax_blocks, 26),
    _kind("transformers-env", frameworks_env.looks_like_transformers, frameworks_env.parse_transformers, REPORT,
          frameworks_env.transformers_blocks, 12),
    _kind("accelerate-env", frameworks_env.looks_like_accelerate, frameworks_env.parse_accelerate, REPORT,
          frameworks_env.accelerate_blocks, 12),
    _kind("llamafactory-env", frameworks_env.looks_like_llamafactory, frameworks_env.parse_llamafactory, REPORT,
          frameworks_env.llamafactory_blocks, 12),
    _kind("xformers-info", frameworks_env.looks_like_xformers, frameworks_env.parse_xformers, REPORT,
          frameworks_env.xformers_blocks, 14),
    _kind("bitsandbytes", selfchecks.looks_like_bitsandbytes, selfchecks.parse_bitsandbytes, REPORT,
          selfchecks.bitsandbytes_blocks, 14),
    _kind("tensorflow-build-info", frameworks_env.looks_like_tensorflow, frameworks_env.parse_tensorflow, REPORT,
          frameworks_env.tensorflow_blocks, 14),
    _kind("paddle-run-check", selfchecks.looks_like_paddle, selfchecks.parse_paddle, REPORT,
          selfchecks.paddle_blocks, 14),
    _kind("mindspore-run-check", selfchecks.looks_like_mindspore, selfchecks.parse_mindspore, REPORT,
          selfchecks.mindspore_blocks, 14),
    # before /proc's report: both open with "NVRM version:" (here with the bare version, there the module's banner)
    _kind("nvidia-container-cli-info", container_cli.looks_like, container_cli.parse, REPORT, container_cli.blocks, 58),
    _kind("proc-nvidia-version", proc_version.looks_like, proc_version.parse, REPORT, proc_version.blocks, 60),
    _kind("nvidia-smi", smi_table.looks_like, smi_table.parse, find=embedded_blocks.smi_tables, embed_order=90),
    # before topo -m's detector, which would take any GPU matrix; P2P cells (OK, CNS, GNS ...) are never link types
    _kind("nvidia-smi-topo-p2p", smi_p2p.looks_like, smi_p2p.parse, REPORT, smi_p2p.blocks, 85),
    _kind("nvidia-smi-topo", smi_topo.looks_like, smi_topo.parse),
    _kind("nvidia-smi-list", smi_list.looks_like, smi_list.parse, find=embedded_blocks.smi_list_lines, embed_order=80),
    _kind("nvcc", nvcc.looks_like, nvcc.parse, 4 * MiB, embedded_blocks.nvcc_lines, 40),
    _kind("ldconfig", ldconfig.looks_like, ldconfig.parse, REPORT, ldconfig.blocks, 56),
    _kind("lspci", lspci.looks_like, lspci.parse, REPORT, lspci.blocks, 95),
    _kind("lspci-acs", lspci.looks_like_acs, lspci.parse_acs, REPORT, lspci.acs_blocks, 96),
    _kind("ibstat", ibstat.looks_like, ibstat.parse, REPORT, ibstat.blocks, 97),
    _kind("docker-info", docker_info.looks_like, docker_info.parse, REPORT, docker_info.blocks, 59),
    _kind("conda-info", conda_info.looks_like, conda_info.parse, REPORT, conda_info.blocks, 57),
    _kind("pixi-info", pixi_info.looks_like, pixi_info.parse, REPORT, pixi_info.blocks, 57),
    _kind("conda-list", packages.looks_like_conda, packages.parse_conda),
    _kind("pip-list", packages.looks_like_pip_list, packages.parse_pip_list, find=embedded_blocks.pip_list_blocks,
          embed_order=10),
    _kind("spec", spec.looks_like, spec.parse),
    _kind("nvidia-smi-csv", smi_csv.looks_like, smi_csv.parse),
    _kind("pip-freeze", packages.looks_like_freeze, packages.parse_freeze, find=embedded_blocks.freeze_blocks,
          embed_order=10),
)

BY_NAME: Dict[str, Kind] = {kind.name: kind for kind in REGISTRY}
NAMES: Tuple[str, ...] = tuple(kind.name for kind in REGISTRY)


def parse(kind: str, text: str, name: str = "<input>") -> Dict[str, Any]:
    """Parse ``text`` as ``kind`` (one of NAMES); InputError when it is not that kind or is cut off. Here, beside the
    list it dispatches on, so the reader and the screenshot path import it without going through the package."""
    entry = BY_NAME.get(kind)
    if entry is None:
        raise input_error("ingest.unknown_kind", "ingest.hint_kinds", kind=kind, kinds=", ".join(NAMES))
    if len(text) > entry.max_chars:
        raise input_error("ingest.kind_too_large", "ingest.hint_one_output", name=name, kind=kind,
                          size=len(text) // 1024, limit=entry.max_chars // 1024)
    cleaned = clean_text(text)
    if not cleaned.strip():
        raise input_error("ingest.empty", name=name)
    return entry.parse(cleaned, name)


def display_name(kind: str, lang: Optional[str] = None) -> str:
    """The kind's name for people ("vLLM collect_env report"), in the user's language; the kind itself if unknown."""
    from gpuvet.i18n import default_lang
    from gpuvet.i18n import text as i18n_text

    entry = BY_NAME.get(kind)
    if entry is None:
        return kind
    return i18n_text(lang or default_lang(), entry.label)

"""Regexes that fuzzing showed to be quadratic were rewritten to run in linear time; each rewrite must give exactly
what the former regex gave, on real captures and on generated lines (blank runs, colons, brackets, tabs). The same
holds for snapshot.merge_all, whose fold copied everything merged so far at each step."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import time
from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuvet.ingest.smi_query import build_tree
from gpuvet.probe.smi import csv_field

from .conftest import FIXTURES

_OLD_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>.+?)(?:\s+:(?:\s(?P<value>.*))?)?$")


def old_build_tree(text: str) -> List:
    """smi_query.build_tree as it was, with the lazy regex (the reference)."""
    root: List = []
    stack = [(-1, root)]
    for raw in text.split("\n"):
        if not raw.strip() or raw.strip().startswith("===="):
            continue
        match = _OLD_LINE.match(raw)
        if not match:
            continue
        indent = len(match.group("indent").expandtabs(4))
        key = match.group("key").strip()
        value = match.group("value")
        while stack[-1][0] >= indent:
            stack.pop()
        children: list = []
        stack[-1][1].append((key, value.strip() if value is not None else None, children))
        stack.append((indent, children))
    return root


def old_csv_field(header: str) -> str:
    return re.sub(r"\s*\[.*\]$", "", header.strip()).lower()


EXAMPLES = int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "400"))
line_parts = st.lists(st.sampled_from([" ", "  ", "\t", ":", " : ", "a", "Key", "Value", "[", "]", "MiB", "\u00a0",
                                       "GPU 00000000:18:00.0", "x" * 3, "    "]), max_size=12).map("".join)


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"))
@given(st.lists(line_parts, max_size=12).map("\n".join))
def test_query_tree_matches_the_former_regex(text):
    assert build_tree(text) == old_build_tree(text)


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"))
@given(line_parts)
def test_csv_field_matches_the_former_regex(header):
    assert csv_field(header) == old_csv_field(header)


def test_real_captures_give_the_same_tree_and_headers():
    for path in sorted((FIXTURES / "nvidia-smi-q").glob("*")):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert build_tree(text) == old_build_tree(text), path.name
    for path in sorted((FIXTURES / "nvidia-smi-query-gpu-csv").glob("*")):
        header = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        for cell in header.split(","):
            assert csv_field(cell) == old_csv_field(cell), path.name


def test_long_blank_runs_are_linear():
    line = "    Product Name" + " " * 200_000 + "x\n"
    # This process's CPU time, not the wall clock: a backtracking parse burns CPU, while other work on a shared machine
    # only delays the wall clock (these guards failed under a load of 8 on 2 cores with time.perf_counter).
    started = time.process_time()
    build_tree(line * 3)
    csv_field("memory.total" + " " * 200_000 + "x")
    assert time.process_time() - started < 1.0


def old_drop_remark(value: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]$", "", value)


remark_values = st.lists(st.sampled_from([" ", "\t", "[", "]", "x", "610.62", "Deprecated", ";", "  [", "] "]),
                         max_size=14).map("".join)


@settings(max_examples=EXAMPLES * 2, deadline=None, database=None, derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"))
@given(remark_values)
def test_drop_remark_matches_the_former_regex(value):
    from gpuvet.probe.smi import drop_remark

    assert drop_remark(value) == old_drop_remark(value)


def test_remarks_in_long_blank_and_bracket_runs_are_linear():
    from gpuvet.probe.smi import drop_remark, na

    # This process's CPU time, not the wall clock: a backtracking parse burns CPU, while other work on a shared machine
    # only delays the wall clock (these guards failed under a load of 8 on 2 cores with time.perf_counter).
    started = time.process_time()
    na("535.104.05" + "\t" * 200_000 + "x")
    drop_remark("[" * 200_000 + "]x]")
    assert time.process_time() - started < 1.0
    assert na("610.62 [Deprecated; will be removed]") == "610.62"


def old_merge_all(snapshots):
    """snapshot.merge_all as it was: merge() folded over the parts, copying all merged so far at each step."""
    from gpuvet.snapshot import merge, new_snapshot

    if not snapshots:
        return new_snapshot("merged")
    result = copy.deepcopy(dict(snapshots[0]))
    for other in snapshots[1:]:
        result = merge(result, other)
    return result


@functools.lru_cache(maxsize=None)
def _captures() -> tuple:
    """Snapshots of real captures of the kinds a provider's paste mixes, each parsed as its kind."""
    from gpuvet.ingest import detect_kind, parse

    parts = []
    for directory in ("nvidia-smi", "nvcc-version", "pip-list", "pip-freeze", "ibstat", "torch-collect-env",
                      "docker-info", "conda-info", "vllm-collect-env"):
        for path in sorted((FIXTURES / directory).glob("*"))[:3]:
            text = path.read_text(encoding="utf-8", errors="replace")
            kind = detect_kind(text)
            if kind is not None:
                parts.append(parse(kind, text, path.name))
    return tuple(parts)


@settings(max_examples=EXAMPLES // 4, deadline=None, database=None, derandomize=not os.environ.get("GPUVET_FUZZ_RANDOM"))
@given(st.data())
def test_merge_all_gives_what_the_fold_of_merge_gave(data):
    from gpuvet.snapshot import merge_all

    captures = _captures()
    picked = data.draw(st.lists(st.sampled_from(range(len(captures))), max_size=8))
    parts = [captures[i] for i in picked]
    for i in data.draw(st.lists(st.sampled_from(range(len(parts) or 1)), max_size=3)) if parts else ():
        parts[i] = {**parts[i], "origin": {**parts[i]["origin"], "host": "node%d" % i}}  # who carries a host
    given_parts = json.dumps(parts)
    assert json.dumps(merge_all(parts)) == json.dumps(old_merge_all(parts))  # byte for byte, key order included
    assert json.dumps(parts) == given_parts  # and the parts are left as they were


def _provider_paste(size: int) -> str:
    """A provider's paste of ``size`` characters: one nvidia-smi table, then nvcc, ibstat and pip outputs (full and
    grep'd) led by their `$ cmd` lines, repeated; every kind's block finder has blocks to cut out all along."""
    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8")

    head = "显卡信息：\n```\n$ nvidia-smi\n" + read("nvidia-smi/h100-nvl-2gpu_drv550.54.14.txt") + "```\n"
    unit = ("$ nvcc --version\n" + read("nvcc-version/cuda-12.5_V12.5.82.txt")
            + "\n$ ibstat\n" + read("ibstat/connectx4-1port_initializing_no-sm.txt")
            + "\n$ pip list | grep torch\ntorch    2.1.0+cu118\n\n$ pip freeze\nnumpy==1.26.4\ntorch==2.1.0+cu118\n"
            + "six==1.16.0\n> a quoted reply: NVIDIA-SMI, GPU 0: and Package Version in prose\n")
    return head + unit * max(1, (size - len(head)) // len(unit))


def test_a_large_provider_paste_is_read_in_linear_time():
    from gpuvet.ingest import detect_kind, parse
    from gpuvet.ingest.embedded import read_whole

    def cpu_seconds(text: str) -> float:
        # This process's CPU time (see above); the best of two runs, so a collection pause does not count
        times = []
        for _ in range(2):
            started = time.process_time()
            kind = detect_kind(text)
            snapshot = read_whole(parse(kind, text, "paste"), kind, text, "paste")
            times.append(time.process_time() - started)
        assert [entry.partition(":")[0] for entry in snapshot["origin"]["inputs"]] == [
            "nvidia-smi", "pip-list", "pip-freeze", "nvcc", "ibstat"]
        return min(times)

    small, large = cpu_seconds(_provider_paste(512 * 1024)), cpu_seconds(_provider_paste(4 * 1024 * 1024))
    # 8 times the text: linear is ~8 times the time, quadratic ~64; the bound leaves room for a noisy machine
    assert large < 24 * small, (small, large)

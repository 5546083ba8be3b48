"""Where the older kinds' outputs start and end inside a larger log: each finder takes the log's lines (quoting
already removed) and returns the text blocks to hand to that kind's parser. Every finder is one pass over the lines."""

from __future__ import annotations

import re
from typing import List

from gpuvet.ingest import nvcc, packages, smi_list, smi_table


def smi_tables(lines: List[str]) -> List[str]:
    blocks = []
    i = 0
    while i < len(lines):
        if "NVIDIA-SMI" in lines[i] and smi_table.BANNER.search(lines[i]):
            start = i - 1 if i > 0 and lines[i - 1].strip().startswith("+") else i
            end = i + 1
            blank_run = 0
            while end < len(lines):
                stripped = lines[end].strip()
                if not stripped:
                    blank_run += 1
                    if blank_run > 1:
                        break
                elif stripped[0] in "|+":
                    blank_run = 0
                else:
                    break
                end += 1
            blocks.append("\n".join(line.strip() for line in lines[start:end]))
            i = end
        else:
            i += 1
    return blocks


def collect_env_blocks(lines: List[str]) -> List[str]:
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        # "Collecting environment information...   PyTorch version: ..." when a paste ran the first two lines together
        if not (line.startswith("PyTorch version:") or line.startswith("Collecting") and "PyTorch version:" in line):
            i += 1
            continue
        start = i - 1 if i > 0 and "Collecting environment information" in lines[i - 1] else i
        end = i + 1
        in_libraries = False
        while end < len(lines):
            stripped = lines[end].strip()
            if stripped.startswith("Versions of relevant libraries"):
                in_libraries = True
            elif in_libraries and not stripped.startswith("["):
                break
            elif stripped.startswith("```") or stripped.startswith("PyTorch version:"):
                break
            end += 1
        blocks.append("\n".join(lines[start:end]))
        i = end
    return blocks


def ds_report_blocks(lines: List[str]) -> List[str]:
    blocks = []
    dots = re.compile(r"\.{2,}")
    for i, line in enumerate(lines):
        if "DeepSpeed general environment info" in line:
            end = i + 1
            while end < len(lines) and dots.search(lines[end]):
                end += 1
            blocks.append("\n".join(lines[i:end]))
    return blocks


def nvcc_lines(lines: List[str]) -> List[str]:
    return [line for line in lines if nvcc.RELEASE.search(line)][:1]


def smi_list_lines(lines: List[str]) -> List[str]:
    found = [line for line in lines if smi_list.GPU_LINE.search(line)]
    return ["\n".join(found)] if found else []


def freeze_blocks(lines: List[str]) -> List[str]:
    """Runs of >= 3 `name==version` lines (pip freeze)."""
    blocks: List[str] = []
    run: List[str] = []
    for line in lines + [""]:
        stripped = line.strip()
        if packages.FREEZE_LINE.match(stripped) and "==" in stripped or stripped.startswith("-e "):
            run.append(stripped)
            continue
        if len(run) >= 3:
            blocks.append("\n".join(run))
        run = []
    return blocks


def pip_list_blocks(lines: List[str]) -> List[str]:
    blocks: List[str] = []
    row = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s+\S+")
    i = 0
    while i < len(lines) - 1:
        if packages.PIP_LIST_HEADER.match(lines[i].strip()) and packages.PIP_LIST_RULE.match(lines[i + 1].strip()):
            end = i + 2
            while end < len(lines) and row.match(lines[end].strip()):
                end += 1
            blocks.append("\n".join(line.strip() for line in lines[i:end]))
            i = end
        else:
            i += 1
    return blocks

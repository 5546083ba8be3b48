"""Where the older kinds' outputs start and end inside a larger log: each finder takes the log's lines (quoting
already removed) and returns the text blocks to hand to that kind's parser. Every finder is one pass over the lines."""

from __future__ import annotations

import re
from typing import List, Optional

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


# The command line a paste shows before pip's output: "$ pip list | grep torch", "root@node:~# python3 -m pip freeze",
# "(venv) PS C:\\> pip3 list". Filtered through grep, the output it leads is too short (or headerless) to be
# recognised alone; led by this line it is pip's all the same.
PIP_COMMAND = re.compile(r"(?:^|[$#>%]\s*)(?:python[\d.]*\s+-m\s+)?pip[\d.]*\s+(?P<command>freeze|list)\b")
_LIST_ROW = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s+\S+")
_HEADERLESS_ROW = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s+\d\S*(?:\s+\S+)?$")  # "torch  2.1.0+cu118 [location]"


def _pip_command(line: str) -> Optional[str]:
    """``freeze`` or ``list`` when ``line`` runs pip freeze / pip list; None otherwise."""
    match = PIP_COMMAND.search(line) if "pip" in line else None
    return match.group("command") if match else None


def _between(stripped: str) -> bool:
    """A line that may stand between a command and its output: blank, or a Markdown fence."""
    return not stripped or stripped.startswith("```")


def freeze_blocks(lines: List[str]) -> List[str]:
    """Runs of >= 3 `name==version` lines (pip freeze), or of any length right after a `pip freeze`/`pip list`
    command line (``pip freeze | grep torch``)."""
    blocks: List[str] = []
    run: List[str] = []
    led = False  # the run follows a pip command line
    for line in lines + [""]:
        stripped = line.strip()
        if packages.FREEZE_LINE.match(stripped) and "==" in stripped or stripped.startswith("-e "):
            run.append(stripped)
            continue
        if len(run) >= 3 or run and led:
            blocks.append("\n".join(run))
        if run or not _between(stripped):
            led = _pip_command(stripped) is not None
        run = []
    return blocks


def pip_list_blocks(lines: List[str]) -> List[str]:
    """pip list's table (header, rule, rows), or its rows alone right after a `pip list | grep ...` command line
    (grep dropped the header; the rows are handed on under pip's own header so the one parser reads them)."""
    blocks: List[str] = []
    i = 0
    led = False
    while i < len(lines):  # to the last line: a paste may end on a grep'd row without a newline
        stripped = lines[i].strip()
        if i + 1 < len(lines) and packages.PIP_LIST_HEADER.match(stripped) \
                and packages.PIP_LIST_RULE.match(lines[i + 1].strip()):
            end = i + 2
            while end < len(lines) and _LIST_ROW.match(lines[end].strip()):
                end += 1
            blocks.append("\n".join(line.strip() for line in lines[i:end]))
            i, led = end, False
        elif led and _HEADERLESS_ROW.match(stripped):
            end = i
            while end < len(lines) and _HEADERLESS_ROW.match(lines[end].strip()):
                end += 1
            blocks.append("\n".join(["Package Version", "------- -------"] + [line.strip() for line in lines[i:end]]))
            i, led = end, False
        else:
            if not _between(stripped):
                led = _pip_command(stripped) == "list"
            i += 1
    return blocks

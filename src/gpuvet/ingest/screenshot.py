"""The lines OCR read from a screenshot -> a partial snapshot whose every fact says it was read from an image.

The text first goes through the kinds every paste goes through (``gpuvet.ingest.detect_kind``). A table OCR has
read loses its frame (``|`` and ``+---+`` are not text to it) and sometimes the blanks between words, so the kinds
a screenshot usually shows (the ``nvidia-smi`` table of every era, ``nvidia-smi -L``, ``nvcc --version`` and a
provider's console page listing GPU, driver, CUDA and image) also have readers here that need neither. Then every
value is checked against what can exist (:mod:`gpuvet.ingest.ocr_repair`) and only the facts gpuvet can check are
kept: driver, CUDA, GPU names, count and memory, toolkits, packages and frameworks. Facts carry source
``image:<kind>``; ``origin.images`` keeps the lines read and, for each fact, the line it was taken from, so a
report can set them beside each other.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from gpuvet.errors import InputError
from gpuvet.ingest import ocr_repair
from gpuvet.ingest.common import input_error, new_gpu, set_fact, set_missing, shell
from gpuvet.ingest.image import Box, Line
from gpuvet.ingest.packages import CONDA_HEADER, PIP_LIST_HEADER, PIP_LIST_RULE

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

SOURCE_PREFIX = "image:"

_BANNER = re.compile(  # OCR reads the M of "SMI" as H or N at times ("NVIDIA-SHI"), as in "MiB"
    r"NVIDIA\s*-?\s*S[MHN]I\s*(?P<smi>[0-9OolIS.,]+?)\s*(?:Driver|KMD)\s*Version\s*[:;.]?\s*(?P<driver>[0-9OolISB.,]+)"
    r"(?:.*?CUDA\s*(?:UMD\s*)?Version\s*[:;.]?\s*(?P<cuda>[0-9OolIS.,]+|N/A))?",
    re.IGNORECASE,
)
_BUS_ID = re.compile(r"[0-9A-Fa-fO]{4,8}\s*:\s*[0-9A-Fa-fO]{2}\s*:\s*[0-9A-Fa-fO]{2}\s*\.\s*[0-9A-Fa-f]")
# the persistence mode or driver model cell; OCR may glue the cell's border to it, read as 1, l or I ("0n1")
_ROW_TAIL = re.compile(r"\s+(?:On|Off|0n|0ff|WDDM|TCC|N/A)[1lI|]?\s*$", re.IGNORECASE)
# the index, sometimes glued to the name by OCR ("0NVIDIAA10", "0A100-SXM4-40GB": every name nvidia-smi prints
# starts with a capital letter, none with O or I); the Chinese recogniser reads a slashed 0 as θ
_ROW_INDEX = re.compile(r"^\s*(?P<index>[0-9OolIθΘ]{1,2})(?:\s+(?=\S)|(?=[A-HJ-NP-Z]))")
# "0MiB / 40537MiB"; OCR reads an M as H or N ("40537HiB", "0NiB"), B as 8 ("0Mi8"), and drops the thin "/" at
# times ("211MiB   8192MiB"): two amounts side by side are the memory cell all the same (a process line has one)
_MEMORY = re.compile(r"(?P<used>[0-9OolISB]+)\s*[MHN][i1lI]?[B8](?:\s*/\s*|\s+)(?P<total>[0-9OolISB]+)\s*[MHN][i1lI]?[B8]",
                     re.IGNORECASE)
_LIST_LINE = re.compile(r"^\W{0,3}GPU\s*(?P<index>[0-9OolI]{1,2})\s*[:：;]\s*(?P<rest>.*)$", re.IGNORECASE)
# the name ends where "(UUID:" begins; OCR drops the parenthesis at times
_LIST_NAME = re.compile(r"^(?P<name>.+?)\s*(?:\(\s*UUID|UUID\s*[:;])", re.IGNORECASE)
# "Cuda compilation tools, release 12.6, V12.6.85"; OCR has written "release1 12.6， V12.6.85": the V version is
# read on its own, the release only checks it
_NVCC = re.compile(r"(?:release|tools).*?\bV\s*(?P<version>[0-9OolIS]+\.[0-9OolIS]+\.[0-9OolIS]+)", re.IGNORECASE)
_NVCC_RELEASE = re.compile(r"release\s*(?P<release>[0-9OolIS]{1,2}\s*\.\s*[0-9OolIS])\s*[,.]", re.IGNORECASE)
# the command: torch.__version__ or torch.version.cuda; OCR reads the underscores as blanks at times
# ("print(torch.  version   torch.version.cuda)") or as a dash ("torch.__version_-")
_TORCH_COMMAND = re.compile(r"torch\s*\.\s*[_\s-]*version(?![A-Za-z])", re.IGNORECASE)
# what print(torch.__version__, torch.version.cuda[, torch.cuda.is_available()]) writes: "2.1.0+cu121 12.1 True".
# OCR drops the blank before "None" at times ("2.13.0+cpuNone"): a word, so no digit of the version or label is
# taken for it; a CUDA version glued to the label ("cu12112.1") is not split, as nothing tells where it begins
_TORCH_PRINTED = re.compile(r"^\s*(?P<version>[0-9OolIS]+(?:\.[0-9OolIS]+){1,2}(?:\+[0-9A-Za-z.]+?)?)"
                            r"(?:\s+(?P<cuda>[0-9OolIS]+\.[0-9OolIS]+|None)|\s*(?P<glued>None))"
                            r"(?:\s*(?:True|False))?\s*$")
_CONSOLE_DRIVER = re.compile(r"(?:驱动版本|驱动|Driver\s*Version|Driver)\s*[:：]?\s*(?P<value>[0-9OolISB.]{5,})",
                             re.IGNORECASE)
_CONSOLE_CUDA = re.compile(r"^\s*CUDA\s*(?:版本|Version)?\s*[:：]?\s*(?P<value>[0-9OolIS.]{2,5})\s*$", re.IGNORECASE)
_CONSOLE_GPU = re.compile(
    # a console sets its labels in a column of their own, often without a colon
    r"^\s*(?:GPU\s*型号|显卡型号|GPU型号|显卡|GPU\s*Model|GPU)\s*[:：]?\s+(?P<name>(?:NVIDIA|Tesla|GeForce|Quadro|RTX)\S*?.+?)"
    r"(?:\s*[x×*X]\s*(?P<count>\d{1,2})\s*(?:卡)?|\s+(?P<count_zh>\d{1,2})\s*卡)?\s*$",
    re.IGNORECASE,
)
_CONSOLE_IMAGE = re.compile(r"^\s*(?:镜像|Image)\s*[:：]?\s+(?P<value>.+)$", re.IGNORECASE)


# What the engine's recognizer alone reads in a rectangle (left, top, right, bottom) of the picture the boxes were
# found in; None where it cannot be read (outside the picture, no engine)
Recognize = Callable[[float, float, float, float], Optional[str]]


def snapshot_from_lines(lines: Sequence[Line], name: str, kb: KnowledgeBase,
                        recognize: Optional[Recognize] = None) -> Dict[str, Any]:
    """The snapshot the lines of one screenshot make; InputError (exit 2) when they show nothing gpuvet reads.
    ``recognize``: a second look at a part of the picture (:func:`after_name`), where the picture is at hand."""
    # NFKC: the Chinese recogniser writes full-width punctuation ("（UUID：" for "(UUID:"), which NFKC makes ASCII
    texts = [unicodedata.normalize("NFKC", line.text) for line in lines]
    if not any(text.strip() for text in texts):
        raise input_error("ingest.image_no_text", name=name)
    reading = _read_known_layout(texts, [line.boxes for line in lines])
    if reading is None:
        reading = _read_through_paste_kinds(texts, name)
    if reading is None:
        raise input_error("ingest.image_undetected", "ingest.hint_image", name=name)
    kind, raw = reading
    snapshot, taken = _checked_snapshot(kind, raw, texts, name, kb, recognize)
    snapshot.setdefault("origin", {})["images"] = [{"file": name, "kind": kind, "lines": texts, "facts": taken}]
    return snapshot


# ------------------------------------------------------------------------------------------------ readers
Raw = Dict[str, Any]


def _read_known_layout(texts: List[str], boxes: List[Tuple[Box, ...]]) -> Optional[Tuple[str, Raw]]:
    table = _read_smi_table(texts, boxes)
    if table is not None:
        return table
    for reader in (_read_smi_list, _read_nvcc, _read_torch_print, _read_console):
        found = reader(texts)
        if found is not None:
            return found
    return None


def _frameless(text: str) -> str:
    """The line without the table's frame: OCR reads a lone "|" as itself, "｜", "丨" or "一"."""
    return re.sub(r"[|¦｜]|(?<!\S)[一丨](?!\S)", " ", text)


def _read_smi_table(texts: List[str], boxes: List[Tuple[Box, ...]]) -> Optional[Tuple[str, Raw]]:
    at_banner = next(((i, match) for i, match in enumerate(_BANNER.search(_frameless(t)) for t in texts) if match), None)
    if at_banner is None:
        return None
    i, banner = at_banner
    raw: Raw = {"driver": (banner.group("driver"), texts[i]), "cuda": (banner.group("cuda"), texts[i]), "gpus": []}
    for j in range(i + 1, len(texts)):
        text = _frameless(texts[j])
        bus = _BUS_ID.search(text)
        if not bus:
            continue
        # the cell border before the bus id, read as 1, l or I, then the persistence or driver-model cell
        before = _ROW_TAIL.sub("", re.sub(r"\s[1lI]$", "", text[: bus.start()].rstrip()))
        index = _ROW_INDEX.match(before)
        gpu_name = before[index.end():] if index else before
        memory = None
        for following in texts[j + 1 : j + 3]:
            found = _MEMORY.search(following)
            if found:
                memory = (found.group("total"), following)
                break
        raw["gpus"].append({"index": ocr_repair.digits(index.group("index")) if index else None,
                            "name": (gpu_name.strip(), texts[j]), "memory": memory, "table": True,
                            "cells": name_cells(boxes[j]) if j < len(boxes) else None,
                            "boxes": boxes[j] if j < len(boxes) else ()})
    # every GPU of the table has one memory cell ("0MiB / 81559MiB") before the processes or MIG devices
    section = []
    for text in texts[i + 1:]:
        if re.search(r"Processes|MIG\s*devices", text, re.IGNORECASE):
            break
        section.append(text)
    raw["memory_cells"] = sum(1 for text in section if _MEMORY.search(text))
    return "nvidia-smi", raw


# a box may hold the cell's border after its text ("00000000:0C:00.0 0ff|", "off|"): the detector joins a "|" one
# blank away, and that blank and bar are two more cells of the bus id box's width
_BUS_BOX = re.compile(r"^\s*(?P<bus>[0-9A-Fa-fO]{4,8}:[0-9A-Fa-fO]{2}:[0-9A-Fa-fO]{2}\.[0-9A-Fa-f])"
                      r"\s*(?P<display>On|Off|0n|0ff)?\s*(?P<border>[|｜丨]|(?<=[nf])[1lI])?\s*$", re.IGNORECASE)
_INDEX_BOX = re.compile(r"^\s*[0-9OolI]{1,2}\s*$")
_PERSISTENCE_BOX = re.compile(r"^\s*(?:On|Off|0n|0ff|WDDM|TCC)\s*(?:[|｜丨]|(?<=[nfMC])[1lI])?\s*$", re.IGNORECASE)
# The detector's box reaches past the ink by about 0.6 of its height in all (PP-OCR's unclip, measured on the corpus
# of bench/RESULTS.md): taken off both boxes before their widths are compared
_BOX_PADDING = 0.6


def _ruler(row: Sequence[Box]) -> Optional[Tuple[Box, float, List[Box]]]:
    """(the bus id box, the width of one cell in pixels, the name's boxes) of a table row; None without a bus id."""
    bus = next((box for box in row if _BUS_BOX.match(unicodedata.normalize("NFKC", box.text))), None)
    if bus is None:
        return None
    found = _BUS_BOX.match(unicodedata.normalize("NFKC", bus.text))
    assert found is not None
    bus_cells = len(re.sub(r"\s+", "", found.group("bus"))) + (1 + len(found.group("display"))
                                                                  if found.group("display") else 0)
    if found.group("border"):
        bus_cells += 2
    name = [box for box in row if box.right <= bus.left and not _INDEX_BOX.match(box.text)
            and not _PERSISTENCE_BOX.match(box.text)]
    cell = (bus.right - bus.left - _BOX_PADDING * (bus.bottom - bus.top)) / bus_cells
    if not name or cell <= 0:
        return None
    return bus, cell, name


def name_cells(row: Sequence[Box]) -> Optional[float]:
    """How many terminal cells the GPU name of a table row spans on the screen, or None when the row gives no ruler.
    The ruler is the bus id box beside it, whose width in cells is known ("00000000:01:00.0" is 16 cells, with its
    " Off" 20), so the answer holds at any font size or scale. The name's boxes are those between the index and the
    bus id, the persistence mode excepted; the screen right after the last of them must be blank (measured by the
    engine, :func:`gpuvet.ingest.ocr_engine.ink_after`), else the box may have left out a "..." it ends in. Ink there
    only ever makes the name unknown, never a cut one: a whole name's box in a 1080-pixel JPEG has some too (ringing,
    bench/RESULTS.md); :func:`after_name` reads what it is."""
    ruler = _ruler(row)
    if ruler is None:
        return None
    bus, cell, name = ruler
    if max(name, key=lambda box: box.right).ink_after != 0:
        return None  # the screen is not blank after the name's box: a "..." the box left out may be there
    padding = _BOX_PADDING * (bus.bottom - bus.top)
    first = min(name, key=lambda box: box.left)
    # the index glued into the name's box ("0NVIDIA GeForce RTX 5090"): the box begins at the index, which nvidia-smi
    # prints two blanks before the name
    glued = re.match(r"^\s*([0-9OolI]{1,2})(?:\s+|(?=[A-HJ-NP-Z]))", unicodedata.normalize("NFKC", first.text))
    skipped = len(glued.group(1)) + 2 if glued else 0
    return (max(box.right for box in name) - first.left - padding) / cell - skipped


class NameField(NamedTuple):
    """nvidia-smi's name field in one driver era's table (kb/data/smi_table.toml)."""

    width: int  # cells; a longer name is printed as its first (width - 3) characters and "..."
    to_bus: int  # cells from the name's first character to the bus id's


def name_field(driver: Optional[str]) -> Optional[NameField]:
    """The name field of the table ``driver`` prints, or None for a driver of no known layout."""
    from gpuvet.kb.loader import data_path, raw

    if not driver or not re.match(r"^\d+(\.\d+)+$", driver):
        return None
    version = tuple(int(part) for part in driver.split("."))
    for layout in raw(data_path("smi_table.toml")).get("layout", ()):
        first = tuple(int(part) for part in layout["first"].split("."))
        last = tuple(int(part) for part in layout["last"].split(".")) if layout.get("last") else None
        if first <= version and (last is None or version <= last):
            return NameField(int(layout["name_width"]), int(layout["name_to_bus"]))
    return None


# dots right after a letter or digit at the end of a reading: nvidia-smi's "..." (the recognizer reads the dots,
# which sit on the baseline, against the name before them; alone it misses them: bench/RESULTS.md)
_DOTS = re.compile(r"[0-9A-Za-z](?:[.\u3002\u00b7]{2,}|[.\u3002\u00b7]?\u2026[.\u2026]*)$")


def after_rectangle(row: Sequence[Box], field: Optional[NameField]) -> Optional[Tuple[Box, Tuple[float, float, float, float]]]:
    """(the name's last box, the rectangle from its left edge to the end of the name field): where a table row's
    name is read again. The field's end is located from the bus id box (``field.to_bus`` cells after the name
    begins, ``field.width`` of them the name's), so an index glued to the name does not move it. None where the row
    has no ruler, the layout is unknown, or the box already reaches the field's end."""
    ruler = _ruler(row)
    if ruler is None or field is None:
        return None
    bus, cell, name = ruler
    last = max(name, key=lambda box: box.right)
    field_end = bus.left + _BOX_PADDING * (bus.bottom - bus.top) / 2 - (field.to_bus - field.width) * cell
    if field_end <= last.right:
        return None  # nothing after the box to read
    return last, (last.left, last.top, field_end + 0.3 * cell, last.bottom)


def read_after(text: Optional[str], shown: str) -> Optional[str]:
    """"cut" where what the recognizer alone read over the name's last box and on to the field's end (``text``;
    ``shown``: the box's own text) ends in dots ("...", "..", "…") right after a letter or digit; None for anything
    else. A reading without dots says nothing: the recognizer given the dots has also dropped them ("GeForceRTX2080"
    for "GeForce RTX2080 ..." in a JPEG of the tmux corpus, bench/RESULTS.md), so it never makes a name whole."""
    if text is None:
        return None
    read = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
    return "cut" if _DOTS.search(read) and re.search(r"[0-9A-Za-z]", shown) else None


def after_name(row: Sequence[Box], field: Optional[NameField], recognize: Optional[Recognize]) -> Optional[str]:
    """"cut" or None: the recognizer alone reads the name's last box again, on to the end of the name field
    (:func:`after_rectangle`, :func:`read_after`). The detector leaves nvidia-smi's "..." out of a name's box at
    times, and in a chat JPEG ringing after a whole name shows as ink as well as the dots do, so ink alone decides
    nothing; the recognizer given the name with what follows it reads the dots where they are (bench/RESULTS.md)."""
    found = after_rectangle(row, field)
    if found is None or recognize is None:
        return None
    last, rectangle = found
    return read_after(recognize(*rectangle), last.text)


def _count_agrees(gpus: List[Dict[str, Any]], second_count: Optional[int]) -> bool:
    """Whether the GPUs read can be trusted as all of them: the numbering read (where readable) is 0, 1, 2 ...
    and a second count of the same picture (the table's memory cells) agrees. A row OCR lost or a misread index
    would otherwise change the GPU count without a sign."""
    indexes = [g.get("index") for g in gpus]
    if all(index is not None and index.isdigit() for index in indexes):
        if [int(str(index)) for index in indexes] != list(range(len(gpus))):
            return False
    return second_count is None or second_count == len(gpus)


def _read_smi_list(texts: List[str]) -> Optional[Tuple[str, Raw]]:
    """One entry per "GPU N:" line, its name unknown where OCR lost the "(UUID" that ends it; an index the picture
    skips (a line OCR did not find) is a GPU whose name is unknown, so the count stays right."""
    by_index: Dict[int, Dict[str, Any]] = {}
    for text in texts:
        found = _LIST_LINE.match(text)
        if not found or not re.search(r"UU|GPU-", found.group("rest"), re.IGNORECASE):  # what a -L line ends with
            continue
        index = ocr_repair.digits(found.group("index"))
        if not index.isdigit() or int(index) in by_index:
            continue
        name = _LIST_NAME.match(found.group("rest"))
        by_index[int(index)] = {"index": index, "name": (name.group("name") if name else "", text), "memory": None}
    if not by_index:
        return None
    return "nvidia-smi-list", {"gpus": [by_index[i] for i in sorted(by_index)]}


def _read_nvcc(texts: List[str]) -> Optional[Tuple[str, Raw]]:
    for text in texts:
        found = _NVCC.search(text)
        if found:
            release = _NVCC_RELEASE.search(text)
            return "nvcc", {"toolkit": ((release.group("release") if release else None, found.group("version")), text)}
    return None


def _read_torch_print(texts: List[str]) -> Optional[Tuple[str, Raw]]:
    """``python -c "import torch; print(torch.__version__, torch.version.cuda)"`` and the line it printed; only
    with the command in the picture (two bare numbers could be anything)."""
    for i, text in enumerate(texts):
        if not _TORCH_COMMAND.search(text):
            continue
        for printed in texts[i + 1 : i + 3]:
            found = _TORCH_PRINTED.match(printed)
            if found:
                cuda = found.group("cuda") or found.group("glued")
                return "torch-version", {"torch": ((found.group("version"), cuda), printed)}
    return None


def _read_console(texts: List[str]) -> Optional[Tuple[str, Raw]]:
    raw: Raw = {}
    for text in texts:
        driver = _CONSOLE_DRIVER.search(text)
        if driver and "driver" not in raw:
            raw["driver"] = (driver.group("value"), text)
            continue
        cuda = _CONSOLE_CUDA.match(text)
        if cuda and "cuda" not in raw:
            raw["cuda"] = (cuda.group("value"), text)
            continue
        gpu = _CONSOLE_GPU.match(text)
        if gpu and "gpus" not in raw:
            count = gpu.group("count") or gpu.group("count_zh") or "1"
            raw["gpus"] = [{"index": str(i), "name": (gpu.group("name"), text), "memory": None}
                           for i in range(int(count))]
            continue
        image = _CONSOLE_IMAGE.match(text)
        if image and "image" not in raw:
            raw["image"] = (image.group("value"), text)
    if "driver" not in raw and "gpus" not in raw:
        return None
    return "console", raw


# the shell prompt above and below a command's output in a screenshot ("root@gpu-node-07:~# pip list"); OCR reads
# the @ as "e" at times
_SHELL_PROMPT = re.compile(r"^\s*[\w.-]+[@e][\w.-]+:[~\-/\w.]*\s*[#$]")
# conda list's column header: Name, Version, Build, Channel, with the letters OCR confuses (m/n, l/t/i), a blank
# OCR puts inside a word or drops between two ("BuildChannel"); the four columns and "Channel" last tell it
_CONDA_HEADER_READ = re.compile(r"^\s*#?\s*N\w{2,3}\s+V\w{5,6}\s+B\w{1,3}\s?\w{1,3}\s*Channel\s*$", re.IGNORECASE)
_CONDA_CUT_BUILD = re.compile(r"^(?P<head>\s*[A-Za-z0-9_][\w.-]*[A-Za-z0-9]\s+[0-9OolIS][\w.+!]*[0-9A-Za-z]\s+\S+)\s+"
                              r"(?P<tail>\S+\s+[A-Za-z][\w.-]*\s*)$")
_FREEZE_PIN = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._]|-(?![-=]))*?)\s*(?:=-|-=|--|=)\s*"
                         r"(?P<version>\d[\w.+!]*)\s*$")


def _read_through_paste_kinds(texts: List[str], name: str) -> Optional[Tuple[str, Raw]]:
    """Listings OCR keeps line for line (pip list, pip freeze, conda list): the paste kinds' own parsers."""
    from gpuvet.ingest.detect import detect_kind
    from gpuvet.ingest.registry import parse

    written = [text for text in texts if text.strip() and not _SHELL_PROMPT.match(text)]
    if sum("==" in text for text in written) >= 3:
        # a pip freeze listing: OCR reads some "==" as "=", "--", "=-" ("torch=2.13.0+cpu")
        written = [_FREEZE_PIN.sub(r"\g<name>==\g<version>", text) for text in written]
    if not any(CONDA_HEADER.match(text.strip()) for text in written[:4]):
        for i, text in enumerate(written[:4]):
            if _CONDA_HEADER_READ.match(text):
                # conda list's header as OCR reads it ("Nane  version  Buitd Channel", "#Name Version Bui Ld
                # Channel"), and conda list's detector looks for it: the header holds no value, it names the listing
                written[i] = "# Name                    Version                   Build  Channel"
                break
    if any(CONDA_HEADER.match(text.strip()) for text in written[:4]):
        # a conda row is name, version, build and channel, none with a blank in it: five words are a build string
        # OCR cut in two ("py3.9_cuda11.8c cudnn8.7.0_0"), joined again as read; a cut name or version is left
        # as it is (its row is then no package that exists, or no version, and is dropped)
        written = [_CONDA_CUT_BUILD.sub(r"\g<head>\g<tail>", text) for text in written]
    if len(written) >= 2 and PIP_LIST_HEADER.match(written[0].strip()) and not PIP_LIST_RULE.match(written[1].strip()):
        # OCR does not read the rule of dashes under pip list's header, and pip list's detector looks for it
        written.insert(1, "------- -------")
    text = "\n".join(written)
    kind = detect_kind(text)
    if kind is None:
        return None
    try:
        parsed = parse(kind, text, name)
    except InputError:
        return None
    packages = (parsed.get("packages") or {}).get("value")
    if not packages:
        return None  # other kinds carry facts OCR cannot be trusted with (temperatures, UUIDs, paths)
    return kind, {"packages": [(record, _line_naming(texts, record["name"])) for record in packages]}


def _line_naming(texts: List[str], package: str) -> str:
    wanted = re.sub(r"[-_.]+", "", package.lower())
    for text in texts:
        if wanted in re.sub(r"[-_.]+", "", text.lower()):
            return text
    return ""


# ------------------------------------------------------------------------------------------ checked facts
def _checked_snapshot(kind: str, raw: Raw, texts: List[str], name: str, kb: KnowledgeBase,
                      recognize: Optional[Recognize] = None) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    source = SOURCE_PREFIX + kind
    snapshot = shell(source, name)
    taken: List[Dict[str, Any]] = []

    def take(fact: str, value: Any, read: Any, line: str) -> None:
        taken.append({"fact": fact, "value": value, "read": read, "line": line})

    if "driver" in raw or "cuda" in raw:
        _driver_facts(snapshot, raw, source, kb, take)
    if raw.get("gpus"):
        if _count_agrees(raw["gpus"], raw.get("memory_cells")):
            driver = ((snapshot.get("driver") or {}).get("version") or {})
            field = name_field(driver.get("value") if driver.get("status") == "found" else None)
            _gpu_facts(snapshot, raw["gpus"], source, kb, take, field, recognize)
        else:
            reason = ("the image shows {} GPU rows numbered {} and {} memory cells: a row was lost or misread, so "
                      "the GPUs are not trusted".format(len(raw["gpus"]), [g.get("index") for g in raw["gpus"]],
                                                         raw.get("memory_cells")))
            set_missing(snapshot, "gpus", reason)
            take("gpus", None, len(raw["gpus"]), "")
    if "toolkit" in raw:
        (release, version), line = raw["toolkit"]
        checked = _toolkit_version(release, version, kb)
        take("cuda_toolkits", checked, version, line)
        if checked:
            set_fact(snapshot, "cuda_toolkits", [{"version": checked, "release": checked.rsplit(".", 1)[0],
                                                  "path": None, "nvcc": "nvcc", "on_path": True, "source": source}],
                     source)
        else:
            set_missing(snapshot, "cuda_toolkits", _unreadable("nvcc --version", version))
    if "image" in raw:
        _console_image(snapshot, raw["image"], source, take)
    if "torch" in raw:
        _torch_printed(snapshot, raw["torch"], source, kb, take)
    if raw.get("packages"):
        _package_facts(snapshot, raw["packages"], source, take)
    return snapshot, taken


def _unreadable(what: str, read: Any) -> str:
    return "{} read from the image as {!r} is no value that exists; not guessed".format(what, read)


def _known_cudas(kb: KnowledgeBase) -> List[str]:
    from gpuvet.kb import versions
    from gpuvet.kb.loader import data_path, raw

    table = raw(data_path("cuda_driver.toml"))
    known = set()
    for record in list(table.get("toolkit", ())) + list(table.get("branch", ())):
        mm = versions.cuda_major_minor(record["cuda"])
        if mm:
            known.add("{}.{}".format(*mm))
    return sorted(known)


def _driver_facts(snapshot: Dict[str, Any], raw: Raw, source: str, kb: KnowledgeBase, take: Any) -> None:
    driver_read, driver_line = raw.get("driver") or (None, "")
    cuda_read, cuda_line = raw.get("cuda") or (None, "")
    driver = ocr_repair.repair_driver(driver_read, kb)
    expected = kb.cuda_for_driver(driver) if driver else None
    readable_cuda = ocr_repair.repair_cuda(cuda_read, _known_cudas(kb)) if cuda_read and cuda_read != "N/A" else None
    cuda = readable_cuda if expected is None else ocr_repair.repair_cuda(cuda_read, [expected], expected)
    if driver and readable_cuda and readable_cuda != expected:
        # a branch whose CUDA is not the one beside it: one of the two was misread, and nothing says which
        reason = ("driver {} and CUDA {} read from the image do not belong together (that branch reports CUDA {}); "
                  "neither is trusted".format(driver, readable_cuda, expected))
        driver = cuda = None
        set_missing(snapshot, "driver.version", reason)
        set_missing(snapshot, "driver.cuda_max", reason)
    if driver_read is not None:
        take("driver.version", driver, driver_read, driver_line)
        if driver:
            set_fact(snapshot, "driver.version", driver, source, **_as_read(driver, driver_read))
        elif "driver" not in snapshot or snapshot["driver"].get("version") is None:
            set_missing(snapshot, "driver.version", _unreadable("the driver version", driver_read))
    if cuda_read is not None and cuda_read != "N/A":
        take("driver.cuda_max", cuda, cuda_read, cuda_line)
        if cuda:
            set_fact(snapshot, "driver.cuda_max", cuda, source, **_as_read(cuda, cuda_read))
        elif snapshot.get("driver", {}).get("cuda_max") is None:
            set_missing(snapshot, "driver.cuda_max", _unreadable("the CUDA version", cuda_read))


def _as_read(value: str, read: str) -> Dict[str, str]:
    """``read_as`` when the value differs from the text OCR gave (the repair is shown, never hidden)."""
    return {} if value == read.strip() else {"read_as": read.strip()}


def _gpu_facts(snapshot: Dict[str, Any], raw_gpus: List[Dict[str, Any]], source: str, kb: KnowledgeBase, take: Any,
               field: Optional[NameField] = None, recognize: Optional[Recognize] = None) -> None:
    models = kb.gpu_models()
    gpus = []
    for position, entry in enumerate(raw_gpus):
        name_read, line = entry["name"]
        memory_read, memory_line = entry.get("memory") or (None, "")
        total = ocr_repair.repair_mib(memory_read)
        row: Tuple[Box, ...] = tuple(entry.get("boxes") or ())
        second_look: Optional[Callable[[], Optional[str]]] = None
        if row and recognize is not None:
            second_look = functools.partial(after_name, row, field, recognize)
        gpu_name = ocr_repair.repair_gpu_name(
            name_read, models, table=entry.get("table", False), memory_mib=total, cells=entry.get("cells"),
            name_width=field.width if field else None, after=second_look)
        index = entry.get("index")
        gpu = new_gpu(int(index) if index and index.isdigit() else position, gpu_name)
        if gpu_name is None:
            gpu["name_read"] = name_read
        take("gpus[{}].name".format(gpu["index"]), gpu_name, name_read, line)
        if memory_read is not None:
            if ocr_repair.memory_fits(total, kb.gpu(gpu_name) if gpu_name else None) is False:
                total = None  # memory this model cannot have: misread
            if gpu_name is None and total is not None and not re.match(r"^\d+$", memory_read.strip()):
                total = None  # repaired digits with no model to check them against
            gpu["memory_total_mib"] = total
            take("gpus[{}].memory_total_mib".format(gpu["index"]), total, memory_read, memory_line)
        gpus.append(gpu)
    set_fact(snapshot, "gpus", gpus, source)


def _toolkit_version(release: Optional[str], version: str, kb: KnowledgeBase) -> Optional[str]:
    """The nvcc version ("12.4.131") when it names a CUDA release that exists and, where the release beside it is
    readable, agrees with it."""
    full = ocr_repair.digits(version).strip(".")
    if not re.match(r"^\d+\.\d+\.\d+$", full):
        return None
    mm = full.rsplit(".", 1)[0]
    if mm not in _known_cudas(kb):
        return None
    if release is not None and ocr_repair.repair_cuda(release, _known_cudas(kb)) not in (None, mm):
        return None
    return full


def _console_image(snapshot: Dict[str, Any], image: Tuple[str, str], source: str, take: Any) -> None:
    """"PyTorch 2.1.0 / Python 3.10 / CUDA 12.1": the framework and Python of a console's image, when readable."""
    value, line = image
    torch = re.search(r"(?:PyTorch|torch)\s*[:：]?\s*(?P<version>[0-9OolIS]+(?:\.[0-9OolIS]+){1,2})", value, re.IGNORECASE)
    if torch:
        version = ocr_repair.repair_release(torch.group("version"))
        take("frameworks.torch", version, torch.group("version"), line)
        if version:
            info: Dict[str, Any] = {"version": version, "source": source}
            cuda = re.search(r"CUDA\s*[:：]?\s*(?P<cuda>\d+\.\d)\b", value, re.IGNORECASE)
            if cuda:
                info["cuda"] = cuda.group("cuda")
            set_fact(snapshot, "frameworks", {"torch": info}, source)
    python = re.search(r"Python\s*[:：]?\s*(?P<version>3\.\d{1,2})\b", value, re.IGNORECASE)
    if python:
        from gpuvet.ingest.common import python_record

        take("python", python.group("version"), python.group("version"), line)
        set_fact(snapshot, "python", python_record(python.group("version")), source)


def _torch_printed(snapshot: Dict[str, Any], printed: Tuple[Tuple[str, str], str], source: str, kb: KnowledgeBase,
                   take: Any) -> None:
    """torch's version and the CUDA it was built with (None: a CPU build), as torch printed them."""
    from gpuvet.probe.packages import build_from_local_label

    (version_read, cuda_read), line = printed
    version = ocr_repair.repair_release(version_read)
    take("frameworks.torch", version, version_read, line)
    if version is None:
        return
    info: Dict[str, Any] = {"version": version, "source": source, **build_from_local_label(version)}
    cuda = None if cuda_read == "None" else ocr_repair.repair_cuda(cuda_read, _known_cudas(kb))
    label_cuda = info.get("cuda")
    if cuda_read == "None" or (cuda and (label_cuda is None or label_cuda == cuda)):
        info["cuda"] = cuda  # the local label (+cu121) and the printed CUDA agree, or the build says it has none
        take("frameworks.torch.cuda", cuda, cuda_read, line)
    else:
        info.pop("cuda", None)  # the two disagree or the CUDA is unreadable: unknown
        take("frameworks.torch.cuda", None, cuda_read, line)
    set_fact(snapshot, "frameworks", {"torch": info}, source)


def _package_facts(snapshot: Dict[str, Any], entries: List[Tuple[Dict[str, Any], str]], source: str, take: Any) -> None:
    from gpuvet.ingest import packages as package_parsers

    records = []
    for record, line in entries:
        version = ocr_repair.repair_release(record.get("version"))
        if version is None:
            continue
        kept = {**record, "version": version}
        if version != record.get("version"):
            kept["read_as"] = record.get("version")
        records.append(kept)
        if package_parsers.canonical_name(record["name"]) in _FRAMEWORK_PACKAGES:
            take("packages." + record["name"], version, record.get("version"), line)
    if not records:
        return
    set_fact(snapshot, "packages", sorted(records, key=lambda p: p["name"]), source)
    frameworks = package_parsers.frameworks_from(records, source)
    if frameworks:
        set_fact(snapshot, "frameworks", frameworks, source)
    for library in ("cudnn", "nccl"):
        found = package_parsers.libraries_from(records, library, source)
        if found:
            set_fact(snapshot, library, found, source)


_FRAMEWORK_PACKAGES = frozenset((
    "torch", "torchvision", "torchaudio", "vllm", "jax", "jaxlib", "tensorflow", "paddlepaddle-gpu", "xformers",
    "flash-attn", "sglang", "nvidia-cudnn-cu12", "nvidia-nccl-cu12", "nvidia-cuda-runtime-cu12", "pytorch",
    "pytorch-cuda", "cudatoolkit", "transformers", "deepspeed", "onnxruntime-gpu", "triton",
))

"""Values read from a screenshot, checked against what can exist before they become facts.

OCR confuses O and 0, l/I and 1, S and 5, B and 8, drops decimal points and the blanks between words. In a field
that can only hold digits those letters have one meaning, and a driver version's shape (NNN.NN, NNN.NN.NN,
NNN.NNN.NN) puts a dropped point back in one place only; the result must still be something that exists: a driver
of a branch NVIDIA published whose CUDA is the CUDA the same banner shows, a GPU model the knowledge base knows
(one model only), memory that model has. Anything that cannot be brought to exactly one such value is None:
unknown, never guessed. Pure functions; the knowledge base is passed in.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Sequence

from gpuvet.kb import gpumatch
from gpuvet.kb.records import GpuModel

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# Letters OCR reads for digits on a terminal font; only ever applied inside a field that holds digits.
_DIGIT_FOR = str.maketrans({"O": "0", "o": "0", "D": "0", "Q": "0", "θ": "0", "Θ": "0", "l": "1", "I": "1", "i": "1", "|": "1",
                            "!": "1", "S": "5", "s": "5", "B": "8", "Z": "2", "z": "2", "g": "9", ",": "."})
_DRIVER_SHAPES = (re.compile(r"^\d{3}\.\d{2}$"), re.compile(r"^\d{3}\.\d{2}\.\d{2}$"), re.compile(r"^\d{3}\.\d{3}\.\d{2}$"))
_DRIVER_CUTS = {5: ((3,),), 7: ((3, 5),), 8: ((3, 6),)}  # digits -> where the points go, one shape per length


def digits(raw: str) -> str:
    """``raw`` with the letters OCR reads for digits turned back into digits, blanks removed."""
    return re.sub(r"\s+", "", raw).translate(_DIGIT_FOR)


def driver_candidates(raw: str) -> List[str]:
    """The driver versions ``raw`` can be: itself when it has a driver's shape, else the one shape its digit count
    allows with the points it kept in place (a point OCR dropped comes back; one it added or moved does not)."""
    text = digits(raw).strip(".")
    if not re.match(r"^[\d.]+$", text):
        return []
    if any(shape.match(text) for shape in _DRIVER_SHAPES):
        return [text]
    bare = text.replace(".", "")
    kept = [i - n for n, i in enumerate(i for i, ch in enumerate(text) if ch == ".")]  # point positions in ``bare``
    found = []
    for cuts in _DRIVER_CUTS.get(len(bare), ()):
        if all(point in cuts for point in kept):
            pieces = [bare[start:end] for start, end in zip((0,) + cuts, cuts + (len(bare),))]
            found.append(".".join(pieces))
    return found


def repair_driver(raw: Optional[str], kb: KnowledgeBase, cuda_read: Optional[str] = None) -> Optional[str]:
    """The driver version ``raw`` reads as, or None. It must belong to a branch the knowledge base knows (a branch
    whose CUDA it can name), and when the same banner shows a CUDA version that reads cleanly, that branch's CUDA
    must be it (nvidia-smi's "CUDA Version" is the branch's; every captured table agrees)."""
    if not raw:
        return None
    known = [c for c in driver_candidates(raw) if kb.cuda_for_driver(c)]
    if cuda_read:
        known = [c for c in known if kb.cuda_for_driver(c) == cuda_read]
    return known[0] if len(known) == 1 else None


def cuda_candidates(raw: str, known: Iterable[str]) -> List[str]:
    """The CUDA versions (major.minor) ``raw`` can be among ``known``; a dropped point is put back where it gives a
    known version ("124" -> "12.4")."""
    text = digits(raw).strip(".")
    known_set = set(known)
    if re.match(r"^\d{1,2}\.\d$", text):
        return [text] if text in known_set else []
    if re.match(r"^\d{2,3}$", text):
        return [c for c in (text[:-1] + "." + text[-1],) if c in known_set]
    return []


def repair_cuda(raw: Optional[str], known: Iterable[str], expected: Optional[str] = None) -> Optional[str]:
    """The CUDA version ``raw`` reads as, or None; ``expected`` (the driver branch's CUDA) must agree when given."""
    if not raw:
        return None
    candidates = cuda_candidates(raw, known)
    if expected is not None:
        candidates = [c for c in candidates if c == expected]
    return candidates[0] if len(candidates) == 1 else None


_NAME_FOLD = str.maketrans("oli|sbz", "0111582")


def _name_key(name: str) -> str:
    """A name as OCR cannot tell it apart: no blanks, dashes or colons, no "NVIDIA" prefix, confusable letters
    folded."""
    text = re.sub(r"[\s\-_/:]+", "", name).lower()  # a blank OCR read as a colon ("Tesla:P100") too
    if text.startswith("nvidia"):
        text = text[len("nvidia"):]
    return text.translate(_NAME_FOLD)


name_key = _name_key


# nvidia-smi's table cuts a name that does not fit its field to the field's width less 3 and appends "..." (18 cells
# before 535.104's wider table, 27 after: kb/data/smi_table.toml); where the driver, so the field, is unknown, both.
_TABLE_CUTS = ((18, 15), (27, 24))  # (longest name shown whole, characters kept when cut)


def _table_cuts(name_width: Optional[int]) -> Sequence[tuple]:
    return _TABLE_CUTS if name_width is None else ((name_width, name_width - 3),)


def _cut_forms(name: str, name_width: Optional[int] = None) -> List[str]:
    return [name[:kept].rstrip() for whole, kept in _table_cuts(name_width) if len(name) > whole]


# A name shown whole spans its own length in cells on the screen (the detector's box is measured in cells against
# the bus id beside it, :func:`gpuvet.ingest.screenshot.name_cells`); one nvidia-smi cut ends in " ...", three to
# four cells more. Between the two the picture does not say which it is.
_WHOLE_NAME_SLACK = 1.3
_CUT_MARK_CELLS = 2.5


def repair_gpu_name(raw: Optional[str], models: Sequence[GpuModel], table: bool = False,
                    memory_mib: Optional[int] = None, cells: Optional[float] = None,
                    name_width: Optional[int] = None, after: Optional[Callable[[], Optional[str]]] = None,
                    _undoubled: bool = False) -> Optional[str]:
    """The knowledge base's name of the one GPU model ``raw`` can be, or None. The name as nvidia-smi printed it
    wins when it matches as is; else the read text and every model name and alias are compared without blanks and
    with confusable letters folded, and exactly one model must match (a name nvidia-smi cut with "..." must
    continue into one model only). ``cells``: how many terminal cells the name spans in the picture, where known;
    ``name_width``: the table's name field in cells, where the driver's layout is known (a name longer than it is
    never shown whole, one that fits never cut); ``after``: asked only where a table's name may be whole or cut
    with the "..." dropped, says whether the picture shows the dots after the name ("cut" or None:
    :func:`gpuvet.ingest.screenshot.after_name`); only the box's width and a blank screen after it make it whole."""
    if not raw or not raw.strip():
        return None
    # a table border or a colon read as a lone "1", "l" or "|" before the name ("GPU0:1 TeslaP100-PCIE-16GB")
    text = re.sub(r"^[1lI|!]\s+(?=[A-Za-z])", "", raw.strip())
    stem = text.rstrip(".\u2026 ")
    # no model's name ends in a point: any trailing point is what OCR kept of nvidia-smi's "..." (often "." or "..")
    truncated = len(stem) < len(text.rstrip())
    key = _name_key(stem)
    if not key:
        return None
    matches: List[GpuModel] = []
    for model in models:
        keys = [_name_key(model.name)] + [_name_key(alias) for alias in model.aliases]
        fits = any(k.startswith(key) and len(k) > len(key) for k in keys) if truncated else key in keys
        if fits and not any(model is seen for seen in matches):
            matches.append(model)
    doubled = re.match(r"^(NVIDIA)\s*A\s*(?=[A-Z0-9])", text)
    if not matches and doubled and not _undoubled:
        # the detector cut the line after "NVIDIA" and both boxes took its last A ("NVIDIA" + "AA10", "AL40S",
        # "AA80080G..." in the xterm corpus, bench/RESULTS.md); no model's name has a letter A after "NVIDIA " that
        # is followed by another name: the A once, and still exactly one model must match
        return repair_gpu_name("NVIDIA " + text[doubled.end():], models, table=table, memory_mib=memory_mib,
                               cells=None, name_width=name_width, after=after, _undoubled=True)
    if not matches and table and not truncated and after is not None and after() == "cut":
        # the name's box left nvidia-smi's "..." out and the second look read it: the name as printed, cut
        return repair_gpu_name(text + "...", models, table=True, memory_mib=memory_mib, name_width=name_width)
    if len(matches) == 1:
        if table and not truncated:
            # "NVIDIA GeForce RTX 2080" is a model, and also what is left of "NVIDIA GeForce RTX 2080 SUPER" cut by
            # the table when OCR drops the "...": only the memory beside it can tell them apart
            shown = min((form for form in (matches[0].name,) + tuple(matches[0].aliases) if _name_key(form) == key),
                        key=len, default=matches[0].name)
            if name_width is not None and len(shown) > name_width:
                return None  # a name longer than the field is never shown whole: a cut whose "..." OCR dropped
            cut_from = [model for model in models if model is not matches[0]
                        and any(_name_key(cut) == key for cut in _cut_forms(model.name, name_width))]
            if cut_from:
                # a model whose memory the knowledge base does not know cannot be ruled out
                # OCR drops the "..." but the detector's box still spans it: a box no longer than the whole name
                # shows the whole name, one that reaches three cells past it shows the cut (as a paste gives it)
                width = len(matches[0].name)
                measured = ("cut" if cells is not None and cells >= width + _CUT_MARK_CELLS
                            else "whole" if cells is not None and cells <= width + _WHOLE_NAME_SLACK else None)
                seen = after() if after is not None else None  # the picture after the box, read again: "cut" or None
                if measured == "whole" and seen == "cut":
                    return None  # the two looks disagree: not guessed
                decided = seen or measured
                if decided == "cut":
                    printed = {model.name[:kept] + "..." for model in cut_from
                               for whole, kept in _table_cuts(name_width) if len(model.name) > whole
                               and _name_key(model.name[:kept]) == key}
                    return _as_cut(printed.pop(), models) if len(printed) == 1 else None
                if decided == "whole":
                    cut_from = []
                possible = [m for m in [matches[0]] + cut_from if memory_fits(memory_mib, m) is not False]
                return possible[0].name if len(possible) == 1 else None
        return matches[0].name
    if truncated and matches:
        # the cut as nvidia-smi printed it (the name of its era: a model's name or an alias) for the models the read
        # text can begin ("GeForce GTX108.." is what OCR left of "GeForce GTX 108..."): one printed form only
        printed = {shown[:kept] + "..." for model in matches for shown in (model.name,) + tuple(model.aliases)
                   for whole, kept in _table_cuts(name_width) if len(shown) > whole and _name_key(shown[:kept]) == key}
        if len(printed) == 1:
            return _as_cut(printed.pop(), models)
        return _as_cut(stem + (" ..." if text[len(stem):].startswith(" ") else "..."), models)  # the mark as read
    return None


def _as_cut(cut: str, models: Sequence[GpuModel]) -> Optional[str]:
    """A name nvidia-smi cut that several models continue: kept cut, as a pasted table gives it to the matcher."""
    return cut if gpumatch.match(cut, models) is not None else None


def memory_fits(total_mib: Optional[int], model: Optional[GpuModel]) -> Optional[bool]:
    """Whether ``total_mib`` is memory ``model`` can have: nvidia-smi shows a little less than the datasheet's GiB
    (reserved memory: 81559 of 80 GiB, 23034 of an L4's 24), never more. None when the model's memory is unknown."""
    if total_mib is None or model is None or not model.memory_gib:
        return None
    nominal = model.memory_gib * 1024
    return 0.85 * nominal <= total_mib <= 1.02 * nominal


def repair_mib(raw: Optional[str]) -> Optional[int]:
    """"8l559MiB" -> 81559; None when what is left is not a whole number."""
    if not raw:
        return None
    text = digits(re.sub(r"(?i)\s*mib?$", "", raw.strip()))
    return int(text) if text.isdigit() else None


def repair_release(raw: Optional[str]) -> Optional[str]:
    """A package version's release part with OCR's letters for digits folded ("2.l.0+cu121" -> "2.1.0+cu121");
    None when the result is not a version (the local label and pre-release tags are left as read, but for the
    label's case: PEP 440 normalises a local version label to lower case, so OCR's "+Cpu" is "+cpu"; see
    https://packaging.python.org/en/latest/specifications/version-specifiers/#local-version-identifiers)."""
    if not raw:
        return None
    from gpuvet.kb.versions import parse

    match = re.match(r"^([0-9OolIS]+(?:\.[0-9OolIS]+)*)(.*)$", raw.strip())
    if not match:
        return None
    release = digits(match.group(1))
    if not re.match(r"^\d+(\.\d+)*$", release):
        return None
    rest = match.group(2)
    if "+" in rest:
        rest = rest[: rest.index("+")] + rest[rest.index("+"):].lower()
    version = release + rest
    return version if parse(version) is not None else None

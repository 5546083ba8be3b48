"""Literal anchors for regexes, so a 50 MB log is scanned with str.find (C speed) and the regex runs only on the
few lines that contain an anchor. Python's `re` has no fast path for case-insensitive literals; this is it.

``anchors(pattern)`` returns lower-case strings of which at least one must occur in any text the pattern matches,
or None when no such literal of useful length exists (the pattern is then run over the whole text).
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, List, Optional, Tuple

from gpuvet.debuglog import survived

if sys.version_info >= (3, 11):  # the parser moved; its data format is the same
    import re._constants as _c
    import re._parser as _p
else:  # pragma: no cover
    import sre_constants as _c
    import sre_parse as _p

# A parsed pattern as the regex parser gives it: (opcode, argument) pairs, the argument's type set by the opcode (an
# int for LITERAL, a tuple holding a nested pattern for SUBPATTERN, ...), so it is Any here.
SubPattern = Iterable[Tuple[Any, Any]]

MIN_ANCHOR = 4
SHORT_ANCHOR = 3
_DIGITS = str.maketrans("123456789", "000000000")


def normalise(text: str) -> str:
    """The form anchors are searched in: lower case, every digit 0 (so 'step 1041 loss 0.31' lines collapse)."""
    return text.lower().translate(_DIGITS)


def _weight(text: str) -> int:
    # bytes, not characters: two Chinese characters are as selective as four Latin letters. Digits do not count:
    # logs are searched with every digit turned into 0 (normalise), so "801" would match every "000".
    return len("".join(ch for ch in text if not ch.isdigit()).encode("utf-8"))


# Words on nearly every line of a training log: an anchor made of one of these selects most of a 50 MB log and the
# regex then runs on every such line. Among a pattern's literals (each of which a match must contain), prefer one
# that is not such a word, even if shorter ("+cpu" over "torch").
_COMMON = frozenset(
    """torch pytorch cuda error warning info nccl only slow python file line step loss failed device devices gpu gpus
    version runtime runtimeerror than expected exception traceback most recent call last rank epoch module""".split()
)


def is_common(text: str) -> bool:
    """Whether the literal is made of words on nearly every line of a training log (a poor anchor)."""
    return _common(text)


def _common(text: str) -> bool:
    words = text.strip().split()
    return bool(words) and all(word.strip(":.,()[]'\"") in _COMMON for word in words)


def _best(candidates: List[List[str]]) -> Optional[List[str]]:
    # A rare three-byte literal ("mig", "801", "cpu") selects far fewer lines than an everyday word ("only "): take
    # it when the alternative is common, but keep MIN_ANCHOR as the length preferred among uncommon literals.
    usable = [c for c in candidates if c and min(_weight(s) for s in c) >= SHORT_ANCHOR]
    if not usable:
        return None

    def score(c: List[str]) -> Tuple[int, int, int, int]:
        shortest = min(_weight(s) for s in c)
        common = any(_common(s) for s in c)
        if shortest < MIN_ANCHOR and common:
            return (-1, 0, 0, 0)  # short and everyday: worse than no anchor at all
        return (not common, shortest >= MIN_ANCHOR, shortest, -len(c))

    best = max(usable, key=score)
    return best if score(best)[0] >= 0 else None


def _sequence(items: SubPattern) -> Optional[List[str]]:
    return _best(_candidates(items))


def _candidates(items: SubPattern) -> List[List[str]]:
    """Every literal set a match of this sequence must contain (one string of each set occurs in the match)."""
    candidates: List[List[str]] = []
    run: List[str] = []
    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av).lower())
            continue
        if run:
            candidates.append(["".join(run)])
            run = []
        if op is _c.SUBPATTERN:
            sub = _sequence(av[-1])
            if sub:
                candidates.append(sub)
        elif op is _c.BRANCH:
            alternatives = [_sequence(branch) for branch in av[1]]
            if all(alternatives):
                candidates.append([s for alt in alternatives if alt for s in alt])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:
            sub = _sequence(av[2])
            if sub:
                candidates.append(sub)
    if run:
        candidates.append(["".join(run)])
    return candidates


def anchors(pattern: str) -> Optional[List[str]]:
    try:
        parsed = _p.parse(pattern)
    except Exception:  # the compile step reports bad patterns; here we just give up the shortcut
        survived(__name__, "a pattern's literal words")
        return None
    return _sequence(list(parsed))


def necessary_sets(pattern: str) -> List[List[str]]:
    """All usable literal sets of the pattern's top level, each a necessary condition of a match: the engine uses
    the ones it did not anchor on as a cheap ``in`` test before running the regex on a candidate line."""
    try:
        parsed = _p.parse(pattern)
    except Exception:
        survived(__name__, "a pattern's literal words")
        return []
    # Raw length here, digits included: these are tested against the candidate line itself (lower-cased, digits
    # kept), so "801" is a fine check even though it is no anchor.
    return [c for c in _candidates(list(parsed)) if c and min(len(x.encode("utf-8")) for x in c) >= SHORT_ANCHOR]


def _newline_capable(items: SubPattern, dotall: bool) -> bool:
    for op, av in items:
        if op is _c.LITERAL and av == 10:
            return True
        if op is _c.NOT_LITERAL and av != 10:
            return True
        if op is _c.ANY and dotall:
            return True
        if op is _c.IN:
            negated = any(o is _c.NEGATE for o, _ in av)
            hits_newline = any((o is _c.LITERAL and a == 10)
                               or (o is _c.RANGE and a[0] <= 10 <= a[1])
                               or (o is _c.CATEGORY and a in (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD,
                                                             _c.CATEGORY_NOT_DIGIT, _c.CATEGORY_LINEBREAK))
                               for o, a in av if o is not _c.NEGATE)
            if hits_newline != negated:
                return True
        elif op is _c.SUBPATTERN:
            if _newline_capable(av[-1], dotall):
                return True
        elif op is _c.BRANCH:
            if any(_newline_capable(branch, dotall) for branch in av[1]):
                return True
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) + ((_c.POSSESSIVE_REPEAT,) if hasattr(_c, "POSSESSIVE_REPEAT") else ()):
            if _newline_capable(av[2], dotall):
                return True
        elif op is _c.ASSERT or op is _c.ASSERT_NOT:
            continue
    return False


def spans_lines(pattern: str) -> bool:
    """Can a match of the pattern contain a line break (a wrapped message)? When not, the engine tries it on the line
    alone, without the window of following lines and without looking back for an earlier start."""
    try:
        parsed = _p.parse(pattern)
    except Exception:
        survived(__name__, 'whether a pattern can span lines')
        return True
    state = getattr(parsed, "state", None) or getattr(parsed, "pattern", None)
    return _newline_capable(list(parsed), bool(getattr(state, "flags", 0) & _c.SRE_FLAG_DOTALL))


def leading_literal(pattern: str) -> Optional[str]:
    """The literal every match of the pattern starts with (lower case, at least SHORT_ANCHOR long), or None. A match
    that may wrap still starts on the line that holds it, which pins where a wrapped message can begin."""
    try:
        parsed = _p.parse(pattern)
    except Exception:
        survived(__name__, "a pattern's leading literal")
        return None
    run: List[str] = []
    for op, av in parsed:
        if op is _c.AT and not run:
            continue
        if op is _c.LITERAL and av != 10:
            run.append(chr(av).lower())
            continue
        break
    text = "".join(run)
    return text if len(text.strip()) >= SHORT_ANCHOR else None

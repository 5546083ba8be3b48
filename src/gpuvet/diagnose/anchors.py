"""Literal anchors for regexes, so a 50 MB log is scanned with str.find (C speed) and the regex runs only on the
few lines that contain an anchor. Python's `re` has no fast path for case-insensitive literals; this is it.

``anchors(pattern)`` returns lower-case strings of which at least one must occur in any text the pattern matches,
or None when no such literal of useful length exists (the pattern is then run over the whole text).
"""

from __future__ import annotations

import sys
from typing import List, Optional

if sys.version_info >= (3, 11):  # the parser moved; its data format is the same
    import re._constants as _c
    import re._parser as _p
else:  # pragma: no cover
    import sre_constants as _c
    import sre_parse as _p

MIN_ANCHOR = 4


def _weight(text: str) -> int:
    # bytes, not characters: two Chinese characters are as selective as four Latin letters
    return len(text.encode("utf-8"))


# Words on nearly every line of a training log: an anchor made of one of these selects most of a 50 MB log and the
# regex then runs on every such line. Among a pattern's literals (each of which a match must contain), prefer one
# that is not such a word, even if shorter ("+cpu" over "torch").
_COMMON = frozenset(
    """torch pytorch cuda error warning info nccl only slow python file line step loss failed device devices gpu gpus
    version runtime runtimeerror than expected exception traceback most recent call last rank epoch module""".split()
)


def _common(text: str) -> bool:
    words = text.strip().split()
    return bool(words) and all(word.strip(":.,()[]'\"") in _COMMON for word in words)


def _best(candidates: List[List[str]]) -> Optional[List[str]]:
    usable = [c for c in candidates if c and min(_weight(s) for s in c) >= MIN_ANCHOR]
    if not usable:
        return None
    return max(usable, key=lambda c: (not any(_common(s) for s in c), min(_weight(s) for s in c), -len(c)))


def _sequence(items) -> Optional[List[str]]:
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
                candidates.append([s for alt in alternatives for s in alt])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] >= 1:
            sub = _sequence(av[2])
            if sub:
                candidates.append(sub)
    if run:
        candidates.append(["".join(run)])
    return _best(candidates)


def anchors(pattern: str) -> Optional[List[str]]:
    try:
        parsed = _p.parse(pattern)
    except Exception:  # the compile step reports bad patterns; here we just give up the shortcut
        return None
    return _sequence(list(parsed))

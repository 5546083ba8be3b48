"""Distribution-name normalisation shared by the probe and the parsers.

PEP 503 normalisation, written out here rather than taken from ``packaging.utils`` because the probe must run
with the standard library alone.
"""

import re

_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name):
    lowered = name.lower()
    # Most names are already canonical (a 1.5-million-line freeze spends a third of its parse here otherwise):
    # without "_", "." or "--" every separator run is a single "-", which the substitution leaves as it is.
    if "_" not in lowered and "." not in lowered and "--" not in lowered:
        return lowered
    return _SEPARATORS.sub("-", lowered)

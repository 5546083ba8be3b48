"""Distribution-name normalisation shared by the probe and the parsers.

PEP 503 normalisation, written out here rather than taken from ``packaging.utils`` because the probe must run
with the standard library alone.
"""

import re

_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name):
    return _SEPARATORS.sub("-", name).lower()

"""Every probed fact is found (value + source), missing (why) or failed (why + detail).

A fact is a plain dict so that the probe stays standard-library only (Python 3.6+) and a snapshot is plain JSON:

    {"status": "found",   "value": "535.104.05", "source": "nvml"}
    {"status": "missing", "reason": "no NVIDIA driver: /proc/driver/nvidia/version does not exist"}
    {"status": "failed",  "reason": "nvidia-smi timed out after 10 s", "detail": "..."}

Extra keys (``path``, ``note``) may ride along with any of them.
"""

FOUND = "found"
MISSING = "missing"
FAILED = "failed"


def found(value, source, **extra):
    fact = {"status": FOUND, "value": value, "source": source}
    fact.update(extra)
    return fact


def missing(reason, **extra):
    fact = {"status": MISSING, "reason": reason}
    fact.update(extra)
    return fact


def failed(reason, detail=None, **extra):
    fact = {"status": FAILED, "reason": reason}
    if detail:
        fact["detail"] = detail
    fact.update(extra)
    return fact


def is_found(fact):
    return isinstance(fact, dict) and fact.get("status") == FOUND


def value_of(fact, default=None):
    """The value of a found fact, else ``default``."""
    return fact.get("value", default) if is_found(fact) else default


def first_found(*facts):
    """The first found fact; else the first failed one (it says more than a missing one); else the first."""
    for fact in facts:
        if is_found(fact):
            return fact
    for fact in facts:
        if isinstance(fact, dict) and fact.get("status") == FAILED:
            return fact
    return facts[0] if facts else missing("nothing was probed")

"""Tiny TOML emitter for the generator (strings, numbers, bools, lists, inline tables)."""
import json

def val(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(val(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join("%s = %s" % (key(k), val(x)) for k, x in v.items()) + " }"
    raise TypeError(v)

def key(k):
    import re
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else json.dumps(k)

def table(header, rec, indent=""):
    out = [indent + header]
    for k, v in rec.items():
        if v is None:
            continue
        out.append(indent + "%s = %s" % (key(k), val(v)))
    return "\n".join(out) + "\n"

"""Secrets never leave the machine: environment values, URL credentials, and (on request) host identity.

Standard library only, Python 3.6+: the probe runs this before printing anything.
"""

import copy
import re

REDACTED = "***"

# Whole-word parts of a variable name that mark a secret. Matched against the name split on "_" so that KEY matches
# WANDB_API_KEY but not a name that merely contains the letters (CUDA_VISIBLE_DEVICES has no KEY part).
_SECRET_WORDS = frozenset(["KEY", "KEYS", "APIKEY", "PASS", "PASSWD", "AUTH", "CREDENTIALS", "CREDENTIAL"])
# Substrings that mark a secret wherever they appear (HF_TOKEN, HUGGINGFACEHUB_API_TOKEN, MY_SECRET, DB_PASSWORD).
_SECRET_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PRIVATE")
# Whole families of credentials.
_SECRET_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_APPLICATION_CREDENTIALS")

# scheme://user[:password]@host -> scheme://***@host
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/@\s'\"]+)@")


def is_secret_name(name):
    upper = name.upper()
    if upper.startswith(_SECRET_PREFIXES):
        return True
    if any(part in upper for part in _SECRET_PARTS):
        return True
    return any(word in _SECRET_WORDS for word in re.split(r"[_\-.]+", upper))


def redact_url(text):
    """Remove the user-info part (``user:token@``) of every URL in ``text``; other text is kept."""
    if not isinstance(text, str):
        return text
    return _URL_USERINFO.sub(lambda m: m.group("scheme") + REDACTED + "@", text)


def redact_env(environ):
    """A copy of ``environ`` with secret values replaced by ``***`` and credentials removed from every URL."""
    cleaned = {}
    for name, value in environ.items():
        cleaned[name] = REDACTED if is_secret_name(name) else redact_url(value)
    return cleaned


# --- free text (a pasted log, an error message): secrets by their shape ---------------------------------------------

# Well-known token shapes: Hugging Face, OpenAI-style, GitHub, Slack, AWS access key ids.
_TOKEN_SHAPES = re.compile(
    r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[baprs]-[\w-]{10,}|AKIA[0-9A-Z]{16})\b"
)
# name=value / name: value where the name says secret (api_key=..., token: ..., password="...").
# The name may carry a prefix (WANDB_API_KEY, HF_TOKEN, DB_PASSWORD): "_" is a word character, so no \b before it.
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)\b(\w*(?:api[_-]?key|token|secret|password|passwd|pwd|access[_-]?key|private[_-]?key|credentials?)\w*"
    r"\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s;,]+)"
)
_AUTH_HEADER = re.compile(r"(?i)(authorization:\s*(?:bearer|basic)\s+)\S+")
_ANY_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")


def redact_text(text, host=False):
    """Free text with secrets removed: URL credentials, token shapes, secret assignments, Authorization headers;
    with ``host``, also IP addresses and UUIDs (``--redact-host``)."""
    if not isinstance(text, str):
        return text
    text = redact_url(text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _TOKEN_SHAPES.sub(REDACTED, text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, text)
    if host:
        text = _GPU_UUID.sub(lambda m: m.group(1) + "-" + REDACTED, text)
        text = _ANY_UUID.sub(REDACTED, text)
        text = _IPV4.sub(REDACTED, text)
    return text


# --- --redact-host: for sharing a snapshot in public -------------------------------------------------------------

_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])")
_GPU_UUID = re.compile(r"\b(GPU|MIG)-[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}\b")
_IDENTITY_KEYS = frozenset(["serial", "uuid", "board_id", "hostname", "host"])


def redact_host(snapshot):
    """A copy of ``snapshot`` without host name, IP addresses, GPU/MIG UUIDs or serial numbers.

    The host name is also removed wherever it appears inside other strings (paths like /home/node17, prompts).
    """
    result = copy.deepcopy(snapshot)
    hostname = None
    # A command's document (check, recommend, diagnose...) carries the snapshot under "snapshot": redact that as a
    # snapshot first, and use its host name for the rest of the document. Without this, `check --redact-host`
    # printed the host name and MASTER_ADDR's IP (found by tests/robustness/test_redaction.py).
    inner = result.get("snapshot") if result.get("kind") != "snapshot" else None
    if isinstance(inner, dict):
        hostname = _found_hostname(inner)
        result["snapshot"] = redact_host(inner)
    host = result.get("host")
    if isinstance(host, dict):
        hostname = _found_hostname(result) or hostname
        if "hostname" in host:
            host["hostname"] = {"status": "missing", "reason": "removed by --redact-host"}
    origin = result.get("origin")
    if isinstance(origin, dict):
        origin.pop("host", None)
    hostname = hostname if hostname and len(hostname) >= 3 else None
    for key in list(result):
        if key == "snapshot" and isinstance(inner, dict):
            continue  # already redacted above, as a snapshot
        # IP addresses are looked for only where they can occur (env values such as MASTER_ADDR, index URLs):
        # elsewhere a dotted quad is a version (cuDNN 9.1.0.70) and must survive.
        result[key] = _scrub(result[key], hostname, ips=key in _IP_SECTIONS)
    return result


_IP_SECTIONS = frozenset(["env", "pip", "origin"])


def _found_hostname(snapshot):
    host = snapshot.get("host")
    fact = host.get("hostname") if isinstance(host, dict) else None
    if isinstance(fact, dict) and fact.get("status") == "found" and isinstance(fact.get("value"), str):
        return fact["value"]
    return None


def _scrub(node, hostname, ips):
    if isinstance(node, dict):
        cleaned = {}
        for key, value in node.items():
            if key in _IDENTITY_KEYS and isinstance(value, str):
                cleaned[key] = REDACTED
            else:
                cleaned[key] = _scrub(value, hostname, ips)
        return cleaned
    if isinstance(node, list):
        return [_scrub(item, hostname, ips) for item in node]
    if isinstance(node, str):
        return _scrub_text(node, hostname, ips)
    return node


def _scrub_text(text, hostname, ips):
    text = _GPU_UUID.sub(lambda m: m.group(1) + "-" + REDACTED, text)
    if ips:
        text = _IPV4.sub(REDACTED, text)
        text = _IPV6.sub(REDACTED, text)
    if hostname:
        text = text.replace(hostname, REDACTED)
    return redact_url(text)

"""Secrets never leave the machine: one redaction pass that every output goes through.

:func:`redact` is the one function. It takes a document (dict/list, before rendering) or a rendered text (after
rendering: text, JSON, Markdown, HTML, an ``-o`` file, a fleet snapshot, a diagnose evidence line) and returns the
same kind of value with every secret VALUE replaced by ``***`` -- the name around it is kept, so evidence still
reads (``HF_TOKEN=***``, ``--wandb-key ***``, ``https://***@mirror/simple``, ``?token=***``). What is removed:

- credentials in URLs: the whole user-info part (``user:pa@ss@host`` -> ``***@host``, a password may hold ``@``),
  and the value of query parameters named like token/key/secret/signature/password/auth/credential;
- well-known token shapes: Hugging Face ``hf_...``, GitHub ``ghp_/gho_/ghu_/ghs_/ghr_/github_pat_``, GitLab
  ``glpat-``, OpenAI-style ``sk-...``, AWS ``AKIA/ASIA...``, Slack ``xox?-``, JWTs, ``Authorization: Bearer ...``;
- values after secret-named flags and variables: ``--*-key``, ``--*_key``, ``--token``, ``--hf_token``,
  ``--password``, ``*_TOKEN=``, ``*_SECRET=``, ``*PASSWORD*=``, ``WANDB_API_KEY=``, ``token VALUE``,
  ``wandb login VALUE`` (which covers the 40-hex W&B keys in those positions);
- in a document, the value of every key that is a secret variable name (``HF_TOKEN``, ``DB_PASSWORD``).

With ``host`` (``--redact-host``) also: host names (the snapshot's, NCCL ``host:pid:tid`` prefixes, ``HOSTNAME=``,
``host NAME``; each one found is then removed wherever it appears), IPv4 and IPv6 addresses, GPU/MIG UUIDs (any
UUID) and serial numbers.

Standard library only, Python 3.6+: the probe runs this before printing anything.
"""

import copy
import re

from gpuvet.probe.patterns import OnFirstUse

REDACTED = "***"

# Whole-word parts of a variable name that mark a secret. Matched against the name split on "_" so that KEY matches
# WANDB_API_KEY but not a name that merely contains the letters (CUDA_VISIBLE_DEVICES has no KEY part).
_SECRET_WORDS = frozenset(["KEY", "KEYS", "APIKEY", "PASS", "PASSWD", "AUTH", "CREDENTIALS", "CREDENTIAL", "PAT"])
# Substrings that mark a secret wherever they appear (HF_TOKEN, HUGGINGFACEHUB_API_TOKEN, MY_SECRET, DB_PASSWORD).
_SECRET_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PRIVATE")
# Whole families of credentials.
_SECRET_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_APPLICATION_CREDENTIALS")
# Keys of a document (lower case) whose string value is a secret wherever the key appears.
_SECRET_KEYS = frozenset(["password", "passwd", "token", "secret", "api_key", "apikey", "access_token", "auth_token",
                          "private_token", "client_secret", "private_key", "secret_key", "authorization"])
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def is_secret_name(name):
    upper = name.upper()
    if upper.startswith(_SECRET_PREFIXES):
        return True
    if any(part in upper for part in _SECRET_PARTS):
        return True
    return any(word in _SECRET_WORDS for word in re.split(r"[_\-.]+", upper))


# --- URLs ------------------------------------------------------------------------------------------------------------

# scheme://userinfo@host: the user-info runs to the LAST "@" before the path, so a password holding "@" goes too.
# It never crosses white space, a quote, "<", ">" or "\" (an escaped quote in rendered JSON): the redacted text of a
# JSON or HTML document stays well formed.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/\s'\"<>\\`]*)@")
# ?token=... &private_token=... ;sig=... (also "&amp;" in HTML): the value up to the next separator.
_SECRET_PARAM_NAME = (r"[\w.\-]*(?:token|key|secret|signature|password|passwd|pwd|auth|credential|session)[\w.\-]*"
                      r"|sig|pass|access|code")
_URL_PARAM = re.compile(r"(?i)(?P<lead>[?&;](?:amp;)?(?:%s)=)(?P<value>[^&\s#'\"<>\\`]+)" % _SECRET_PARAM_NAME)


def redact_url(text):
    """Remove the user-info part (``user:token@``) and secret query values of every URL in ``text``."""
    if not isinstance(text, str):
        return text
    if "@" in text:
        text = _URL_USERINFO.sub(lambda m: m.group("scheme") + REDACTED + "@", text)
    if "=" in text:
        text = _URL_PARAM.sub(lambda m: m.group("lead") + REDACTED, text)
    return text


def redact_env(environ):
    """A copy of ``environ`` with secret values replaced by ``***`` and credentials removed from every value."""
    cleaned = {}
    for name, value in environ.items():
        cleaned[name] = REDACTED if is_secret_name(name) else _secrets(value)
    return cleaned


# --- free text: secrets by their shape and by the name in front of them ----------------------------------------------

# A bare value: never crosses a quote or backslash (so rendered JSON/HTML stay well formed) nor a separator.
_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\<>,;&`]+)"
# hf_, gh[pousr]_, github_pat_, glpat-, sk-(proj-|ant-)?, AKIA, ASIA, xox[abposr]- not preceded by a word character or
# "-": each shape starts with its literal first letter and says "(?<![\w-])" after it, so the regex engine jumps to
# those letters instead of trying every position.
_TOKEN_SHAPES = re.compile(
    r"(?P<prefix>h(?<![\w-]h)f_|g(?<![\w-]g)(?:h[pousr]_|ithub_pat_|lpat-)|s(?<![\w-]s)k-(?:proj-|ant-)?"
    r"|A(?<![\w-]A)(?:KIA|SIA)|x(?<![\w-]x)ox[abposr]-)(?P<body>[A-Za-z0-9_\-]{10,})"
)
_JWT = re.compile(r"eyJ(?<!\weyJ)[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}")  # \beyJ, literal first
_AUTH_HEADER = re.compile(r"(?i)(\bauthorization\s*[:=]\s*(?:bearer|basic|token|digest)?\s*|\bbearer\s+)"
                          r"(?!\*\*\*)([A-Za-z0-9._~+/=\-]{6,})")
# name=value / name: value where the name says secret (api_key=..., HF_TOKEN=..., password: "..."). The name is a
# word (so "_" prefixes count: WANDB_API_KEY, DB_PASSWORD) ending in a secret word; *PASSWORD* and *SECRET* anywhere.
_ASSIGN_NAME = (r"\w*(?:password|passwd|secret)\w*"
                r"|\w*(?:api[_\-]?key|_key|token|pwd|access[_\-]?key|private[_\-]?key|credentials?|_auth|_pat)")
# The lookahead first: a name is a run of word characters and "-" right before the separator, so a word that no
# "=" or ":" follows is passed over before the eleven name shapes are tried at each of its letters (half the time of
# a rendered report's pass; the same matches).
_SECRET_ASSIGNMENT = re.compile(r"(?i)\b(?=[\w\-]*\s*[=:])(?P<name>%s)(?P<sep>\s*[=:]\s*)(?!\*\*\*)(?P<value>%s)"
                                % (_ASSIGN_NAME, _VALUE))
# --wandb-key VALUE, --api_key=VALUE, --hf_token VALUE, --token VALUE, --password VALUE, -p is not guessed.
# Written to start with the literal "-" (the regex engine then jumps from one "-" to the next); "(?<![\w-]-)" after it
# says what "(?<![\w-])" before it said.
_SECRET_FLAG = re.compile(
    r"(?i)(?P<name>-(?<![\w-]-)-?(?:[\w]+[\-_])*(?:key|token|secret|password|passwd|pwd|auth|api[\-_]?key|credentials?"
    r"|pat))(?![\w-])(?P<sep>=|[ \t]+)(?!--?[A-Za-z])(?!\*\*\*)(?P<value>%s)" % _VALUE
)
# "token VALUE", "password VALUE", "wandb login VALUE": only a value that looks like a credential (8+ characters
# with a digit), so prose ("token is invalid", "password required") keeps its words.
_SECRET_WORD_VALUE = re.compile(
    r"(?i)\b(?P<name>token|api[ _\-]?key|password|passwd|secret|wandb\s+login(?:\s+--relogin)?|login\s+--token)"
    r"(?P<sep>[ \t]+)(?P<value>(?=[A-Za-z0-9_\-.+/=]*\d)[A-Za-z0-9_\-.+/=]{8,})\b"
)


# "HF_TOKEN": "value" in a rendered JSON document (the document pass catches it before rendering; this is the net).
_JSON_MEMBER = re.compile(r'"(?P<name>[A-Za-z_][\w\-]*)"(?P<sep>\s*:\s*)"(?P<value>(?:[^"\\\n]|\\.)*)"')


def _json_member(match):
    if match.group("value") in ("", REDACTED) or not _is_secret_key(match.group("name")):
        return match.group(0)
    return '"%s"%s"%s"' % (match.group("name"), match.group("sep"), REDACTED)


def _secrets(text):
    """Secrets out of one string (no host identity)."""
    if not isinstance(text, str) or not text:
        return text
    if '":' in text or '" :' in text:
        text = _JSON_MEMBER.sub(_json_member, text)
    text = redact_url(text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _TOKEN_SHAPES.sub(lambda m: m.group("prefix") + REDACTED, text)
    text = _JWT.sub(REDACTED, text)
    if "=" in text or ":" in text:
        text = _SECRET_ASSIGNMENT.sub(lambda m: m.group("name") + m.group("sep") + _quoted(m.group("value")), text)
    if "-" in text:
        text = _SECRET_FLAG.sub(lambda m: m.group("name") + m.group("sep") + _quoted(m.group("value")), text)
    text = _SECRET_WORD_VALUE.sub(lambda m: m.group("name") + m.group("sep") + REDACTED, text)
    return text


def _quoted(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[0] + REDACTED + value[0]
    return REDACTED


# --- --redact-host: host identity ------------------------------------------------------------------------------------
# (compiled on first use: only --redact-host needs them)

_IPV4 = OnFirstUse(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.]|\.\d)")
_IPV6 = OnFirstUse(
    r"(?i)(?<![\w:.])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}"
    r"|(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{0,4}::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{0,4})(?:%[\w.]+)?(?![\w:])"
)
# A dotted quad right after one of these is a version (cuDNN 9.1.0.70, TensorRT 8.6.1.6), not an address.
_VERSION_BEFORE = OnFirstUse(r"(?i)(?:cudnn|tensorrt|trt|nccl|cuda|driver|version|release|ver|libcudnn\S*|[v=\-_+~<>@])"
                             r"[\s:=]{0,3}$")
_GPU_UUID = OnFirstUse(r"\b(GPU|MIG)-[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}\b")
_ANY_UUID = OnFirstUse(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_SERIAL = OnFirstUse(r"(?i)(?P<name>\bserial(?:[ _\-]?(?:number|no|num))?\"?\s*(?:[:=]|\s)\s*\"?|<serial>)"
                     r"(?P<value>(?!\*\*\*)(?=[A-Za-z0-9\-]*\d)[A-Za-z0-9\-]{4,})")
# Where a host name can be read off free text: NCCL's "host:pid:tid [rank]" prefix, HOSTNAME=, "host NAME",
# "on NAME:" prompts of user@host. Each name found is then removed wherever it appears.
_NCCL_PREFIX = OnFirstUse(r"(?m)^(?P<lead>[ \t]*(?:\[[^\]\n]*\][ \t:]*)?)(?P<host>[A-Za-z0-9][\w.\-]*):(?P<ids>\d+:\d+)"
                          r"(?=[ \t]+\[\d+\])")
_HOST_HINTS = OnFirstUse(
    r"(?i)(?:\b(?:hostname|host_name|nodename|node_name|slurmd_nodename|master_addr|slurm_nodelist)\s*[=:]\s*"
    r"|\b(?:host|node|hostname)\s+)"
    r"(?P<host>[A-Za-z][\w\-]*(?:\.[A-Za-z0-9][\w\-]*)*)"
)
MAX_DEPTH = 100  # nesting a document may have; deeper parts are replaced, never recursed into
_IDENTITY_KEYS = frozenset(["serial", "uuid", "board_id", "hostname", "host"])
_IP_SECTIONS = frozenset(["env", "pip", "origin"])
_NOT_HOSTS = frozenset(["localhost", "local", "none", "null", "unknown", "the", "and", "for", "with", "memory",
                        "name", "this", "that", "node", "host", "master"])


class Redaction(object):
    """The state of one redaction pass: whether host identity goes too, and the names found so far.

    A command's output is often written in pieces (a document, then its rendered text): pass the same Redaction to
    every :func:`redact` call of one command so that a host name or serial found in the document is also removed from
    the text rendered from it.
    """

    def __init__(self, host=False):
        self.host = bool(host)
        self.names = set()  # literal host names, serials, IP addresses to remove wherever they appear

    def learn(self, value):
        if isinstance(value, str):
            value = value.strip()
            if len(value) >= 3 and value.lower() not in _NOT_HOSTS and value != REDACTED:
                self.names.add(value)
                short = value.split(".", 1)[0]
                if short != value and len(short) >= 4 and re.search(r"[\d\-]", short):
                    self.names.add(short)

    def text(self, text, free=True):
        """One string: secrets always; with ``host``, identity too (``free``: IPs anywhere, as in a pasted log)."""
        text = _secrets(text)
        if not self.host or not isinstance(text, str) or not text:
            return text
        for match in _NCCL_PREFIX.finditer(text):
            self.learn(match.group("host"))
        for match in _HOST_HINTS.finditer(text):
            host = match.group("host")
            if re.search(r"[\d.\-]", host):
                self.learn(host)
        text = _NCCL_PREFIX.sub(lambda m: m.group("lead") + REDACTED + ":" + m.group("ids"), text)
        text = _GPU_UUID.sub(lambda m: m.group(1) + "-" + REDACTED, text)
        text = _ANY_UUID.sub(REDACTED, text)
        text = _SERIAL.sub(lambda m: m.group("name") + REDACTED, text)
        if free:
            text = _IPV4.sub(lambda m: m.group(0) if _is_version(text, m.start()) else REDACTED, text)
            text = _IPV6.sub(_ipv6_or_keep, text)
        for name in sorted(self.names, key=len, reverse=True):
            if name in text:
                text = re.sub(r"(?<![\w\-])%s(?![\w\-])" % re.escape(name), REDACTED, text)
        return text

    def document(self, node):
        """A redacted deep copy of a document; with ``host``, the snapshot's identity facts go too."""
        if self.host and isinstance(node, dict):
            node = self._identity(copy.deepcopy(node))
        return self._walk(node, False)

    def _identity(self, document):
        # A command's document (check, recommend, diagnose...) carries the snapshot under "snapshot"; a fleet
        # document carries several. Learn every host name, serial and address first, then scrub everything.
        self._learn_identity(document, 0)
        return document

    def _learn_identity(self, node, depth):
        if depth > 64:
            return
        if isinstance(node, dict):
            host = node.get("host")
            if isinstance(host, dict) and isinstance(host.get("hostname"), dict):
                fact = host["hostname"]
                if fact.get("status") == "found":
                    self.learn(fact.get("value"))
                host["hostname"] = {"status": "missing", "reason": "removed by --redact-host"}
            origin = node.get("origin")
            if isinstance(origin, dict) and "host" in origin:
                self.learn(origin.pop("host"))
            env = node.get("env")
            if isinstance(env, dict) and isinstance(env.get("value"), dict):
                for name in ("MASTER_ADDR", "HOSTNAME", "SLURMD_NODENAME"):
                    self.learn(env["value"].get(name))
            for key, value in node.items():
                if key == "serial" and isinstance(value, str):
                    self.learn(value)
                elif isinstance(value, (dict, list)):
                    self._learn_identity(value, depth + 1)
        elif isinstance(node, list):
            for item in node:
                self._learn_identity(item, depth + 1)

    def _walk(self, node, versioned, key=None, depth=0):
        if depth > MAX_DEPTH and isinstance(node, (dict, list, tuple)):
            return REDACTED  # no gpuvet document nests this deep; what does is not echoed unread
        if isinstance(node, dict):
            cleaned = {}
            for name, value in node.items():
                if isinstance(value, str) and value and _is_secret_key(name):
                    cleaned[name] = REDACTED
                elif self.host and isinstance(value, str) and name in _IDENTITY_KEYS:
                    cleaned[name] = REDACTED
                else:
                    if name in _IP_SECTIONS:
                        child = False
                    elif name in _VERSIONED:
                        child = name != "snapshot" or versioned
                    else:
                        child = versioned
                    cleaned[name] = self._walk(value, child, name, depth + 1)
            return cleaned
        if isinstance(node, (list, tuple)):
            return [self._walk(item, versioned, key, depth + 1) for item in node]
        if isinstance(node, str):
            # IP addresses are looked for only where they can occur (env values such as MASTER_ADDR, index URLs,
            # log lines): in the version sections a dotted quad is a version (cuDNN 9.1.0.70) and must survive.
            cleaned = self.text(node, free=not versioned and key not in _VERSION_KEYS)
            return node if cleaned == node else cleaned  # an Enum (a str subclass) stays itself when clean
        return node


# Top-level sections of a snapshot/document whose dotted quads are versions, not addresses.
_VERSIONED = frozenset(["cudnn", "nccl", "packages", "frameworks", "driver", "cuda_toolkits", "gpus", "binaries",
                        "python", "conda", "topology", "targets", "machine", "findings", "recommendations", "snapshot",
                        "tensorrt", "kb"])
_VERSION_KEYS = frozenset(["version", "versions", "driver", "cuda", "cudnn", "nccl", "vbios", "wheel", "spec",
                           "requirement", "target", "installed", "required"])


def _is_secret_key(name):
    if not isinstance(name, str):
        return False
    if name.lower() in _SECRET_KEYS:
        return True
    return bool(_ENV_NAME.match(name)) and "_" in name and is_secret_name(name)


def _is_version(text, start):
    return _VERSION_BEFORE.search(text[max(0, start - 24):start]) is not None


def _ipv6_or_keep(match):
    value = match.group(0)
    hexdigits = sum(1 for c in value if c not in ":%")
    return REDACTED if hexdigits >= 3 and value.count(":") >= 2 else value


def redact(value, host=False, state=None, free=True):
    """THE redaction pass. ``value`` is a document (dict/list) or a rendered text (str); the same kind comes back
    with every secret value replaced by ``***`` (the module docstring lists what). ``host`` (``--redact-host``) also
    removes host identity. ``state`` (a :class:`Redaction`) carries names learnt across the calls of one command.
    ``free`` (for a string): look for IP addresses anywhere, as in a pasted log; a rendered report passes False,
    since its dotted quads are versions (its addresses were learnt from the document and go by name)."""
    state = state if state is not None else Redaction(host)
    if host:
        state.host = True
    if isinstance(value, (dict, list, tuple)):
        return state.document(value)
    if isinstance(value, str):
        return state.text(value, free=free)
    return value


# --- the names the rest of gpuvet already calls ---------------------------------------------------------------------

def redact_text(text, host=False):
    """Free text (a pasted log line, an error message) through :func:`redact`."""
    if not isinstance(text, str):
        return text
    return redact(text, host=host)


def redact_host(snapshot, state=None):
    """A copy of ``snapshot`` (or any document) through :func:`redact` with host identity removed."""
    return redact(snapshot, host=True, state=state)

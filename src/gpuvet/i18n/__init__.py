"""Message catalogs: every user-facing sentence exists in English and Chinese.

Catalogs are TOML files under ``i18n/<lang>/<area>.toml`` (one file per area so that areas grow independently);
each top-level key is a message id and its value a ``str.format`` template. ``render`` fills the template with a
:class:`~gpuvet.models.Message`'s parameters; a missing id renders as the id itself, and a test makes sure none is
missing in either language.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional

LANGS = ("en", "zh")
_HERE = os.path.dirname(os.path.abspath(__file__))
_CATALOGS: Dict[str, Dict[str, str]] = {}


# The variables gettext reads for the language of messages, in its order: the first one set decides. LANGUAGE is a
# list of preferences ("zh_CN:en"), the others one locale name ("zh_CN.UTF-8", "C").
LANG_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def default_lang(environ: Optional[Mapping[str, str]] = None) -> str:
    """The language when ``--lang`` is not given, chosen as gettext chooses one: the first of LANGUAGE, LC_ALL,
    LC_MESSAGES and LANG that is set; in a LANGUAGE list the first language gpuvet speaks. ``zh`` for a Chinese one
    (zh, zh_CN, zh_TW.UTF-8 ...), ``en`` otherwise (C, POSIX, en_US, a language gpuvet has no catalog for)."""
    environ = os.environ if environ is None else environ
    for key in LANG_VARIABLES:
        value = environ.get(key)
        if not value:
            continue
        for name in value.split(":") if key == "LANGUAGE" else [value]:
            language = name.strip().lower().replace("-", "_").partition("_")[0].partition(".")[0]
            if language in LANGS:
                return language
            if key != "LANGUAGE" or language in ("c", "posix"):
                return "en"
        # a LANGUAGE naming no language gpuvet has: the locale variables decide, as in gettext
    return "en"


def catalog(lang: str) -> Dict[str, str]:
    """Every message of one language, read once per process (``gpuvet probe --format json`` never reads any)."""
    messages = _CATALOGS.get(lang)
    if messages is None:
        messages = _CATALOGS[lang] = _read_catalog(lang)
    return messages


def _read_catalog(lang: str) -> Dict[str, str]:
    from gpuvet.tomlfile import load_toml  # the TOML parser only when a sentence is rendered

    messages: Dict[str, str] = {}
    folder = os.path.join(_HERE, lang)
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".toml"))
    except OSError:
        names = []
    for name in names:
        for key, value in load_toml(os.path.join(folder, name)).items():
            if key in messages:
                raise ValueError(f"message id {key!r} defined twice ({name})")
            messages[key] = value
    return messages


class _Lenient(dict):
    """Leaves an unknown placeholder visible instead of raising, so a message never crashes a report."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


_AREAS: Dict[str, Dict[str, str]] = {}
# Id prefixes that live in another area's file.
_FILE_OF_PREFIX = {"link": "checks", "layer": "report", "verdict": "report", "mirror": "reports"}


def _area(lang: str, message_id: str) -> Dict[str, str]:
    """The one catalog file named after the id's prefix (``checks.x`` → ``checks.toml``), read alone: a report
    that needs the check messages need not parse diagnose's hundreds (start-up of ``gpuvet check``)."""
    prefix = message_id.partition(".")[0]
    key = lang + "/" + _FILE_OF_PREFIX.get(prefix, prefix)
    messages = _AREAS.get(key)
    if messages is None:
        path = os.path.join(_HERE, key + ".toml")
        if os.path.isfile(path) and lang not in _CATALOGS:
            from gpuvet.tomlfile import load_toml

            messages = load_toml(path)
        else:
            messages = {}
        _AREAS[key] = messages
    return messages


def _template(lang: str, message_id: str) -> Optional[str]:
    # Most ids live in the file of their prefix; the rest (link.*, verdict.*, layer.* ...) in the full catalog.
    return _area(lang, message_id).get(message_id) or catalog(lang).get(message_id)


def has_message(message_id: str, lang: str = "en") -> bool:
    """Whether the catalog has this id, reading only the file of its area (not every catalog)."""
    return _template(lang, message_id) is not None


def text(lang: str, message_id: str, **params: Any) -> str:
    """The sentence ``message_id`` in ``lang`` with ``params`` filled in. Plural forms: where ``count`` is 1 and the
    language has a singular form of the sentence (``<id>.one``), that one. English has two forms (CLDR "one" and
    "other"); Chinese has one, so its catalog has no ``.one`` entries and says every count alike."""
    template = None
    if _is_one(params.get("count")):
        template = _template(lang, message_id + ".one") if _template(lang, message_id) else None
    template = template or _template(lang, message_id) or _template("en", message_id) or message_id
    return template.format_map(_Lenient(params))


def _is_one(count: Any) -> bool:
    if count is None or isinstance(count, bool):
        return False
    try:
        return float(str(count).strip()) == 1
    except ValueError:
        return False


def label(lang: str, message_id: str) -> str:
    """A field's name followed by the language's colon ("Fix: ", "修复："): one punctuation style per language."""
    return text(lang, "report.label", label=text(lang, message_id))


def source_label(lang: str, source: Any) -> str:
    """Where a fact came from, as a report says it: the snapshot's source names are identifiers (nvml, nvidia-smi,
    ``pasted:<kind>``, ``stated``), of which the ones that are words get the report's language."""
    source = str(source)
    kind = source[len("pasted:"):] if source.startswith("pasted:") else None
    if kind is not None:
        return text(lang, "report.source.pasted", kind=kind)
    if source == "stated":
        return text(lang, "report.source.stated")
    return source


def render(message: Any, lang: str) -> str:
    """Render a Message (or pass a plain string through)."""
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    params = {key: _rendered(value, lang) for key, value in dict(message.params).items()}
    return text(lang, message.id, **params)


def _rendered(value: Any, lang: str) -> Any:
    """A parameter as it goes into its sentence: a Message rendered, a list of Messages rendered and joined by "; "
    (a note that lists several facts, each its own sentence), anything else as it is."""
    if _is_message(value):
        return render(value, lang)
    if isinstance(value, (list, tuple)) and value and all(_is_message(v) for v in value):
        return "; ".join(render(v, lang) for v in value)
    return value


def _is_message(value: Any) -> bool:
    # Messages may nest (a fix that says "do A, or else B"); duck-typed to keep this module free of models.
    return hasattr(value, "id") and hasattr(value, "params")

"""argparse's own refusals (an unknown option, a missing argument, a value not among the choices) as one catalog
line in the user's language.

argparse writes these sentences in English (its gettext domain has no catalog here) and prints them under the usage
on the process's stderr. gpuvet's parser turns each into a :class:`UsageError` instead, which ``run_command`` says
like every other usage error: in the language of ``--lang`` (or LANGUAGE, LC_ALL, LC_MESSAGES, LANG), on the stream
its caller gave (``gpuvet mcp`` passes buffers of its own), exit code 2."""

from __future__ import annotations

import re
from typing import Pattern, Sequence, Tuple

from gpuvet.errors import UsageError

# argparse's templates (Lib/argparse.py, the same words from Python 3.8 to 3.13; 3.12.7+ lists choices without
# quotes), each with the catalog entry it becomes. Anything else keeps argparse's words inside errors.args.other.
_TEMPLATES: Tuple[Tuple[Pattern[str], str], ...] = tuple((re.compile(pattern, re.S), key) for pattern, key in (
    (r"unrecognized arguments: (?P<arguments>.+)\Z", "errors.args.unrecognized"),
    (r"the following arguments are required: (?P<arguments>.+)\Z", "errors.args.required"),
    (r"one of the arguments (?P<arguments>.+) is required\Z", "errors.args.one_required"),
    (r"argument (?P<option>.+?): invalid choice: (?P<value>.+?) \(choose from (?P<choices>.*)\)\Z",
     "errors.args.invalid_choice"),
    (r"argument (?P<option>.+?): invalid int value: (?P<value>.+)\Z", "errors.args.not_an_integer"),
    (r"argument (?P<option>.+?): invalid float value: (?P<value>.+)\Z", "errors.args.not_a_number"),
    (r"argument (?P<option>.+?): expected one argument\Z", "errors.args.needs_value"),
    (r"argument (?P<option>.+?): not allowed with argument (?P<other>.+)\Z", "errors.args.not_together"),
    (r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)\Z", "errors.args.ambiguous"),
    (r"argument (?P<option>.+?): ignored explicit argument (?P<value>.+)\Z", "errors.args.takes_no_value"),
))


def usage_error(message: str, prog: str) -> UsageError:
    """The error argparse's ``message`` names, for the command ``prog`` (``gpuvet check``)."""
    for pattern, key in _TEMPLATES:
        match = pattern.match(message)
        if match:
            return UsageError.said_with_hint(key, "errors.args.hint", prog=prog, **match.groupdict())
    return UsageError.said_with_hint("errors.args.other", "errors.args.hint", prog=prog, detail=message)


def lang_on_the_line(argv: Sequence[str]) -> str:
    """The language a command line asks for, read before (or without) a successful parse: the last valid ``--lang``
    value, else the environment's as gettext chooses it."""
    from gpuvet.i18n import LANGS, default_lang

    chosen = None
    for index, word in enumerate(argv):
        value = argv[index + 1] if word == "--lang" and index + 1 < len(argv) else (
            word.split("=", 1)[1] if word.startswith("--lang=") else None)
        if value in LANGS:
            chosen = value
    return chosen or default_lang()

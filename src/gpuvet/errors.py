"""One exception hierarchy, handled in one place (cli.main): it prints ``error: ...`` and ``hint: ...``."""

import enum
from typing import Any, Dict, Optional, Tuple, Type, TypeVar


class ExitCode(enum.IntEnum):
    """The exit codes of docs/CONTRACT.md §1-2: scripts depend on them."""

    OK = 0  # no failure (warnings allowed)
    FAILURE = 1  # at least one failing finding
    USAGE = 2  # usage or input error, one clear line on stderr
    UNDECIDED = 3  # a target the knowledge base cannot judge
    INTERNAL = 4  # a bug in gpuvet (an unexpected exception): never a verdict
    BROKEN_INSTALL = 5  # gpuvet's own files (the shipped knowledge base) cannot be read: reinstall, not the user's input


_Error = TypeVar("_Error", bound="GpuvetError")


class GpuvetError(Exception):
    """Base of every error gpuvet reports to a user. ``message`` is one line; ``hint`` says what to do.

    An error made with :meth:`said` names its catalog entry (``errors.<name>``, and ``errors.<name>.hint`` when it
    has one) and its facts: ``message``/``hint`` hold the English, and the command line says it in the report's
    language (:meth:`in_language`)."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str, hint: str = "", key: Optional[str] = None,
                 params: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.key = key
        self.params: Dict[str, Any] = dict(params or {})
        self.hint_key: Optional[str] = None

    @classmethod
    def said(cls: Type[_Error], key: str, /, **params: Any) -> _Error:
        """The error whose sentence is the catalog entry ``key`` filled with ``params`` (a parameter may itself be a
        catalog message, :class:`gpuvet.models.Message`, said in the same language)."""
        return cls.said_with_hint(key, None, **params)

    @classmethod
    def said_with_hint(cls: Type[_Error], key: str, hint_key: Optional[str], /, **params: Any) -> _Error:
        """:meth:`said`, with the hint of another catalog entry (``hint_key``; None: ``key + ".hint"``), for hints
        several errors share."""
        error = cls("", key=key, params=params)
        error.hint_key = hint_key
        error.message, error.hint = error.in_language("en")
        error.args = (error.message,)
        return error

    def in_language(self, lang: str) -> Tuple[str, str]:
        """(message, hint) in ``lang``: the catalog's sentences for an error made with :meth:`said`."""
        if not self.key:
            return self.message, self.hint
        from gpuvet.i18n import has_message, render
        from gpuvet.models import Message

        hint_key = self.hint_key or self.key + ".hint"
        hint = render(Message(hint_key, self.params), lang) if has_message(hint_key) else self.hint
        return render(Message(self.key, self.params), lang), hint


class UsageError(GpuvetError):
    """The command line does not make sense."""


class InputError(GpuvetError):
    """A file or pasted text that gpuvet cannot read (garbage, truncated, binary, unknown kind)."""


class KnowledgeBaseError(GpuvetError):
    """The shipped knowledge base is broken (a bug or a damaged installation, not a user error): its own exit code,
    so a script does not take it for bad input."""

    exit_code = ExitCode.BROKEN_INSTALL


def printable(text: Any) -> str:
    """``text`` safe to echo on one line (every error line, every path `archs` prints): control characters (a
    newline that would forge a second ``error:`` line, ANSI escapes that would recolour or clear the terminal) are
    shown as escapes (\\n, \\x1b). Here, beside the errors, because every error line goes through it and this module
    is on every start-up path already."""
    text = str(text)
    if all(" " <= c != "\x7f" and not ("\x80" <= c <= "\x9f" or "\ud800" <= c <= "\udfff") for c in text) \
            and "\\" not in text:
        return text
    out = []
    for c in text:
        if c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c < " " or c == "\x7f" or "\x80" <= c <= "\x9f":
            out.append("\\x%02x" % ord(c))
        elif "\udc80" <= c <= "\udcff":  # a byte of a file name that is not UTF-8 (surrogateescape)
            out.append("\\x%02x" % (ord(c) - 0xdc00))
        elif "\ud800" <= c <= "\udfff":
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return "".join(out)

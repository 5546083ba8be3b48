"""Secrets never reach output: evidence lines are quoted from user logs, which carry tokens and credentials."""

from __future__ import annotations

import re

_SECRETS = (
    (re.compile(r"(\w+://)[^/\s:@]+:[^/\s@]+@"), r"\1***:***@"),  # https://user:pass@host
    (re.compile(r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[baprs]-[\w-]{10,}|AKIA[0-9A-Z]{16})\b"), "***"),
    (re.compile(r"(?i)\b((?:api[_-]?key|token|secret|password|passwd|pwd|access[_-]?key|auth)\w*\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"), r"\1***"),
    (re.compile(r"(?i)(authorization:\s*(?:bearer|basic)\s+)\S+"), r"\1***"),
)
_HOST = (
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "<ip>"),
    (re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}\b"), r"\1-<uuid>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
)


def redact_line(text: str, host: bool = False) -> str:
    for regex, replacement in _SECRETS + (_HOST if host else ()):
        text = regex.sub(replacement, text)
    return text

"""Code that acts on a finding reads ``Finding.facts``, never its messages' parameters: ``title.params`` and
``detail.params`` are the strings the catalog sentences get ("GPU 3 (NVIDIA A10)"), and reading them back (a regex over
a label, a ``" / "`` split) breaks when the wording changes. Only the packages that turn messages into words (``i18n``,
``report``) read them. Read from the source with ``ast`` (the module walk of test_layers.py)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List

from tests.architecture.test_layers import SRC, all_modules, module_name

# The packages whose job is to say a message: they read its parameters to render or serialise them.
SAYS_MESSAGES = ("gpuvet.i18n", "gpuvet.report")

# A finding's messages (``fix.summary`` is one too).
MESSAGE_FIELDS = frozenset({"title", "detail", "summary"})


def message_param_reads(source: str) -> List[int]:
    """The lines of ``source`` that read ``<x>.title.params``, ``<x>.detail.params`` or ``<x>.summary.params``, or
    the ``params`` of a variable with one of these names."""
    return sorted(node.lineno for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.Attribute) and node.attr == "params"
                  and (isinstance(node.value, ast.Attribute) and node.value.attr in MESSAGE_FIELDS
                       or isinstance(node.value, ast.Name) and node.value.id in MESSAGE_FIELDS))


def _held_to_it(module: str) -> bool:
    return not any(module == package or module.startswith(package + ".") for package in SAYS_MESSAGES)


def test_the_walk_finds_each_way_of_reading_a_label_back() -> None:
    source = ("gpu = finding.title.params['gpu']\n"
              "facts = dict(f.detail.params)\n"
              "builds = fix.summary.params.get('builds', '').split(' / ')\n"
              "first = summary.params.get('first')\n"
              "fine = finding.facts['gpu_index'] + len(message.params)\n")
    assert message_param_reads(source) == [1, 2, 3, 4]


def test_no_module_outside_i18n_and_report_reads_a_findings_message_params() -> None:
    found = [f"{path.relative_to(SRC.parent)}:{line}" for path in all_modules() if _held_to_it(module_name(path))
             for line in message_param_reads(Path(path).read_text(encoding="utf-8"))]
    assert found == [], "read Finding.facts instead (pass the structured value to findings.make): %s" % found

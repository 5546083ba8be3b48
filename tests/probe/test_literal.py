"""probe.packages.literal reads the values of generated version files (torch/version.py, paddle/version) without
importing ast for the plain ones: it must answer exactly as ast.literal_eval does, or leave the text to it."""

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuvet.probe.packages import literal, parse_assignments


def _both(text):
    try:
        expected = ("value", ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        expected = ("error", type(exc))
    try:
        got = ("value", literal(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        got = ("error", type(exc))
    return expected, got


@pytest.mark.parametrize("text", [
    "'2.13.0+cpu'", '"12.4"', "None", "True", "False", "0", "42", "007", "''", '""', "'a\"b'", "'it''s'",
    "'\\n'", "r'x'", "b'x'", "'''x'''", "['a', 'b']", "(1, 2)", "-1", "1.5", "１２", "٣", "'x' 'y'", "'x", "x'",
    "'", "None ", "true", "{'a': 1}", "'中文'",
])
def test_literal_answers_as_ast_does(text):
    expected, got = _both(text)
    assert got == expected


@given(st.text(alphabet="'\"\\0123456789abNoneTrueFals .+-_[](),:\u0663", max_size=12))
def test_literal_answers_as_ast_does_on_any_text(text):
    expected, got = _both(text)
    assert got == expected


def test_torch_version_py_is_read_without_importing_ast():
    import subprocess
    import sys

    code = ("import sys; from gpuvet.probe.packages import parse_assignments; "
            "v = parse_assignments(\"__all__ = ['__version__', 'cuda']\\n__version__ = '2.13.0+cpu'\\ndebug = False\\n"
            "cuda: Optional[str] = None\\n\", ('__version__', 'cuda', 'debug')); "
            "print(v == {'__version__': '2.13.0+cpu', 'cuda': None, 'debug': False}, 'ast' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "False"], done.stderr


def test_names_limit_what_is_read():
    text = "__all__ = ['x']\nx = '1'\ny = 2\n"
    assert parse_assignments(text) == {"__all__": ["x"], "x": "1", "y": 2}
    assert parse_assignments(text, ("x",)) == {"x": "1"}


def _metadata_by_splitting_everything(text):
    """parse_metadata as it was: every line of the file split, then read up to the first blank one."""
    name = version = None
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "name" and name is None:
            name = value.strip()
        elif key == "version" and version is None:
            version = value.strip()
    return name, version


@given(st.lists(st.sampled_from(["Name: a", "Version: 1", "Version: 2", "\n", "\r\n", "\r", "\x0b", " ", "x" * 3000,
                                 "\x1c", "\u2028", ":", "Name: b"]), max_size=40))
def test_metadata_headers_read_as_when_every_line_was_split(parts):
    from gpuvet.probe.packages import parse_metadata

    text = "".join(parts)
    assert parse_metadata(text) == _metadata_by_splitting_everything(text)

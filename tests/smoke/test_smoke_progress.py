"""Long smoke runs say what they are doing on a terminal (stderr), and nothing when piped or in JSON."""

import io

from gpuvet.cli.smoke import progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_one_line_per_run():
    stream = Terminal()
    started = progress("en", stream)
    started("torch", 120.0)
    assert stream.getvalue() == "gpuvet smoke: running torch (up to 120 s) ...\n"
    zh = Terminal()
    progress("zh", zh)("torch", 120.0)
    assert "正在运行 torch" in zh.getvalue()


def test_a_pipe_gets_nothing():
    assert progress("en", io.StringIO()) is None

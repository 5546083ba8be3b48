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


def test_a_large_log_is_announced_on_a_terminal_only():
    from gpuvet.cli.diagnose import LARGE_LOG, announce_large_log

    log = "RuntimeError: CUDA error\n" * (LARGE_LOG // 24 + 1)
    stream = Terminal()
    assert announce_large_log(log, "en", stream)
    assert stream.getvalue().startswith("gpuvet diagnose: reading 8 MB (")
    assert not announce_large_log(log, "en", io.StringIO())  # piped: nothing
    assert not announce_large_log("short\n", "en", Terminal())

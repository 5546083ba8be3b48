"""Exceptions gpuvet deliberately survives, recorded where ``--debug`` (or ``GPUVET_DEBUG=1``) can show them.

Some failures must not end a run: a parser that chokes on one block of a pasted log, a knowledge-base lookup a
diagnosis can do without. Those handlers call :func:`survived` instead of passing silently. It goes through the
standard ``logging`` package (logger ``gpuvet.<module>``), configured only by the command line (``cli.run_command``)
when ``--debug`` is given: without it ``logging`` is not even imported, which keeps a plain ``gpuvet check`` as
fast to start as before (importing ``logging`` costs more than a whole check's own work in some of its phases).
"""

from __future__ import annotations

import sys

_enabled = False


def enable(stream=None) -> None:
    """Send every survived exception, with its traceback, to ``stream`` (stderr) from now on."""
    global _enabled
    import logging

    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter("debug: %(name)s: %(message)s"))
    root = logging.getLogger("gpuvet")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG)
    root.propagate = False
    _enabled = True


def survived(module: str, what: str) -> None:
    """Record the exception being handled: ``module`` is the caller's ``__name__``, ``what`` what was given up."""
    if _enabled:
        import logging

        logging.getLogger(module).debug("survived: %s", what, exc_info=True)

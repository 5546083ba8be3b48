"""The one way the probe runs a command: argv list, no shell, a timeout, output decoded leniently.

Tests replay recorded outputs by putting real stand-ins (a fake ``nvidia-smi`` script) on PATH, so the runner
itself is never mocked.
"""

import os
import signal
import subprocess

DEFAULT_TIMEOUT = 10.0
KILL_GRACE = 2.0  # seconds to wait for the pipes to close after the group was killed


class CommandResult(object):
    """What a command did: ``ok`` means it ran and exited 0; ``error`` says why not, in one line."""

    __slots__ = ("argv", "returncode", "stdout", "stderr", "error")

    def __init__(self, argv, returncode=None, stdout="", stderr="", error=None):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.error = error

    @property
    def ok(self):
        return self.error is None and self.returncode == 0

    def why(self):
        """One line that says why the command did not succeed."""
        if self.error:
            return self.error
        text = (self.stderr or self.stdout or "").strip().splitlines()
        tail = text[-1] if text else ""
        return "%s exited %s%s" % (self.argv[0], self.returncode, (": " + tail) if tail else "")


def which(name, path=None):
    """shutil.which without importing shutil's heavier friends (kept tiny on purpose)."""
    for folder in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not folder:
            continue
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# Process groups of the commands running now: the probe's deadline (collect.arm_deadline) kills them before it exits,
# so a fleet host the client gave up on is left with nothing of gpuvet running.
LIVE_GROUPS = set()  # type: set


def run(argv, timeout=DEFAULT_TIMEOUT, env=None, input_text=None):
    """Run ``argv`` (a list, never a shell string) and return a CommandResult; never raises.

    The command starts in its own session (so its own process group): when it runs past ``timeout`` the whole
    group is killed -- a shell script's children too (an ``nvidia-smi`` wrapper whose child sleeps), not only the
    process started. A group left behind by a command that did exit (a child it backgrounded) is killed as well.
    """
    posix = os.name == "posix"
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=posix,
        )
    except (OSError, ValueError) as exc:
        return CommandResult(argv, error="cannot run %s: %s" % (argv[0], getattr(exc, "strerror", None) or exc))
    if posix:
        LIVE_GROUPS.add(proc.pid)
    try:
        return _wait(proc, argv, timeout, input_text, posix)
    finally:
        LIVE_GROUPS.discard(proc.pid)


def _wait(proc, argv, timeout, input_text, posix):
    try:
        out, err = proc.communicate(
            input=input_text.encode("utf-8") if input_text is not None else None, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        kill_group(proc)
        try:
            proc.communicate(timeout=KILL_GRACE)
        except Exception:  # a process stuck in the kernel (wedged GPU) may not even die; give up on it
            pass
        return CommandResult(argv, error="%s timed out after %g s (its process group was killed)" % (argv[0], timeout))
    if posix:
        kill_group(proc, only_leftovers=True)
    return CommandResult(
        argv,
        returncode=proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )


def kill_group(proc, only_leftovers=False):
    """SIGKILL the process group ``proc`` leads (it was started with ``start_new_session``); never raises."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (OSError, AttributeError):  # the group is already gone
            pass
    if not only_leftovers:
        try:
            proc.kill()
        except OSError:
            pass

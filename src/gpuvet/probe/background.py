"""The live probe in a child process, so that a command can work meanwhile (``gpuvet check`` imports its checks
and loads its knowledge while this machine is read).

Light on purpose: the fork comes before the probe's own modules are imported, and the child imports them; the
caller's process imports them only when it has to probe by itself (no fork here, or no usable answer from the
child). Standard library only, Python 3.6+.
"""

import os
import sys


def start_probe(binaries=True, timeout=None):
    """:func:`gpuvet.probe.collect.probe` started now in a forked child, so the caller can do its own work (import its checks, load its
    knowledge) meanwhile; :meth:`PendingProbe.result` returns the snapshot. Where there is no fork, or the child
    gives no usable answer, the probe runs in this process then. Fork before starting any thread."""
    return PendingProbe(binaries, timeout)


class PendingProbe(object):
    """A probe under way in a child process (see :func:`start_probe`); ``result()`` waits for it, once.

    The child sends the snapshot as JSON through a pipe. It checks first that the JSON reads back as exactly the
    snapshot (every probe fact is plain JSON data); if it would not, it sends nothing and the probe is run again in
    this process, so the caller always gets what :func:`gpuvet.probe.collect.probe` returns."""

    def __init__(self, binaries=True, timeout=None):
        self._binaries, self._timeout = binaries, timeout
        self._snapshot = None
        self._pid = None
        if not hasattr(os, "fork"):
            return
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            read_fd, write_fd = os.pipe()
            pid = os.fork()
        except (OSError, ValueError):
            return  # probed in this process by result()
        if pid == 0:  # pragma: no cover - the child leaves through os._exit
            os.close(read_fd)
            _probe_child(write_fd, binaries, timeout)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd

    def result(self):
        if self._snapshot is None:
            pid = self._pid
            snapshot = self._collect(pid) if pid is not None else None
            if snapshot is None:
                from gpuvet.probe.collect import probe

                snapshot = probe(self._binaries, self._timeout)
            self._snapshot = snapshot
        return self._snapshot

    def _collect(self, pid):
        import json

        chunks = []
        try:
            while True:
                try:
                    chunk = os.read(self._read_fd, 1 << 20)
                except InterruptedError:  # pragma: no cover - retried by Python 3.5+ itself
                    continue
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._read_fd)
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        try:
            snapshot = json.loads(b"".join(chunks).decode("utf-8"))
        except ValueError:  # the child died or found the snapshot not plain JSON: probe here instead
            return None
        return snapshot if isinstance(snapshot, dict) else None


def _probe_child(write_fd, binaries, timeout):
    """In the forked child: probe, send the snapshot as JSON (nothing when it does not read back as itself), and
    leave without the parent's exit handlers (os._exit)."""
    code = 0
    try:
        import json

        from gpuvet.probe.collect import probe

        snapshot = probe(binaries, timeout)
        text = json.dumps(snapshot)
        data = text.encode("utf-8") if json.loads(text) == snapshot else b""
        while data:
            written = os.write(write_fd, data)
            data = data[written:]
    except BaseException:
        code = 1
    finally:
        os._exit(code)

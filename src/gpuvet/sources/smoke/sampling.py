"""Start and stop the utilization sampler (``gpuvet.sources.smoke.sampler``) around a distributed smoke run.

The sampler writes to a temporary file, not a pipe, so a long run never blocks it on a full pipe buffer; it is
stopped with SIGTERM and, when an NVML call hangs, killed after a grace period. Either way the samples it wrote
are read back: a sampler that dies never costs the smoke run its results.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Union

from gpuvet.sources.smoke.child import parse_results

SIGNALS = ("auto", "nvml", "cpu", "off")
DEFAULT_INTERVAL_S = 0.2  # a few times a second; NVML's own sample period is 1/6 s to 1 s
STOP_GRACE_S = 3.0


def nvml_devices(cuda_visible: Optional[str], count: int) -> "tuple[Optional[List[Union[int, str]]], Optional[str]]":
    """The NVML devices that ``count`` ranks use (rank i on the i-th visible device), or (None, why not).

    ``CUDA_VISIBLE_DEVICES`` holds indices or UUIDs; a MIG instance has no utilization of its own in NVML.
    """
    if cuda_visible is None:
        return list(range(count)), None
    devices: List[Union[int, str]] = []
    for item in cuda_visible.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("MIG-"):
            return None, "MIG instances have no per-instance utilization in NVML"
        if item.isdigit():
            devices.append(int(item))
        elif item.startswith("GPU-"):
            devices.append(item)
        else:
            break  # CUDA stops at the first entry it cannot read
    if not devices:
        return None, "CUDA_VISIBLE_DEVICES=%r names no GPU" % cuda_visible
    return devices[:count], None


def choose_signal(requested: str, uses_gpus: bool) -> Optional[str]:
    """``auto``: GPU utilization when the ranks run on GPUs, else each rank's CPU time; ``off``: none."""
    if requested == "off":
        return None
    if requested == "nvml" or (requested == "auto" and uses_gpus):
        return "nvml"
    return "process_cpu"


class Sampler:
    """One sampler child: ``start(root_pid)`` once torchrun runs, ``stop()`` when it has finished."""

    def __init__(self, signal_name: str, ranks: int, environ: Mapping[str, str],
                 interval: float = DEFAULT_INTERVAL_S, python: str = sys.executable) -> None:
        self.signal = signal_name
        self.ranks = ranks
        self.environ = dict(environ)
        self.interval = interval
        self.python = python
        self.error: Optional[str] = None
        self._proc: "Optional[subprocess.Popen[bytes]]" = None
        self._out: Optional[IO[bytes]] = None
        self.killed = False

    def argv(self, root_pid: int) -> Optional[List[str]]:
        argv = [self.python, "-m", "gpuvet.sources.smoke.sampler", "--signal", self.signal,
                "--interval", "%g" % self.interval]
        if self.signal == "nvml":
            devices, why = nvml_devices(self.environ.get("CUDA_VISIBLE_DEVICES"), self.ranks)
            if devices is None:
                self.error = why
                return None
            return argv + ["--devices", ",".join(str(d) for d in devices)]
        return argv + ["--root-pid", str(root_pid), "--ranks", str(self.ranks)]

    def start(self, root_pid: int) -> None:
        argv = self.argv(root_pid)
        if argv is None:
            return
        self._out = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.DEVNULL,
                                          env=self.environ, start_new_session=(os.name == "posix"))
        except OSError as exc:
            self.error = "cannot start the sampler: %s" % (exc.strerror or exc)

    def stop(self) -> Dict[str, Any]:
        """Stop the sampler (bounded) and return what it recorded (``raw_series`` shape, see ``collect``)."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:  # stuck inside NVML
                self.killed = True
                try:
                    os.killpg(self._proc.pid, signal.SIGKILL)
                except (OSError, AttributeError):
                    self._proc.kill()
                try:
                    self._proc.wait(timeout=STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    pass
        lines: List[Dict[str, Any]] = []
        if self._out is not None:
            self._out.seek(0)
            lines = parse_results(self._out.read().decode("utf-8", "replace"))
            self._out.close()
        return collect(lines, self.signal, self.error, self.killed)


def collect(lines: Sequence[Mapping[str, Any]], signal_name: str, error: Optional[str] = None,
            killed: bool = False) -> Dict[str, Any]:
    """The sampler's lines as one record: ``{"signal", "interval_s", "devices", "t", "values", "memory", "error"}``
    (``values[i]`` is device i's series; ``None`` where a read failed)."""
    header = next((line for line in lines if line.get("kind") == "sampler"), None)
    failure = next((line for line in lines if line.get("kind") == "sampler_error"), None)
    samples = [line for line in lines if line.get("kind") == "sample"]
    if failure is not None:
        error = str(failure.get("error") or "the sampler failed")
    elif header is None and error is None:
        error = "the sampler recorded nothing" + (" (killed: an NVML call hung)" if killed else "")
    devices = list(header.get("devices") or []) if header else []
    width = len(devices)

    def column(key: str, index: int) -> List[Optional[float]]:
        """Device ``index``'s series of ``key``; a reading that is no number, or a utilization outside 0-100 (a
        broken NVML or a sampler's garbled line), is None: never a point of the smoke document."""
        out: List[Optional[float]] = []
        for sample in samples:
            row = sample.get(key)
            value = row[index] if isinstance(row, list) and index < len(row) else None
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value or value < 0 \
                    or (key == "values" and value > 100) or value == float("inf"):
                value = None
            out.append(value)
        return out

    return {
        "signal": signal_name,
        "interval_s": header.get("interval_s") if header else None,
        "devices": devices,
        "t": [sample.get("t") for sample in samples],
        "values": [column("values", i) for i in range(width)],
        "memory": [column("memory", i) for i in range(width)] if signal_name == "nvml" else None,
        "error": error,
        "killed": killed,
    }

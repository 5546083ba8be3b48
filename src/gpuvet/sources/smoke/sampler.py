"""Child program that samples how busy each GPU (or each rank's process) is while ``smoke --distributed`` runs.

    python -m gpuvet.sources.smoke.sampler --signal nvml --devices 0,1 --interval 0.2
    python -m gpuvet.sources.smoke.sampler --signal process_cpu --root-pid 1234 --ranks 2 --interval 0.2

It prints one header line, then one line per sample (``MARKER``-prefixed JSON, see ``child.emit``), until it is
sent SIGTERM or has taken ``--max-samples``. It is a process of its own, not a thread of gpuvet, because an NVML
call can hang on a wedged GPU: the parent (``gpuvet.sources.smoke.sampling``) kills it after a grace period and
keeps the lines it had written.

Signals:

* ``nvml``: ``nvmlDeviceGetUtilizationRates`` per GPU (percent of time a kernel ran, and device memory was busy).
* ``process_cpu``: on CPUs (gloo), each rank's CPU time per wall-clock second, in percent of one core (capped at
  100), from the processes torchrun started (found by their ``LOCAL_RANK`` under ``--root-pid``).
"""

from __future__ import annotations

import argparse
import signal
import time
from typing import Any, Dict, List, Optional, Union

from gpuvet.sources.smoke.child import emit


class _Stop(Exception):
    pass


def _stop(signum: int, frame: Any) -> None:
    raise _Stop()


def parse_devices(text: str) -> List[Union[int, str]]:
    """``0,1`` or ``GPU-uuid,...`` as NVML wants them (indices as ints, UUIDs as text)."""
    devices: List[Union[int, str]] = []
    for item in text.split(","):
        item = item.strip()
        if item:
            devices.append(int(item) if item.isdigit() else item)
    return devices


class RankProcesses:
    """The process of each local rank under torchrun, found again until all are there; CPU percent per sample."""

    def __init__(self, root_pid: int, ranks: int) -> None:
        import psutil

        self._psutil = psutil
        self.root_pid = root_pid
        self.ranks = ranks
        self._found: Dict[int, Any] = {}
        self._last: Dict[int, "tuple[float, float]"] = {}

    def _local_rank(self, process: Any) -> Optional[int]:
        try:
            value = process.environ().get("LOCAL_RANK")
        except (self._psutil.Error, OSError):
            return None
        return int(value) if value is not None and value.isdigit() else None

    def _scan(self) -> None:
        try:
            children = self._psutil.Process(self.root_pid).children(recursive=True)
        except self._psutil.Error:
            return
        ranked = {child.pid: self._local_rank(child) for child in children}
        for child in children:
            rank = ranked[child.pid]
            if rank is None or rank in self._found or rank >= self.ranks:
                continue
            try:
                parent_rank = ranked.get(child.ppid())
            except self._psutil.Error:
                continue
            if parent_rank is None:  # the rank itself, not a helper process it started (they inherit LOCAL_RANK)
                self._found[rank] = child

    def read(self) -> List[Optional[float]]:
        if len(self._found) < self.ranks:
            self._scan()
        now = time.monotonic()
        values: List[Optional[float]] = []
        for rank in range(self.ranks):
            process = self._found.get(rank)
            if process is None:
                values.append(None)
                continue
            try:
                times = process.cpu_times()
            except self._psutil.Error:  # the rank has exited
                values.append(None)
                continue
            used = times.user + times.system
            previous = self._last.get(rank)
            self._last[rank] = (now, used)
            if previous is None or now <= previous[0]:
                values.append(None)
            else:
                values.append(round(min(100.0, 100.0 * (used - previous[1]) / (now - previous[0])), 1))
        return values


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuvet.sources.smoke.sampler")
    parser.add_argument("--signal", choices=("nvml", "process_cpu"), required=True)
    parser.add_argument("--devices", default="", help="NVML indices or GPU UUIDs, comma-separated (nvml)")
    parser.add_argument("--root-pid", type=int, default=None, help="torchrun's process id (process_cpu)")
    parser.add_argument("--ranks", type=int, default=0, help="local ranks to find (process_cpu)")
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--max-samples", type=int, default=6000)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    reader: Any = None
    try:
        if args.signal == "nvml":
            from gpuvet.probe.nvml import UtilizationReader

            reader = UtilizationReader(parse_devices(args.devices))
            if not reader.open():
                emit({"kind": "sampler_error", "signal": "nvml", "error": reader.error})
                return 0
            emit({"kind": "sampler", "signal": "nvml", "interval_s": args.interval,
                  "devices": [{"label": "GPU %s" % d, "index": d if isinstance(d, int) else None, "name": name}
                              for d, name in zip(reader.devices, reader.names)]})
        else:
            reader = RankProcesses(args.root_pid or 0, args.ranks)
            emit({"kind": "sampler", "signal": "process_cpu", "interval_s": args.interval,
                  "devices": [{"label": "rank %d" % r, "index": r, "name": None} for r in range(args.ranks)]})
        deadline = time.monotonic()
        for _ in range(args.max_samples):
            values = reader.read()
            sample: Dict[str, Any] = {"kind": "sample", "t": round(time.time(), 3)}
            if args.signal == "nvml":
                sample["values"] = [v[0] if v else None for v in values]
                sample["memory"] = [v[1] if v else None for v in values]
            else:
                sample["values"] = values
            emit(sample)
            deadline += args.interval  # a fixed grid: a slow read does not stretch the series
            time.sleep(max(0.0, deadline - time.monotonic()))
    except (_Stop, KeyboardInterrupt):
        pass
    finally:
        if args.signal == "nvml" and reader is not None:
            reader.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

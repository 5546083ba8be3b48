"""Run the probe on the nodes of a Slurm allocation: one ``srun`` with one task per node, the bundle on stdin.

``srun --input=all`` gives every task the script; ``--label`` prefixes each output line with the task id, so the
interleaved output is split per task and each section names its node (SLURMD_NODENAME, set by slurmd).
Node names come from the user (``--nodelist``) or the allocation (SLURM_JOB_NUM_NODES); they go into argv only.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from typing import Dict, List, Mapping, Optional, Sequence

from gpuvet.errors import InputError
from gpuvet.sources.fleet import result as R
from gpuvet.sources.fleet.bundle import extract_outputs, parse_snapshot_text
from gpuvet.sources.fleet.hosts import HostSpec

_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")


def srun_argv(nodes: Sequence[str], environ: Mapping[str, str]) -> List[str]:
    argv = ["srun", "--ntasks-per-node=1", "--input=all", "--label", "--kill-on-bad-exit=0"]
    if nodes:
        argv += [f"--nodes={len(nodes)}", "--nodelist=" + ",".join(nodes)]
    elif environ.get("SLURM_JOB_NUM_NODES"):
        argv += [f"--nodes={environ['SLURM_JOB_NUM_NODES']}"]
    else:
        raise InputError.said("errors.slurm_no_nodes")
    return argv + ["python3", "-"]


def split_by_task(text: str) -> Dict[int, str]:
    """srun --label output -> task id -> that task's lines (unlabelled lines are srun's own and are dropped)."""
    tasks: Dict[int, List[str]] = {}
    for line in text.splitlines():
        match = _LABEL.match(line)
        if match:
            tasks.setdefault(int(match.group(1)), []).append(match.group(2))
    return {task: "\n".join(lines) + "\n" for task, lines in sorted(tasks.items())}


def _same_node(a: str, b: str) -> bool:
    return a == b or a.split(".")[0] == b.split(".")[0]


def results_from_output(nodes: Sequence[str], stdout: str, stderr: str, returncode: Optional[int],
                        timed_out: bool, timeout: float) -> List[R.HostResult]:
    """One HostResult per requested node (in the order given), or per task when the allocation chose them."""
    errors = split_by_task(stderr)
    by_node: Dict[str, R.HostResult] = {}
    unnamed: List[R.HostResult] = []
    for task, text in split_by_task(stdout).items():
        outputs = extract_outputs(text)
        if not outputs:
            unnamed.append(R.HostResult(f"task {task}", R.PROBE_FAILED,
                                        error=R.one_line(errors.get(task)) or "no snapshot in the output"))
            continue
        node = outputs[0].node
        try:
            snapshot = parse_snapshot_text(outputs[0].text)
        except ValueError as exc:
            by_node[node] = R.HostResult(node, R.PROBE_FAILED, error=f"probe output is not a snapshot: {exc}")
            continue
        by_node[node] = R.HostResult(node, R.OK, snapshot=R.mark_fleet_origin(snapshot, node, R.METHOD_BUNDLE),
                                     method=R.METHOD_BUNDLE)
    if not nodes:
        return list(by_node.values()) + unnamed
    results = []
    for name in nodes:
        match = next((r for node, r in by_node.items() if _same_node(node, name)), None)
        if match is not None:
            match.name = name
            if match.snapshot is not None:
                match.snapshot["origin"]["host"] = name
            results.append(match)
        elif timed_out:
            results.append(R.HostResult(name, R.TIMEOUT, error=f"srun gave no answer from this node within {timeout:g} s"))
        else:
            why = R.one_line(stderr) or f"srun exited {returncode}"
            results.append(R.HostResult(name, R.PROBE_FAILED, error=f"no snapshot from this node ({why})"))
    return results


def probe_nodes(specs: Sequence[HostSpec], script: str, timeout: float,
                environ: Optional[Mapping[str, str]] = None) -> List[R.HostResult]:
    environ = os.environ if environ is None else environ
    for spec in specs:
        if spec.user or spec.port:
            raise InputError.said("errors.slurm_node_name", name=spec.name)
    nodes = [spec.host for spec in specs]
    argv = srun_argv(nodes, environ)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise InputError.said("errors.slurm_no_srun") from None
    timed_out = False
    try:
        out, err = proc.communicate(script.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()  # srun forwards the kill to its tasks
        out, err = proc.communicate()
    results = results_from_output(nodes, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                                  proc.returncode, timed_out, timeout)
    elapsed = round(time.monotonic() - started, 3)
    for item in results:
        item.seconds = elapsed
    return results


def compress_hostlist(names) -> str:
    """Slurm's hostlist form of ``names`` (what ``scontrol show hostlistsorted`` prints): ``gpu01,gpu02,gpu03,gpu07``
    -> ``gpu[01-03,07]``, keeping each number's zero padding; names without a trailing number stay as they are."""
    # (prefix, width) -> numbers: width is the zero-padded length (0: not padded); plain names keep their own key
    groups = {}  # type: dict
    order = []
    parsed = []
    for name in dict.fromkeys(str(n) for n in names):
        match = re.match(r"^(.*?)(\d+)$", name)
        parsed.append((name, match.group(1), match.group(2)) if match else (name, None, None))
    padded = {(prefix, len(digits)) for _, prefix, digits in parsed if digits and digits.startswith("0") and len(digits) > 1}
    for name, prefix, digits in parsed:
        key = (name, -1)  # type: tuple
        if digits is not None:
            # gpu10 belongs with gpu01-gpu09 (the same width); node9 and node10 are simply unpadded
            key = (prefix, len(digits)) if (prefix, len(digits)) in padded else (prefix, 0)
        if key not in groups:
            groups[key] = []
            order.append(key)
        if digits is not None:
            groups[key].append(int(digits))
    parts = []
    for prefix, width in order:
        if width < 0:
            parts.append(prefix)
            continue
        numbers = sorted(set(groups[(prefix, width)]))
        ranges = []
        start = previous = numbers[0]
        for number in numbers[1:] + [None]:
            if number is not None and number == previous + 1:
                previous = number
                continue
            ranges.append("%0*d" % (width, start) if start == previous else "%0*d-%0*d" % (width, start, width, previous))
            if number is not None:
                start = previous = number
        parts.append("%s%s" % (prefix, ranges[0]) if len(numbers) == 1 else "%s[%s]" % (prefix, ",".join(ranges)))
    return ",".join(parts)


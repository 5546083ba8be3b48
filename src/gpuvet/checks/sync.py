"""Do the ranks of a distributed smoke run work in step? A verdict from each device's utilization series.

Pure: the series come from ``gpuvet.sources.smoke.sampling.collect``; the rule is ``[sync]`` in thresholds.toml
(what each number means is written there). In data-parallel work every step ends in collectives that wait for
the slowest rank, so healthy devices are busy and idle together. A device lags when it is busy clearly less than
the others (``lower``), or at other times (``out_of_phase``); the shift that best lines its series up with the
others says by how much, and a positive shift (it rises after them) names the straggler when only two compare.
"""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence

from gpuvet.i18n import text

Series = Sequence[Optional[float]]

_FIX_COMMANDS = {
    "nvml": ["nvidia-smi -q -d PERFORMANCE,CLOCK -i {index}", "nvidia-smi topo -m", "gpuvet check"],
    "process_cpu": ["uptime", "ps -eo pid,psr,pcpu,comm --sort=-pcpu | head"],
}


def _rule(rule: Mapping[str, Any], key: str) -> float:
    return float(rule[key])  # [sync] in kb/data/thresholds.toml holds every key


def signal_label(signal: str, lang: str) -> str:
    """The signal as the reports name it ("GPU utilization (NVML)", "each rank's CPU time")."""
    return text(lang, "smoke.sync.signal." + signal) if signal in _FIX_COMMANDS else signal


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    if len(xs) < 3:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    correlation: float = sxy / (sxx * syy) ** 0.5  # float ** float is typed Any (it may be complex); not here: > 0
    return correlation


def _peak(values: Sequence[Series], t: int) -> float:
    """The busiest device's reading at sample t (-1 when none answered)."""
    readings = [float(v[t]) for v in values if v[t] is not None]  # type: ignore[arg-type]
    return max(readings) if readings else -1.0


def _swing(values: Sequence[float]) -> float:
    """How far a series rises and falls: its 90th minus its 10th percentile (one blip does not make a rhythm)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    last = len(ordered) - 1
    return ordered[int(round(0.9 * last))] - ordered[int(round(0.1 * last))]


def _pairs(device: Series, others: Series, active: Sequence[int], shift: int = 0) -> "tuple[List[float], List[float]]":
    """Values of device at t and of the others at t - shift, over active samples where both exist."""
    xs, ys = [], []
    for t in active:
        u = t - shift
        if 0 <= u < len(others) and device[t] is not None and others[u] is not None:
            xs.append(float(device[t]))  # type: ignore[arg-type]
            ys.append(float(others[u]))  # type: ignore[arg-type]
    return xs, ys


def _median_of_others(values: Sequence[Series], index: int) -> List[Optional[float]]:
    out: List[Optional[float]] = []
    for t in range(len(values[index])):
        row = [float(v[t]) for j, v in enumerate(values) if j != index and t < len(v) and v[t] is not None]  # type: ignore[arg-type]
        out.append(statistics.median(row) if row else None)
    return out


def sync_verdict(values: Sequence[Series], interval_s: float, rule: Mapping[str, Any]) -> Dict[str, Any]:
    """``{"verdict": "in_sync|out_of_sync|unknown", "why", "devices": [{"mean", "correlation", "shift_ms",
    "lagging": [reasons]}]}`` for aligned series (one per device, ``None`` where a read failed)."""
    devices: List[Dict[str, Any]] = [{"mean": None, "correlation": None, "shift_ms": None, "lagging": []}
                                     for _ in values]
    if len(values) < 2:
        return {"verdict": "unknown", "why": "one_device", "devices": devices}
    length = min(len(v) for v in values)
    values = [list(v[:length]) for v in values]
    floor = _rule(rule, "active_min_percent")
    active = [t for t in range(length) if _peak(values, t) >= floor]
    if len(active) < _rule(rule, "min_active_samples"):
        return {"verdict": "unknown", "why": "too_few_samples", "active": len(active), "devices": devices}
    for index, series in enumerate(values):
        seen = [float(series[t]) for t in active if series[t] is not None]  # type: ignore[arg-type]
        if len(seen) < len(active) / 2:  # the device did not answer for most of the run
            return {"verdict": "unknown", "why": "unreadable", "device": index, "devices": devices}
        devices[index]["mean"] = round(statistics.fmean(seen), 1)
    means = [d["mean"] for d in devices]
    typical = statistics.median(means)
    swing = _rule(rule, "swing_min_percent")
    max_shift = max(0, int(round(_rule(rule, "max_shift_s") / interval_s))) if interval_s > 0 else 0
    for index, series in enumerate(values):
        entry = devices[index]
        if typical >= floor and entry["mean"] < _rule(rule, "level_ratio") * typical:
            entry["lagging"].append("lower")
        others = _median_of_others(values, index)
        xs, ys = _pairs(series, others, active)
        if len(xs) < 3 or _swing(ys) < swing:
            continue  # the others have no rhythm to follow (every device busy all the time, or noise)
        if _swing(xs) < swing / 2:
            entry["lagging"].append("flat")  # it stays busy (or idle) while the others rise and fall
            continue
        r = _pearson(xs, ys)
        entry["correlation"] = round(r, 3) if r is not None else None
        best_shift, best_r = 0, r if r is not None else -1.0
        # Nearest shifts first: a periodic rhythm lines up again every period, and the nearest match is the lag.
        for shift in sorted(range(-max_shift, max_shift + 1), key=lambda k: (abs(k), -k)):
            candidate = _pearson(*_pairs(series, others, active, shift))
            if candidate is not None and candidate > best_r + 0.05:  # a clearly better alignment, not noise
                best_shift, best_r = shift, candidate
        entry["shift_ms"] = int(round(best_shift * interval_s * 1000))
        if r is not None and r < _rule(rule, "correlation_min"):
            entry["lagging"].append("out_of_phase")
    out_of_phase = [i for i, d in enumerate(devices) if "out_of_phase" in d["lagging"] and d["shift_ms"] is not None]
    if len(values) == 2 and len(out_of_phase) == 2:
        # Two devices out of step with each other: the one that rises later is the straggler, when a shift says so.
        late = [i for i in out_of_phase if (devices[i]["shift_ms"] or 0) > 0]
        if len(late) == 1:
            devices[1 - late[0]]["lagging"].remove("out_of_phase")
    verdict = "out_of_sync" if any(d["lagging"] for d in devices) else "in_sync"
    return {"verdict": verdict, "why": None, "active": len(active), "devices": devices}


def downsample(series: Series, interval_s: float, max_points: int) -> "tuple[List[Optional[float]], float]":
    """Average neighbours (doubling the interval) until at most ``max_points`` remain."""
    points = list(series)
    while max_points > 0 and len(points) > max_points:
        merged: List[Optional[float]] = []
        for i in range(0, len(points), 2):
            pair = [p for p in points[i:i + 2] if p is not None]
            merged.append(round(sum(pair) / len(pair), 1) if pair else None)
        points, interval_s = merged, interval_s * 2
    return points, interval_s


def utilization_section(raw: Optional[Mapping[str, Any]], rule: Mapping[str, Any], source: Optional[str],
                        lang: str = "en") -> "tuple[Optional[Dict[str, Any]], Optional[Dict[str, Any]]]":
    """(the ``utilization`` section of the smoke document, the ``utilization_sync`` result) from the sampler's
    record; (None, None) when nothing was sampled (``--sample off``)."""
    if raw is None:
        return None, None
    signal = raw.get("signal") or "?"
    signal_text = signal_label(signal, lang)
    interval = float(raw.get("interval_s") or 0.2)
    labels = [str(d.get("label") or "#%d" % i) for i, d in enumerate(raw.get("devices") or [])]
    values = list(raw.get("values") or [])
    result: Dict[str, Any] = {"name": "utilization_sync", "status": "skip", "value": None, "unit": None,
                              "reference": None, "fraction_of_reference": None, "signal": signal,
                              "threshold_source": source}
    if raw.get("error"):
        result["detail"] = text(lang, "smoke.sync.error", signal=signal_text, error=raw["error"])
        return {"signal": signal, "verdict": "unknown", "error": raw["error"], "devices": [], "source": source}, result
    judged = sync_verdict(values, interval, rule)
    max_points = int(_rule(rule, "max_points"))
    shown_interval = interval
    devices = []
    for index in range(len(labels)):
        samples, shown_interval = downsample(values[index], interval, max_points)
        memory = raw.get("memory")
        entry = dict(raw["devices"][index])
        entry.update(judged["devices"][index])
        entry["samples"] = samples
        if memory:
            entry["memory"] = downsample(memory[index], interval, max_points)[0]
        devices.append(entry)
    verdict = judged["verdict"]
    lagging = [labels[i] for i, d in enumerate(judged["devices"]) if d["lagging"]]
    section = {"signal": signal, "interval_s": round(shown_interval, 3), "unit": "percent", "verdict": verdict,
               "lagging": lagging, "active_samples": judged.get("active"), "devices": devices, "source": source}
    result["lagging"] = lagging
    if verdict == "unknown":
        result["detail"] = text(lang, "smoke.sync.unknown_" + str(judged["why"]), signal=signal_text,
                                active=judged.get("active", 0), device=labels[judged["device"]] if "device" in judged else "")
        return section, result
    means = ", ".join("%s %s %%" % (label, _pct(d["mean"])) for label, d in zip(labels, judged["devices"]))
    if verdict == "in_sync":
        result.update(status="pass", detail=text(lang, "smoke.sync.in_sync", signal=signal_text, means=means))
        return section, result
    parts = []
    for label, entry in zip(labels, judged["devices"]):
        for reason in entry["lagging"]:
            parts.append(text(lang, "smoke.sync.reason_" + reason, device=label, mean=_pct(entry["mean"]),
                              typical=_pct(statistics.median(d["mean"] for d in judged["devices"])),
                              shift=entry["shift_ms"] or 0, r=entry["correlation"]))
    first = next(i for i, d in enumerate(judged["devices"]) if d["lagging"])
    nvml_index = raw["devices"][first].get("index")
    commands = [c.format(index=nvml_index if nvml_index is not None else first) for c in _FIX_COMMANDS.get(signal, [])]
    result.update(status="warn", detail=text(lang, "smoke.sync.out_of_sync", devices=", ".join(lagging),
                                             reasons="; ".join(parts), means=means),
                  fix={"summary": text(lang, "smoke.sync.fix_" + signal), "commands": commands})
    return section, result


def _pct(value: Any) -> str:
    return "%g" % round(float(value)) if value is not None else "?"

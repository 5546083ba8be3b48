"""``gpuvet net``'s verdicts and fixes (pure): measurements in, a status per target and recommendations out.

The measurements come from ``gpuvet.sources.netprobe``; the slow thresholds from ``kb/data/mirrors.toml``. A fix
only ever names a mirror whose measurement in the same run is ``ok``: a mirror that was not tested, or did not
answer, or answered slowly, is never recommended.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from gpuvet.models import Message, msg

USABLE = ("ok", "slow")
_MIN_SAMPLE_BYTES = 64 * 1024  # below this a body is too small to time: no throughput


@dataclass(frozen=True)
class Verdict:
    target: str
    kind: str
    status: str  # ok | slow | unreachable | timeout | error
    latency_ms: Optional[Dict[str, float]]  # min, median, p95 of the TCP connects
    jitter_ms: Optional[float]
    loss: Optional[float]
    throughput_mbps: Optional[float]
    reason: Optional[Message]  # why it is not ok
    named: bool
    role: str
    family: str
    mirror_of: str
    endpoint_id: str
    http_status: Optional[int]
    ssh_banner: Optional[str]
    extra: Mapping[str, Any]


@dataclass(frozen=True)
class Recommendation:
    summary: Message
    commands: Tuple[str, ...]
    mirror: str  # the target it recommends (always one that answered ok)


@dataclass(frozen=True)
class NetResult:
    verdicts: Tuple[Verdict, ...]
    recommendations: Tuple[Recommendation, ...]
    notes: Tuple[Message, ...]
    seconds: float

    @property
    def named_failures(self) -> Tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.named and v.status not in USABLE)


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


def _round(value: float) -> float:
    return round(value, 1 if value >= 10 else 2)


def judge(measured: Mapping[str, Any], slow_latency_ms: float, slow_mbps: float) -> Verdict:
    """One measurement's verdict."""
    connects = [float(v) for v in measured.get("connect_ms") or ()]
    attempts = int(measured.get("attempts") or 0)
    latency = jitter = None
    if connects:
        latency = {"min": _round(min(connects)), "median": _round(statistics.median(connects)),
                   "p95": _round(_percentile(connects, 0.95))}
        if len(connects) > 1:
            jitter = _round(statistics.mean(abs(a - b) for a, b in zip(connects, connects[1:])))
    loss = round(1.0 - len(connects) / attempts, 3) if attempts else None
    sample_bytes = int(measured.get("sample_bytes") or 0)
    seconds = measured.get("sample_seconds") or 0
    throughput = None
    if sample_bytes >= _MIN_SAMPLE_BYTES and seconds:
        throughput = _round(sample_bytes * 8 / 1e6 / float(seconds))
    outcome = measured.get("outcome")
    raw_reason = measured.get("reason")
    reason = Message(str(raw_reason["id"]), dict(raw_reason.get("params") or {})) if raw_reason else None
    if outcome == "answered":
        status, reason = "ok", None
        if latency is not None and latency["median"] > slow_latency_ms:
            status, reason = "slow", msg("net.reason.slow_latency", median=latency["median"], limit="%g" % slow_latency_ms)
        elif throughput is not None and throughput < slow_mbps:
            status, reason = "slow", msg("net.reason.slow_throughput", mbps=throughput, limit="%g" % slow_mbps)
        elif loss:
            status, reason = "slow", msg("net.reason.loss", lost=attempts - len(connects), sent=attempts)
    else:
        status = outcome if outcome in ("unreachable", "timeout", "error") else "error"
        if reason is None:
            reason = msg("mirror.reason.other", error="no answer")
    return Verdict(
        target=str(measured.get("target")), kind=str(measured.get("kind")), status=status, latency_ms=latency,
        jitter_ms=jitter, loss=loss, throughput_mbps=throughput, reason=reason, named=bool(measured.get("named")),
        role=str(measured.get("role") or ""), family=str(measured.get("family") or ""),
        mirror_of=str(measured.get("mirror_of") or ""), endpoint_id=str(measured.get("endpoint_id") or ""),
        http_status=measured.get("http_status"), ssh_banner=measured.get("ssh_banner"),
        extra=dict(measured.get("extra") or {}))


def _speed_key(verdict: Verdict) -> Tuple[float, float]:
    # Faster first: the higher sampled rate, then the lower median connect time.
    rate = verdict.throughput_mbps if verdict.throughput_mbps is not None else 0.0
    median = verdict.latency_ms["median"] if verdict.latency_ms else float("inf")
    return (-rate, median)


def _detail(verdict: Verdict) -> Message:
    median = verdict.latency_ms["median"] if verdict.latency_ms else "?"
    if verdict.throughput_mbps is not None:
        return msg("net.rec.detail", median=median, mbps=verdict.throughput_mbps)
    return msg("net.rec.detail_latency", median=median)


def _family_of(verdict: Verdict) -> str:
    return verdict.family or ("pypi" if verdict.kind == "pip-index" else "")


def _commands(family: str, mirror: Verdict) -> Tuple[Optional[str], Tuple[str, ...]]:
    url = mirror.target
    if mirror.kind == "pip-index":
        return "net.rec.pip", ("pip config set global.index-url %s" % url,)
    if mirror.kind == "conda-channel":
        channels = list(mirror.extra.get("default_channels") or [url])
        custom = str(mirror.extra.get("custom_channels") or "")
        lines = ["channels:", "  - defaults", "show_channel_urls: true", "default_channels:"]
        lines += ["  - %s" % c for c in channels]
        if custom:
            lines += ["custom_channels:", "  conda-forge: %s" % custom, "  pytorch: %s" % custom]
        return "net.rec.conda", ("cat > ~/.condarc <<'EOF'\n%s\nEOF" % "\n".join(lines), "conda clean -i -y")
    if mirror.kind == "model-hub" and family == "huggingface":
        return "net.rec.hf", ("export HF_ENDPOINT=%s" % url.rstrip("/"),)
    if mirror.kind == "registry":
        daemon = '{"registry-mirrors": ["%s"]}' % url.rstrip("/")
        return "net.rec.registry", ("sudo tee /etc/docker/daemon.json <<'EOF'\n%s\nEOF" % daemon,
                                    "sudo systemctl restart docker")
    return None, ()


def recommend(verdicts: Sequence[Verdict]) -> Tuple[Tuple[Recommendation, ...], Tuple[Message, ...]]:
    """For each family whose endpoint in use is slow or not usable: the fastest mirror of it that answered ok."""
    recommendations: List[Recommendation] = []
    notes: List[Message] = []
    done = set()
    for verdict in verdicts:
        family = _family_of(verdict) if verdict.role != "mirror" else ""
        if verdict.role == "configured" and verdict.mirror_of:
            family = verdict.mirror_of  # a configured mirror (an index-url, a registry mirror) that fails
        if not family or verdict.status == "ok" or family in done:
            continue
        done.add(family)
        candidates = sorted((v for v in verdicts if v.mirror_of == family and v.status == "ok"
                             and v.target.rstrip("/") != verdict.target.rstrip("/")), key=_speed_key)
        if not candidates:
            known = any(v.mirror_of == family for v in verdicts)
            if known:
                notes.append(msg("net.no_mirror_answered", target=verdict.target,
                                 status=msg("net.status." + verdict.status)))
            continue
        best = candidates[0]
        summary_id, commands = _commands(family, best)
        if summary_id is None:
            continue
        recommendations.append(Recommendation(msg(summary_id, url=best.target, detail=_detail(best)), commands,
                                              best.target))
    return tuple(recommendations), tuple(notes)


def evaluate(measurements: Sequence[Mapping[str, Any]], slow_latency_ms: float, slow_mbps: float,
             seconds: float = 0.0, notes: Sequence[Message] = ()) -> NetResult:
    """``notes``: what the inputs could not test (conda channels whose location is unknown), said before the rest."""
    verdicts = tuple(judge(m, slow_latency_ms, slow_mbps) for m in measurements)
    recommendations, own_notes = recommend(verdicts)
    return NetResult(verdicts, recommendations, tuple(notes) + own_notes, round(seconds, 2))

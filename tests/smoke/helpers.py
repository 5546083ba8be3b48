"""Helpers for smoke/health tests: GPU dicts built from real nvidia-smi --query-gpu captures."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Dict, List, Optional

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _num(text: str) -> Optional[float]:
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return None


_REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
            "hw_power_brake_slowdown", "sw_thermal_slowdown", "sync_boost")


def gpu_from_query_csv(name: str) -> Dict[str, Any]:
    """The snapshot GPU dict (docs/SNAPSHOT.md) for the first row of a recorded --query-gpu CSV capture."""
    with open(FIXTURES / "nvidia-smi-query-gpu-csv" / name, newline="") as handle:
        rows = list(csv.reader(handle, skipinitialspace=True))
    row = dict(zip(rows[0], rows[1]))

    def integer(key: str) -> Optional[int]:
        value = _num(row.get(key, ""))
        return int(value) if value is not None else None

    mig = row.get("mig.mode.current", "").lower()
    return {
        "index": integer("index"),
        "name": row["name"],
        "pcie": {"gen_current": integer("pcie.link.gen.current"), "gen_max": integer("pcie.link.gen.max"),
                 "width_current": integer("pcie.link.width.current"), "width_max": integer("pcie.link.width.max")},
        "persistence_mode": {"enabled": True, "disabled": False}.get(row.get("persistence_mode", "").lower()),
        "power_limit_w": _num(row.get("power.limit [W]", "")),
        "power_default_limit_w": _num(row.get("power.default_limit [W]", "")),
        "mig_mode": mig if mig in ("enabled", "disabled") else None,
        "virtualization_mode": None,
        "ecc": {"volatile_uncorrected": integer("ecc.errors.uncorrected.volatile.total"),
                "aggregate_uncorrected": integer("ecc.errors.uncorrected.aggregate.total"),
                "retired_pages": None,
                "remapped_rows_pending": row.get("remapped_rows.pending") == "Yes"},
        "throttle_reasons": [r for r in _REASONS if row.get("clocks_event_reasons." + r) == "Active"],
    }


def snapshot_with(gpus: List[Dict[str, Any]], **extra: Any) -> Dict[str, Any]:
    document: Dict[str, Any] = {"schema_version": 1, "kind": "snapshot", "origin": {"type": "pasted", "inputs": []},
                                "gpus": {"status": "found", "value": gpus, "source": "pasted:nvidia-smi-csv"}}
    for key, value in extra.items():
        document[key] = {"status": "found", "value": value, "source": "test"}
    return document

"""kb_stale: reports warn when the shipped knowledge base is older than its stale_after_days (meta.toml: 90) on the
day the machine was read, and name the update commands. The date is the snapshot's own, so checks read no clock."""

import datetime

import pytest

from gpuvet import kb as kb_module
from gpuvet.checks import run_checks


def _snapshot(days_after_update):
    kb = kb_module.load()
    read_on = datetime.date.fromisoformat(kb.updated) + datetime.timedelta(days=days_after_update)
    return {"schema_version": 1, "kind": "snapshot", "created": read_on.isoformat() + "T08:00:00Z"}


@pytest.fixture(autouse=True)
def _shipped_limit(monkeypatch):
    monkeypatch.delenv("GPUVET_KB_STALE_DAYS", raising=False)  # the suite's conftest lifts it; this file tests it


def _stale(report):
    return [f for f in report.machine if f.code == "kb_stale"]


@pytest.mark.parametrize("days", [0, 30, 90])
def test_fresh_enough_data_says_nothing(days):
    assert kb_module.load().stale_after_days == 90
    assert _stale(run_checks(_snapshot(days), ["torch==2.3.0"])) == []


def test_data_older_than_90_days_warns_with_the_update_commands():
    report = run_checks(_snapshot(91), ["torch==2.3.0"])
    (finding,) = _stale(report)
    assert finding.severity.value == "warn"
    assert finding.fix is not None and "gpuvet kb update" in finding.fix.commands
    assert report.verdict.value != "pass"  # a warning the user sees in the verdict


def test_the_limit_can_be_set(monkeypatch):
    monkeypatch.setenv("GPUVET_KB_STALE_DAYS", "400")
    assert _stale(run_checks(_snapshot(399), ["torch==2.3.0"])) == []
    assert len(_stale(run_checks(_snapshot(401), ["torch==2.3.0"]))) == 1


def test_a_snapshot_without_a_date_is_not_judged():
    snapshot = _snapshot(400)
    snapshot.pop("created")
    assert _stale(run_checks(snapshot, ["torch==2.3.0"])) == []


@pytest.mark.parametrize("earlier, later", [
    ("2026-11-29", "2026-12-04"), ("2024-02-28", "2024-03-01"), ("2023-02-28", "2023-03-01"),  # leap year or not
    ("2025-03-29", "2025-03-31"), ("2025-10-25", "2025-10-27"),  # across European and US daylight-saving changes
    ("2020-01-01", "2030-12-31"), ("2026-12-04", "2026-11-29"), ("1999-12-31", "2000-01-01"),
])
def test_days_between_counts_as_the_calendar_does(earlier, later):
    from gpuvet.checks.machine import days_between

    expected = (datetime.date.fromisoformat(later) - datetime.date.fromisoformat(earlier)).days
    assert days_between(earlier, later) == expected


@pytest.mark.parametrize("text", ["2026-02-30", "2026-13-01", "2026-00-10", "26-1-1", "2026-1-01", "today", "",
                                  "2026-12-04T08", "２０２６-12-04"])
def test_days_between_refuses_what_is_not_a_date(text):
    from gpuvet.checks.machine import days_between

    assert days_between(text, "2026-12-04") is None
    assert days_between("2026-12-04", text) is None

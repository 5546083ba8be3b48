"""Every fix gpuvet prints works as printed, on every captured machine, for every framework and every installer.

For each real capture in tests/fixtures (nvidia-smi, vLLM's and PyTorch's collect_env) × each framework of the
knowledge base × pip, uv, conda and pixi:

- each install a fix prints, applied to the same snapshot as pip leaves the environment (gpuvet.checks.fixplan:
  the builds it names, the pins they bring, their cuDNN/NCCL wheels), passes ``check`` again: nothing fails;
- no fix reinstalls the very build that failed for want of code, driver or platform;
- no fix names a placeholder (``<version>``, ``<extension>``, ``{found_driver}``) or a raw object (``Message(id=``);
- no fix advises a driver the GPU's architecture never gets (Kepler ends at R470: nvidia-installer's legacy list);
- each installer prints one command per pip command, never the same command twice.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

import pytest

from gpuvet.checks import CANNOT_RUN, check_target, fixplan, parse_target, run_checks
from gpuvet.checks.installer import with_installer
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.kb import load
from gpuvet.snapshot import SnapshotView

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KB = load()
FRAMEWORKS = [f.name for f in KB.frameworks()]
INSTALLERS = ("pip", "uv", "conda", "pixi")
PLACEHOLDER = re.compile(r"<[a-z_\u4e00-\u9fff]+>|\{[a-z_]+\}|Message\(|Fix\(")


def _snapshot(path: Path) -> Dict:
    text = path.read_text(encoding="utf-8", errors="replace")
    return parse(detect_kind(text), text, path.name)


def _machines() -> Dict[str, Dict]:
    """One capture per (GPU models, driver branch) of nvidia-smi, and every collect_env capture (they carry the
    installed builds whose fixes matter most)."""
    chosen: Dict[str, Dict] = {}
    seen = set()
    for path in sorted((FIXTURES / "nvidia-smi").glob("*.txt")):
        snapshot = _snapshot(path)
        snapshot["python"] = {"status": "found", "source": "test", "value": {"version": "3.11.9"}}
        gpus = tuple(sorted({g.get("name") for g in (snapshot.get("gpus", {}).get("value") or [])}))
        driver = (snapshot.get("driver", {}).get("version", {}) or {}).get("value") or ""
        if (gpus, driver.split(".")[0]) not in seen:
            seen.add((gpus, driver.split(".")[0]))
            chosen[path.name] = snapshot
    for folder in ("vllm-collect-env", "torch-collect-env"):
        for path in sorted((FIXTURES / folder).glob("*.txt")):
            chosen[f"{folder}/{path.name}"] = _snapshot(path)
    return chosen


MACHINES = _machines()


def _targets(snapshot: Dict) -> List[str]:
    from gpuvet.checks import installed_targets

    return list(dict.fromkeys(installed_targets(SnapshotView(snapshot), KB) + FRAMEWORKS))


def _verdict(snapshot, target: str) -> str:
    return check_target(SnapshotView(snapshot), parse_target(target), KB, verify=False).verdict.value


def _problems(name: str, snapshot: Dict) -> List[str]:
    problems: List[str] = []
    report = run_checks(snapshot, _targets(snapshot), kb=KB)
    for result in report.targets:
        failing = {f.code for f in result.findings if f.severity.value == "fail"}
        for finding in result.findings:
            if finding.fix is None:
                continue
            for lang in ("en", "zh"):
                text = render(finding.fix.summary, lang)
                if PLACEHOLDER.search(text):
                    problems.append(f"{name}: {result.target}: {finding.code} fix says {text!r}")
            for option in fixplan.options(finding.fix.commands):
                plan = fixplan.plan_of(option, KB)
                if any(PLACEHOLDER.search(command) for command in option):
                    problems.append(f"{name}: {result.target}: placeholder in {option}")
                if plan is None:
                    continue
                after = fixplan.applied(snapshot, plan, KB)
                for build in plan.installs:
                    if KB.framework(build.name) is None:
                        continue
                    target = fixplan.target_text(build, KB)
                    verdict = _verdict(after, target)
                    if verdict == "fail":
                        problems.append(f"{name}: {result.target}: {finding.code} offers {option}; then {target} fails")
                    if failing & CANNOT_RUN and result.resolved == f"{build.name}=={build.version} ({build.variant})" \
                            and (build.variant == "cpu") == ("cpu_only_build" in failing):
                        problems.append(f"{name}: {result.target}: the fix reinstalls the failing {result.resolved}")
            if finding.code == "driver_too_old" and finding.fix.summary.id != "checks.driver_too_old.fix_past_last":
                from gpuvet.checks.chain import _last_branch_below

                minimum = str(finding.expected or "").replace("driver >= ", "")
                if _last_branch_below(SnapshotView(snapshot), KB, minimum) is not None:
                    problems.append(f"{name}: {result.target}: advises driver {minimum}, past the GPU's last branch")
    for installer in INSTALLERS[1:]:
        written = with_installer(report, installer, KB)
        for before, after_ in zip(report.targets, written.targets):
            for plain, translated in zip(before.findings, after_.findings):
                if plain.fix is None:
                    continue
                commands = translated.fix.commands
                if len(commands) != len(plain.fix.commands) or len(set(commands)) != len(commands):
                    problems.append(f"{name}: {installer}: {plain.fix.commands} became {commands}")
    return problems


def test_the_captures_are_there():
    assert len(MACHINES) >= 50 and len(FRAMEWORKS) >= 10


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_printed_fix_holds_once_applied(name):
    assert _problems(name, MACHINES[name]) == []


def test_the_rtx_5090_vllm_0_9_0_fix_is_a_vllm_that_runs_there_never_0_9_0_or_a_torch_its_pin_rejects():
    snapshot = MACHINES["vllm-collect-env/rtx5090_vllm0.9.0_torch2.8dev-cu128_drv570.144_unfenced.txt"]
    (result,) = run_checks(snapshot, ["vllm==0.9.0"], kb=KB).targets
    assert result.verdict.value == "fail"
    commands = [c for f in result.findings if f.fix for c in f.fix.commands]
    assert commands and not any("vllm==0.9.0" in c for c in commands), commands
    assert not any(re.search(r"torch==2\.(?!7\.0)", c) for c in commands), commands  # 0.9.0 pins torch==2.7.0
    summaries = [render(f.fix.summary, "en") for f in result.findings if f.fix]
    assert not any("torch==2.11" in s for s in summaries), summaries


def test_xformers_on_the_provider_machine_installs_a_torch_the_driver_runs_first():
    from gpuvet.snapshot import merge_all

    examples = Path(__file__).resolve().parents[2] / "examples"
    snapshot = merge_all([_snapshot(examples / "provider-nvidia-smi.txt"), _snapshot(examples / "provider-pip-freeze.txt")])
    (result,) = run_checks(snapshot, ["xformers"], kb=KB).targets
    (pin,) = [f for f in result.findings if f.code == "package_conflict"]
    (command,) = pin.fix.commands
    first, second = command.split(" && ")
    assert first.startswith("pip install torch==") and "--index-url https://download.pytorch.org/whl/cu12" in first
    assert second.startswith("pip install xformers==")
    # left to pip, xformers' torch>=2.10 takes the newest torch, whose CUDA 13 this 565 driver cannot run
    plain = fixplan.applied(snapshot, fixplan.plan_of((second,), KB), KB)
    assert _verdict(plain, "torch==" + next(p["version"] for p in plain["packages"]["value"] if p["name"] == "torch")) == "fail"
    (uv,) = with_installer(run_checks(snapshot, ["xformers"], kb=KB), "uv", KB).targets
    (uv_pin,) = [f for f in uv.findings if f.code == "package_conflict"]
    assert uv_pin.fix.commands[0].count("uv pip install") == 2 and " pip install" not in uv_pin.fix.commands[0].replace("uv pip", "")


def test_a_kepler_gpu_is_never_told_to_move_past_r470():
    snapshot = MACHINES["tesla-k80-4gpu_drv375.66.txt"]
    (result,) = run_checks(snapshot, ["torch"], kb=KB).targets
    (driver,) = [f for f in result.findings if f.code == "driver_too_old"]
    text = render(driver.fix.summary, "en")
    assert "R470" in text and "R595" not in text and not driver.fix.commands

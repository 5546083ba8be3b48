"""The PyTorch chain, judged against the shipped knowledge base: one case per rule, with its boundaries.

Expected values come from the sources the KB cites (CUDA release notes' minor-version compatibility floors, the
arch lists read from the PyPI wheels), not from running the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from snapshots import gpu, snapshot

from gpuvet.checks import run_checks
from gpuvet.i18n import render
from gpuvet.kb import load

H100 = gpu("NVIDIA H100 80GB HBM3", "9.0")
RTX5090 = gpu("NVIDIA GeForce RTX 5090", "12.0", memory_mib=32607)
V100 = gpu("Tesla V100-SXM2-16GB", "7.0", memory_mib=16384)
T4 = gpu("Tesla T4", "7.5", memory_mib=15360)


def one(snap, target):
    report = run_checks(snap, [target])
    assert len(report.targets) == 1
    return report.targets[0]


def codes(result, severity=None):
    return [f.code for f in result.findings if severity is None or f.severity.value == severity]


def link(result, layer):
    return next(l for l in result.chain if l.layer == layer)


def test_cu121_build_passes_on_a_535_driver():
    result = one(snapshot(driver="535.104.05", cuda_max="12.2", gpus=[H100], python="3.10.12"), "torch==2.1.2+cu121")
    assert result.verdict.value == "pass", [f.title for f in result.findings]
    assert link(result, "driver").verdict.value == "pass"
    assert result.resolved == "torch==2.1.2 (cu121)"


def test_the_chain_is_reported_in_order():
    result = one(snapshot(driver="535.104.05", gpus=[H100], python="3.10.12"), "torch==2.1.2+cu121")
    assert [l.layer for l in result.chain] == ["driver", "cuda", "cudnn", "nccl", "framework", "python"]


@pytest.mark.parametrize(
    "driver, verdict",
    [
        ("525.60.13", "pass"),  # exactly the CUDA 12.x minor-version compatibility floor
        ("525.60.12", "fail"),  # one below it
        ("520.61.05", "fail"),  # the CUDA 11.8 driver
        ("550.54.14", "pass"),  # the CUDA 12.4 driver: full feature set
    ],
)
def test_cu124_build_against_the_12x_floor(driver, verdict):
    # A naive ">= toolkit driver" rule would demand 550.54.14 for cu124 and wrongly fail 525.x.
    result = one(snapshot(driver=driver, gpus=[H100], python="3.11.7"), "torch==2.4.1+cu124")
    assert link(result, "driver").verdict.value == verdict


def test_minor_version_compatibility_is_said_as_info():
    result = one(snapshot(driver="525.60.13", gpus=[H100], python="3.11.7"), "torch==2.4.1+cu124")
    info = [f for f in result.findings if f.severity.value == "info" and f.layer == "driver"]
    assert info and render(info[0].expected, "en").startswith(">= 550.54")


def test_driver_too_old_names_the_floor_and_a_build_that_fits():
    result = one(snapshot(driver="470.182.03", cuda_max="11.4", gpus=[T4], python="3.10.12"), "torch==2.1.2+cu121")
    assert result.verdict.value == "fail"
    finding = next(f for f in result.findings if f.code == "driver_too_old" and f.severity.value == "fail")
    assert finding.expected == "driver >= 525.60.13"
    assert finding.actual == "470.182.03"
    assert finding.sources, "a finding cites where its rule comes from"
    # torch 2.1.2 also ships cu118, which runs on any driver >= 450.80.02: the fix says so with the exact index.
    assert any("download.pytorch.org/whl/cu118" in c for c in finding.fix.commands), finding.fix.commands


def test_cuda_13_build_fails_on_a_12x_driver():
    result = one(snapshot(driver="570.124.06", cuda_max="12.8", gpus=[H100], python="3.11.7"), "torch==2.11.0+cu130")
    assert "driver_too_old" in codes(result, "fail")


def test_rtx_5090_has_no_kernels_in_a_cu124_build_and_a_cu128_build_is_offered():
    result = one(snapshot(driver="575.57.08", gpus=[RTX5090], python="3.11.7"), "torch==2.6.0+cu124")
    # The build's own arch list decides (no sm_120 SASS, no PTX); that CUDA 12.4 cannot target sm_120 only
    # explains why the list is what it is (gpuvet.kb.compat rule 3).
    assert codes(result, "fail") == ["arch_not_in_build"]
    finding = result.findings[0]
    assert "sm_90" in finding.actual and "sm_120" not in finding.actual
    assert "CUDA 12.4 itself compiles SASS only for" in render(finding.detail, "en")
    # A build that carries sm_120 (cu128, 2.7+) fits this 575 driver and is offered with its index.
    assert any("whl/cu128" in c for c in finding.fix.commands), finding.fix.commands


def test_pascal_has_no_kernels_in_the_2_8_default_build():
    # torch 2.8.0's PyPI default (cu128) dropped sm_50/sm_60; CUDA 12.8 itself still targets sm_60.
    p100 = gpu("Tesla P100-PCIE-16GB", "6.0", memory_mib=16280)
    result = one(snapshot(driver="570.124.06", gpus=[p100], python="3.11.7"), "torch==2.8.0")
    assert codes(result, "fail") == ["arch_not_in_build"]
    finding = result.findings[0]
    assert render(finding.expected, "en") == "SASS sm_60, or PTX <= compute_60"
    assert "sm_60" not in finding.actual and "sm_70" in finding.actual
    # The cu126 variant of the same release still carries sm_60.
    assert any("2.8.0" in c and "whl/cu126" in c for c in finding.fix.commands), finding.fix.commands


def test_sass_of_an_older_minor_runs_on_ada():
    # RTX 4090 is sm_89; the wheels carry sm_86, which runs on 8.9 (same major, higher minor).
    result = one(snapshot(driver="535.104.05", gpus=[gpu("NVIDIA GeForce RTX 4090", "8.9")], python="3.10.12"), "torch==2.1.2+cu121")
    assert "arch_not_in_build" not in codes(result)


def test_volta_is_outside_cuda_13():
    result = one(snapshot(driver="580.65.06", gpus=[V100], python="3.11.7"), "torch==2.11.0+cu130")
    assert set(codes(result, "fail")) & {"gpu_unsupported_by_cuda", "arch_not_in_build"}


def test_python_outside_the_release_range():
    result = one(snapshot(driver="535.104.05", gpus=[H100], python="3.12.1"), "torch==2.1.2+cu121")
    assert "python_unsupported" in codes(result, "fail")
    assert link(result, "python").verdict.value == "fail"


def test_installed_cpu_build_on_a_gpu_machine_fails():
    snap = snapshot(
        driver="535.104.05",
        gpus=[H100],
        python="3.11.7",
        frameworks={"torch": {"version": "2.13.0+cpu", "cuda": None}},
        packages={"torch": "2.13.0+cpu"},
    )
    result = one(snap, "torch==2.13.0")
    assert "cpu_only_build" in codes(result, "fail")


def test_no_target_checks_what_is_installed():
    snap = snapshot(
        driver="535.104.05",
        gpus=[H100],
        python="3.10.12",
        frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}},
        packages={"torch": "2.1.2+cu121"},
    )
    report = run_checks(snap, [])
    assert [t.target for t in report.targets] == ["torch==2.1.2+cu121"]
    assert report.targets[0].resolved == "torch==2.1.2 (cu121)"


@pytest.mark.parametrize("target", ["torch==2.99.0", "torch==9.0.0+cu121"])
def test_a_version_newer_than_the_kb_is_unknown(target):
    result = one(snapshot(driver="535.104.05", gpus=[H100]), target)
    assert result.verdict.value == "unknown"
    assert codes(result) == ["unknown_version"]
    assert "newer" in result.findings[0].title.id


def test_a_nightly_is_unknown_not_guessed():
    snap = snapshot(driver="550.54.14", gpus=[H100], frameworks={"torch": {"version": "2.6.0.dev20241010+cu124", "cuda": "12.4"}})
    result = one(snap, "torch==2.6.0.dev20241010+cu124")
    assert result.verdict.value == "unknown"


def test_pasted_input_without_driver_is_unknown_not_failed():
    snap = snapshot(probed=False, packages={"torch": "2.1.2+cu121"}, frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}})
    result = one(snap, "torch==2.1.2+cu121")
    assert link(result, "driver").verdict.value == "unknown"
    assert "driver_too_old" not in codes(result) and "no_driver" not in codes(result)


def test_driver_max_cuda_alone_decides_by_major():
    snap = snapshot(probed=False, cuda_max="12.0", gpus=[H100])
    assert link(one(snap, "torch==2.4.1+cu124"), "driver").verdict.value == "pass"
    assert link(one(snap, "torch==2.11.0+cu130"), "driver").verdict.value == "fail"


def test_local_nvcc_of_another_major_warns_for_extensions():
    result = one(snapshot(driver="535.104.05", gpus=[H100], nvcc="13.0.88", python="3.10.12"), "torch==2.1.2+cu121")
    assert "toolkit_mismatch" in codes(result, "warn")


def test_cudnn_of_another_major_fails():
    snap = snapshot(
        driver="535.104.05",
        gpus=[H100],
        python="3.10.12",
        frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}},
        packages={"torch": "2.1.2+cu121", "nvidia-cudnn-cu12": "9.1.0.70"},
    )
    assert "cudnn_mismatch" in codes(one(snap, "torch==2.1.2"), "fail")


def test_no_driver_with_a_toolkit_is_said_plainly():
    report = run_checks(snapshot(nvcc="13.0.88"), [])
    assert [f.code for f in report.machine][:1] == ["no_driver"]
    assert report.machine[0].title.id == "checks.toolkit_without_driver.title"


def test_driver_library_mismatch():
    snap = snapshot()
    snap["driver"]["error"] = {"status": "found", "value": "Failed to initialize NVML: Driver/library version mismatch", "source": "nvidia-smi"}
    assert "nvml_driver_mismatch" in [f.code for f in run_checks(snap, []).machine]


def test_bare_name_picks_the_newest_build_that_fits_and_says_plain_pip_would_not():
    result = one(snapshot(driver="535.104.05", cuda_max="12.2", gpus=[H100], python="3.11.7"), "torch")
    assert result.verdict.value in ("pass", "warn")
    # The newest torch defaults to CUDA 13, which needs a 580 driver: the chosen build is a 12.x one.
    assert "cu12" in result.resolved
    assert any(f.title.id == "checks.plain_install_differs.title" for f in result.findings)


def test_every_kb_torch_release_is_judged_without_error():
    kb = load()
    snap = snapshot(driver="590.48.01", gpus=[H100], python="3.11.7")
    for release in kb.framework("torch").releases:
        for variant in release.variants:
            result = one(snap, f"torch=={release.version}+{variant}")
            assert result.verdict.value in ("pass", "warn", "fail", "unknown")


def test_torchvision_made_for_another_torch_is_a_conflict():
    # torch.toml pairs torchvision 0.16.2 with torch 2.1.2 and 0.18.1 with torch 2.3.1 (their Requires-Dist pins).
    snap = snapshot(
        driver="535.104.05",
        gpus=[H100],
        python="3.10.12",
        frameworks={"torch": {"version": "2.1.2+cu121", "cuda": "12.1"}},
        packages={"torch": "2.1.2+cu121", "torchvision": "0.18.1+cu121"},
    )
    result = one(snap, "torch==2.1.2")
    finding = next(f for f in result.findings if f.code == "package_conflict" and f.layer == "packages")
    assert finding.severity.value == "fail"
    assert finding.expected == "torchvision==0.16.2"
    assert finding.fix.commands == ("pip install torch==2.1.2 torchvision==0.16.2",)
    # The matching pair is fine.
    snap["packages"]["value"] = [{"name": "torch", "version": "2.1.2+cu121"}, {"name": "torchvision", "version": "0.16.2+cu121"}]
    assert not [f for f in one(snap, "torch==2.1.2").findings if f.layer == "packages"]


def test_a_post_release_is_judged_as_its_base_release():
    # A post release the knowledge base lacks is its base release rebuilt; one it has (vLLM 0.6.3.post1, read from
    # its own wheel) is judged as itself. Paddle's own index names CUDA builds 2.6.1.post117 (CUDA 11.7).
    machine = snapshot(driver="535.104.05", gpus=[H100], python="3.10.12")
    assert one(machine, "vllm==0.6.3.post1").resolved == "vllm==0.6.3.post1 (cu121)"
    paddle = one(machine, "paddlepaddle-gpu==2.6.1.post117")
    assert paddle.resolved == "paddlepaddle==2.6.1 (cu117)"
    assert one(machine, "vllm==0.6.3.post9").resolved == "vllm==0.6.3 (cu121)"
    assert one(machine, "vllm==0.99.0.post1").resolved is None  # an unknown base stays unknown


def test_the_same_health_fact_on_eight_gpus_is_said_once():
    from gpuvet.checks.machine import machine_findings
    from gpuvet.ingest import detect_kind, parse
    from gpuvet.kb import load
    from gpuvet.snapshot import SnapshotView

    path = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi-q" / "h100-80gb-hbm3-mig-4inst_drv590.48.01_idle.txt"
    text = path.read_text(encoding="utf-8")
    one_gpu = parse(detect_kind(text), text, path.name)
    gpus = one_gpu["gpus"]["value"]
    one_gpu["gpus"]["value"] = [dict(gpus[0], index=i) for i in range(8)]
    findings = [f for f in machine_findings(SnapshotView(one_gpu), load()) if f.code == "virtualization_limit"]
    assert len(findings) == 1
    assert render(findings[0].title, "en").startswith("GPUs 0-7 (NVIDIA H100 80GB HBM3)")
    # which GPUs, for code that acts on the merged finding, without reading "0-7" back out of its title
    assert findings[0].facts["gpu_indexes"] == list(range(8)) and "gpu_index" not in findings[0].facts
    assert findings[0].facts["gpu_name"] == "NVIDIA H100 80GB HBM3"


def test_a_known_conflict_is_the_targets_when_it_names_one_of_the_frameworks_distributions():
    # conflicts.toml: jax-cuda12-plugin >= 0.6.0 (JAX's CUDA plugin, one of jax.toml's distributions) with torch
    # 2.4-2.7. It is the jax target's conflict as much as torch's, read from the pair's package names, not from a
    # substring of the sentence's "jax-cuda12-plugin 0.6.0, torch 2.5.1".
    snap = snapshot(driver="570.124.06", gpus=[H100], python="3.11.7",
                    packages={"jax-cuda12-plugin": "0.6.0", "torch": "2.5.1"})
    for target in ("jax[cuda12]==0.6.2", "torch==2.6.0"):
        conflicts = [f for f in one(snap, target).findings if f.facts.get("packages")]
        assert [f.facts["packages"] for f in conflicts] == [["jax-cuda12-plugin", "torch"]], target
    # TensorFlow has its own pair with this torch (cuDNN majors), not the JAX plugin's
    pairs = [f.facts.get("packages") for f in one(snap, "tensorflow==2.17.0").findings]
    assert ["torch", "tensorflow"] in pairs and ["jax-cuda12-plugin", "torch"] not in pairs


def test_dropping_an_alternative_build_keeps_the_others_by_their_labels():
    from gpuvet.checks import _kept_parts, _offering
    from gpuvet.findings import make
    from gpuvet.models import Facts, Fix, msg

    own = msg("checks.cpu_only_build.fix", build="torch==2.1.2+cpu")
    own_commands = ("pip install torch==2.1.2+cu121",)
    # A label with " / " in it: the fix's sentence joins the labels with " / ", so only the facts tell them apart.
    labels = ["torch==2.4.1 (cu121 / sm_90)", "torch==2.3.1 (cu118)"]
    installs = ("pip install torch==2.4.1", "pip install torch==2.3.1")
    finding = make("checks.cpu_only_build", build="torch==2.1.2+cpu")._replace(
        fix=Fix(_offering(own, labels), own_commands + installs),  # type: ignore[arg-type]
        facts=Facts({"alternatives": labels, "own_fix": own}))
    assert finding.fix.summary == msg("checks.fix_or.fix", first=own,
                                      second=msg("checks.alternative.fix", builds=" / ".join(labels)))

    first, left = _kept_parts(finding, own_commands + installs[1:])
    assert (first, left) == (own, ["torch==2.3.1 (cu118)"])
    assert _offering(first, left) == msg("checks.fix_or.fix", first=own,
                                         second=msg("checks.alternative.fix", builds="torch==2.3.1 (cu118)"))
    first, left = _kept_parts(finding, installs[:1])  # the own fix dropped: its sentence goes with it
    assert (first, left) == (None, ["torch==2.4.1 (cu121 / sm_90)"])
    assert _offering(first, left) == msg("checks.alternative.fix", builds="torch==2.4.1 (cu121 / sm_90)")
    assert _offering(*_kept_parts(finding, ())) is None

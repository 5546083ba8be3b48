"""An image's NVIDIA_REQUIRE_CUDA against the host, judged as the NVIDIA container runtime judges it before starting
the container (NVIDIA Container Toolkit, "Specialized Configurations with Docker": space-separated constraints are
ORed, comma-separated constraints are ANDed; `cuda` is the driver's CUDA version, `brand` the GPUs' brand)."""

from pathlib import Path

import pytest

from gpuvet.checks import run_checks
from gpuvet.i18n import render
from gpuvet.ingest import detect_kind, parse
from gpuvet.kb.compat import FAILS, RUNS, UNKNOWN, container_requirement
from gpuvet.snapshot import merge_all

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# the real NVIDIA_REQUIRE_CUDA of nvidia/cuda:12.8 images, and of the CUDA 10.0 image in the docker-inspect fixtures
CUDA_12_8 = "cuda>=12.8 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=535,driver<536"


@pytest.mark.parametrize("driver, cuda, brands, expected, why", [
    ("570.124.06", "12.8", [], RUNS, "cuda>=12.8 holds: the first alternative"),
    ("565.57.01", "12.7", [], FAILS, "CUDA 12.7 < 12.8 and the driver is in neither listed branch"),
    ("535.104.05", "12.2", ["Tesla"], RUNS, "a Tesla on R535: the branch alternative (forward compatibility)"),
    ("535.104.05", "12.2", ["GeForce"], FAILS, "the same branch on a GeForce: brand=tesla fails"),
    ("535.104.05", "12.2", [], UNKNOWN, "R535 without the brand: the branch alternative cannot be decided"),
])
def test_alternatives_are_ored_and_constraints_anded(driver, cuda, brands, expected, why):
    assert container_requirement(CUDA_12_8, driver, cuda, brands).status == expected, why


def _check(*fixtures):
    texts = [(FIXTURES / name).read_text() for name in fixtures]
    return run_checks(merge_all([parse(detect_kind(text), text) for text in texts]), ["torch==2.3.0"])


def _requirement(report):
    return [f for f in report.machine if f.title.id.startswith("checks.image_requirement")]


def test_an_image_the_host_driver_cannot_start_is_a_failure_that_says_what_to_choose():
    report = _check("docker-inspect/nvidia-cuda-10.0_container-inspect_partial.txt",
                    "nvidia-container-cli-info/geforce-920m_drv384.130_cuda9.0_debug-lines.txt")
    (finding,) = _requirement(report)
    assert finding.code == "driver_too_old" and finding.severity.value == "fail"
    assert "cuda>=10.0" in render(finding.detail, "en") and "brand=tesla" in render(finding.detail, "en")
    assert "change the image, not the driver" in render(finding.fix.summary, "en")
    assert report.verdict.value == "fail"


def test_an_image_the_host_driver_serves_says_nothing():
    report = _check("docker-inspect/nvidia-cuda-10.0_container-inspect_partial.txt",
                    "nvidia-container-cli-info/rtx2080ti_drv418.56_cuda10.1_debug-lines.txt")
    assert _requirement(report) == []

"""binary_findings: compiled archs (as the scan puts them in a snapshot) against every GPU of the snapshot."""


import pytest

from gpuvet.checks.binaries import binary_findings
from gpuvet.i18n import render
from gpuvet.models import Severity
from gpuvet.probe.binaries import archs_of
from gpuvet.probe.facts import found
from gpuvet.snapshot import SnapshotView
from tests.snapshots import gpu, snapshot


def _view(gpus, binaries, **kwargs):
    return SnapshotView(snapshot(driver="580.65.06", cuda_max="13.0", gpus=gpus, binaries=found(binaries, "elf"), **kwargs))


def _binary(package, path, sass, ptx=(), error=None):
    return {"package": package, "path": path, "sass": list(sass), "ptx": list(ptx), "error": error}


def _kb():
    from gpuvet.kb import load

    return load()


def test_blackwell_gpu_against_an_extension_built_up_to_hopper():
    view = _view(
        [gpu("NVIDIA B200", "10.0", index=i) for i in range(2)] + [gpu("NVIDIA H100 80GB HBM3", "9.0", index=2)],
        [_binary("flash-attn", "/sp/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", ["sm_80", "sm_90"])],
        packages={"flash-attn": "2.6.3"},
    )
    findings = binary_findings(view, None)
    assert len(findings) == 1  # both B200s in one finding; the H100 runs sm_90
    finding = findings[0]
    assert (finding.code, finding.severity, finding.layer) == ("arch_not_in_build", Severity.FAIL, "packages")
    title = render(finding.title, "en")
    assert "flash-attn" in title and "flash_attn_2_cuda" in title and "NVIDIA B200 (GPU 0, 1)" in title and "10.0" in title
    assert (finding.facts["gpu_indexes"], finding.facts["gpu_name"]) == ([0, 1], "NVIDIA B200")  # not read off the label
    assert "no kernel image is available" in render(finding.detail, "en")
    fix = render(finding.fix.summary, "en")
    assert 'TORCH_CUDA_ARCH_LIST="10.0"' in fix and "sm_100" in fix
    assert finding.fix.commands == ('TORCH_CUDA_ARCH_LIST="10.0" pip install --no-build-isolation --no-binary flash-attn flash-attn',)
    assert render(finding.title, "zh") != title and "flash-attn" in render(finding.title, "zh")


def test_ptx_and_minor_rules_pass():
    view = _view(
        [gpu("NVIDIA GeForce RTX 4090", "8.9"), gpu("NVIDIA H100", "9.0", index=1), gpu("NVIDIA RTX PRO 6000", "12.0", index=2)],
        [_binary("cupy", "/sp/cupy/libkernels.so", ["sm_86"], ["compute_90"])],
    )
    assert binary_findings(view, None) == []


def test_unknown_capability_and_unreadable_files_are_not_judged():
    view = _view(
        [gpu("Mystery GPU", None), gpu("NVIDIA A100", "8.0", index=1)],
        [_binary("x", "/sp/x.so", [], [], error="unreadable: truncated"), _binary("y", "/sp/y.so", ["sm_80"])],
    )
    assert binary_findings(view, None) == []


def test_torch_without_kb_suggests_a_source_build():
    view = _view([gpu("Tesla V100-SXM2-16GB", "7.0")], [_binary("torch", "/sp/torch/lib/libtorch_cuda.so", ["sm_75", "sm_80"])],
                 frameworks={"torch": {"version": "2.13.0+cu130", "cuda": "13.0"}})
    (finding,) = binary_findings(view, None)
    assert finding.layer == "framework"
    assert finding.fix.commands == ('export TORCH_CUDA_ARCH_LIST="7.0"',)


def test_torch_fix_names_a_wheel_that_carries_the_arch():
    kb = _kb()
    view = _view([gpu("Tesla P100-PCIE-16GB", "6.0")], [_binary("torch", "/sp/torch/lib/libtorch_cuda.so", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"])],
                 frameworks={"torch": {"version": "2.13.0+cu130", "cuda": "13.0"}})
    findings = [f for f in binary_findings(view, kb) if f.severity == Severity.FAIL]
    (finding,) = findings
    assert "pip install torch==" in finding.fix.commands[0]
    assert "6.0" in render(finding.fix.summary, "en")


def test_kb_disagreement_is_info_and_the_binary_wins():
    kb = _kb()
    variant = kb.framework("torch").release("2.13.0").variant("cu130")
    (library,) = [lib for lib in variant.extra["libraries"] if lib.file.endswith("/libtorch_cuda.so")]
    real = list(library.sass) + list(library.ptx)  # every arch its units carry, as read from PyPI's wheel
    assert "sm_90" in real and "sm_120" in real and "sm_120a" in real and "sm_121a" in real
    frameworks = {"torch": {"version": "2.13.0+cu130", "cuda": "13.0"}}
    agree = _view([gpu("NVIDIA H100", "9.0")], [_binary("torch", "/sp/torch/lib/libtorch_cuda.so", real)], frameworks=frameworks)
    assert binary_findings(agree, kb) == []
    changed = [a for a in real if a not in ("sm_120a", "sm_121a")] + ["compute_121"]
    differs = _view([gpu("NVIDIA H100", "9.0")], [_binary("torch", "/sp/torch/lib/libtorch_cuda.so", changed)],
                    frameworks=frameworks)
    (finding,) = binary_findings(differs, kb)
    # an info note has its own code: never a failure code at info severity
    assert finding.severity == Severity.INFO and finding.code == "kb_binary_disagreement"
    detail = render(finding.detail, "en")
    assert "compute_121" in detail and "sm_120a sm_121a" in detail


def test_an_installed_copy_of_the_read_wheel_is_no_disagreement():
    # torch 1.0.0's PyPI wheel as the knowledge base read it, library by library (kb/data/harvested/torch.toml): an
    # installed copy carrying every arch its kernel library's units carry agrees, whatever share of units each has
    kb = _kb()
    variant = kb.framework("torch").release("1.0.0").variant("cu90")
    kernels = [lib for lib in variant.extra["libraries"] if lib.role == "kernels"]
    assert kernels, "torch 1.0.0's kernel library was read from its wheel"
    real = sorted({a for lib in kernels for a in lib.sass + lib.ptx})
    view = _view([gpu("Tesla K80", "3.7")], [_binary("torch", "/sp/torch/lib/" + kernels[0].file.rsplit("/", 1)[-1], real)],
                 frameworks={"torch": {"version": "1.0.0", "cuda": "9.0.176"}})
    assert [f.code for f in binary_findings(view, kb)] == []


def test_real_scan_feeds_the_check(cuda_builds):
    """The scan's dict goes into a snapshot unchanged; an sm_75/sm_90a/sm_100f/sm_120 + compute_90 library."""
    scanned = dict(archs_of(str(cuda_builds["libmulti.so"])), package="mypkg")
    view = _view([gpu("NVIDIA A100", "8.0"), gpu("NVIDIA H200", "9.0", index=1), gpu("NVIDIA B300", "10.3", index=2),
                  gpu("Jetson Thor", "11.0", index=3)], [scanned])
    findings = binary_findings(view, None)
    # 8.0: no 8.x SASS and compute_90 is newer -> fails; 9.0: sm_90a; 10.3: sm_100f (family); 11.0: compute_90 JIT
    assert [render(f.title, "en").split(" for ")[1] for f in findings] == ["NVIDIA A100 (GPU 0), compute capability 8.0"]


@pytest.mark.parametrize("package, layer", [
    ("jax-cuda12-plugin", "framework"),  # a distribution of jax, whose file says its binaries are the framework's
    ("tensorflow-intel", "framework"),
    ("paddlepaddle-gpu", "framework"),
    ("xformers", "packages"),  # a framework of the knowledge base whose binaries are an extension
    ("cupy-cuda12x", "packages"),  # no framework of the knowledge base
])
def test_the_layer_of_a_binary_without_kernels_comes_from_the_framework_files(package, layer):
    view = _view([gpu("NVIDIA A10", "8.6")], [_binary(package, "/sp/pkg/libkernels.so", ["sm_90"])])
    (finding,) = binary_findings(view, _kb())
    assert (finding.code, finding.layer) == ("arch_not_in_build", layer)

from gpuvet.kb import load

kb = load()
torch = kb.framework("torch")


def test_every_torch_release_from_1_0_to_2_15():
    versions = [r.version for r in torch.releases]
    assert versions[0] == "2.15.0" and versions[-1] == "1.0.0"
    assert len(versions) == 52  # 1.0.0-1.11.0: the 20 releases PyPI lists for Linux x86_64 (index_listings.toml)
    assert torch.newest.version == "2.15.0"


def test_release_lookup_with_local_label_and_nightly():
    assert torch.release("2.1.2+cu121").version == "2.1.2"
    assert torch.release("2.1").version == "2.1.0"
    assert torch.release("2.6.0.dev20241010+cu124") is None
    assert torch.release("2.16.0") is None
    assert torch.release("not-a-version") is None


def test_pypi_default_variant_facts():
    release = torch.release("2.1.2")
    assert release.default_variant == "cu121"
    v = release.default
    assert (v.cuda, v.cudnn, v.nccl) == ("12.1", "8.9.2.26", "2.18.1")
    assert v.sass == ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
    assert v.ptx == ()
    assert v.install == "pip install torch==2.1.2"
    assert release.python == ">=3.8,<3.12"
    assert release.supports_python("3.11.4") and not release.supports_python("3.12")
    assert release.companions["torchvision"] == "0.16.2"
    assert release.glibc_min == "2.17"


def test_torch_1x_default_wheels_as_read():
    # PyPI torch-1.0.0-cp37-cp37m-manylinux1_x86_64.whl: torch/version.py cuda '9.0.176'; cudnnGetVersion() in
    # libcaffe2_gpu.so returns 7401; NCCL's banner "NCCL version 2.3.7+cuda9.0"; cp27 and cp35-cp37 wheels only
    release = torch.release("1.0.0")
    v = release.default
    assert (release.default_variant, v.cuda, v.cudnn, v.nccl) == ("cu90", "9.0", "7.4.1", "2.3.7")
    assert release.supports_python("2.7.18") and release.supports_python("3.7.16")
    assert not release.supports_python("3.4.10") and not release.supports_python("3.8.0")
    assert release.companions == {}  # no torchvision/torchaudio wheel pins torch==1.0.0
    # torch-1.8.1-cp39-cp39-manylinux1_x86_64.whl; torchvision-0.9.1 and torchaudio-0.8.1 pin torch (==1.8.1)
    release = torch.release("1.8.1")
    assert (release.default.cuda, release.default.cudnn, release.default.nccl) == ("10.2", "7.6.5", "2.7.8")
    assert release.companions == {"torchvision": "0.9.1", "torchaudio": "0.8.1"}
    assert release.python == ">=3.6.2,<3.10" and release.glibc_min == "2.17"
    # torch-1.13.1-cp311-cp311-manylinux1_x86_64.whl: NCCL linked into libtorch_cuda_cpp.so
    assert torch.release("1.13.1").default.nccl == "2.14.3"


def test_variant_by_name_or_cuda():
    release = torch.release("2.1.2")
    assert release.variant("12.1").name == "cu121"
    assert release.variant("+cu118").install.endswith("https://download.pytorch.org/whl/cu118")
    assert release.variant("cpu").cuda is None
    assert release.variant("cu130") is None


def test_volta_dropped_in_2_11_default():
    assert "sm_70" in torch.release("2.10.0").default.sass
    assert "sm_70" not in torch.release("2.11.0").default.sass
    assert torch.release("2.15.0").default.cuda == "13.2"
    assert torch.release("2.7.0").glibc_min == "2.28"


def test_framework_lookup_by_distribution_case_and_separator():
    assert kb.framework("Torch").name == "torch"
    assert kb.framework("no-such-framework") is None
    for framework in kb.frameworks():
        for dist in framework.distributions:
            assert kb.framework(dist.upper().replace("-", "_")).name == framework.name


def test_cudnn_nccl():
    assert kb.cudnn_release("9.10.2.21").cuda == ("12", "11.8")
    assert kb.nccl_release("2.30.7").cuda == ("12.9", "13.3")
    assert kb.cudnn_release("1.0") is None

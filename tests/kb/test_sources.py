"""Every record in every shipped data file cites a source (covers files added later automatically)."""

from gpuvet.kb import load, loader


def test_every_record_in_every_data_file_has_a_source():
    files = loader.data_files()
    assert {"meta", "cuda_driver", "cuda_arch", "gpus", "cudnn", "nccl", "torch"} <= set(files)
    missing = []
    for name, path in files.items():
        missing += loader.missing_sources(name, loader.raw(path))
    assert missing == []


def test_every_framework_file_loads_and_validates():
    kb = load()
    names = {f.name for f in kb.frameworks()}
    assert "torch" in names
    for framework in kb.frameworks():
        assert framework.releases, framework.name
        assert framework.source


def test_missing_source_is_detected():
    document = {"framework": {"name": "x", "source": "s"}, "release": [{"version": "1.0", "variant": [{"name": "cpu"}]}]}
    assert loader.missing_sources("x", document) == ["x:release[1.0]", "x:release[1.0].variant[cpu]"]


def test_sources_lists_record_ids_and_urls():
    pairs = load().sources()
    ids = {rid for rid, _ in pairs}
    assert "torch:release[2.1.2].variant[cu121]" in ids
    assert ("cuda_driver:family[12]", "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html") in pairs

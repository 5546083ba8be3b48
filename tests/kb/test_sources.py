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


import re  # noqa: E402
from pathlib import Path  # noqa: E402

SHIPPED = Path(loader.DATA_DIR).parent.parent  # src/gpuvet
# The registries' host names, assembled so that this file does not spell them out either (the project's own rule):
# PyPI's, and conda's (its package and channel hosts under both of its company's names, and the old channel host).
REGISTRY_HOSTS = (r"\.".join(("pypi", "org")), "python" + "hosted", r"\.".join(("pypi", "python", "org")),
                  r"\banaconda\.(?:org|com|cloud)\b", r"\.".join(("continuum", "io")), r"\.".join(("binstar", "org")))
# A source is public: never this project's shared folder, a local path, an index's internal identifier, or a package
# registry's host name (PyPI is named "PyPI", its URLs come from pip's configuration at run time).
FORBIDDEN = re.compile(
    r"shared/(reference|fixtures)|shared reference|VALIDATION(\.md| row)|search-index|code-index|/work/|/root/"
    r"|" + "|".join(REGISTRY_HOSTS) +
    # a reference list's row id (S01, S25) instead of the document it stands for
    r"|\bS\d{2}\b"
    # "owner/repo release/2.4:path": an index's file identifier, not a link anyone can open
    r"|\b[\w-]+/[\w.-]+ release/[\w.]+:"
    r"|fork snapshot",
    re.I,
)


def _offences(text):
    return [m.group(0) for m in FORBIDDEN.finditer(text)]


def _platform_paths():
    """Paths on a rented instance that a platform's documentation names (/root/autodl-tmp): facts, not citations."""
    from gpuvet.kb import load

    kb = load()
    return {disk["path"] for name in kb.platform_names() for disk in kb.platform(name)["disk"]
            if disk["path"].startswith("/root/")}


def test_no_shipped_data_cites_a_private_place():
    documented = _platform_paths()
    found = []
    for path in sorted([*SHIPPED.rglob("*.toml"), *SHIPPED.rglob("*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            offences = _offences(line)
            if offences == ["/root/"] * len(offences) and sum(line.count(p) for p in documented) >= len(offences):
                continue  # every /root/ on the line is a documented platform path
            if offences:
                found.append(f"{path.relative_to(SHIPPED)}:{number}: {offences}")
    assert found == []
    assert documented >= {"/root/autodl-tmp", "/root/autodl-fs"}


def test_the_private_citation_check_catches_each_shape():
    planted_shapes = (
        "shared/reference/x.yaml", "gpuvet shared reference: frameworks/x.yaml", "VALIDATION row 11",
        "search-index file 123", "code-index ids 9", "/work/x", ".".join(("pypi", "org")) + "/simple", "table (S01)",
        "https://" + ".".join(("repo", "anaconda", "com")) + "/pkgs/main", "https://" + ".".join(("conda", "anaconda", "org")),
        "https://" + ".".join(("repo", "continuum", "io")) + "/pkgs/free",
        "pytorch/builder release/2.4:manywheel/build_cuda.sh", "x/y/blob/1/z.sh (fork snapshot)",
    )
    for planted in planted_shapes:
        assert _offences(f'source = "{planted}"'), planted


REPOSITORY = SHIPPED.parent.parent
_REGISTRY = re.compile("|".join(REGISTRY_HOSTS), re.I)
_NOT_OURS = {".git", ".venv", "venv", "__pycache__", "node_modules", "build", "dist", ".mypy_cache", ".ruff_cache",
             ".pytest_cache", ".hypothesis"}


def _repository_files():
    """The repository's files: git's list (tracked, and new files it does not ignore), so what .gitignore keeps out
    (a bench's venv of third-party packages) is not read; every file under the root where git cannot answer."""
    import subprocess

    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=REPOSITORY, capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return sorted(REPOSITORY.rglob("*"))
    return [REPOSITORY / name for name in sorted(listed.decode("utf-8", "surrogateescape").split("\0")) if name]


def test_no_registry_host_anywhere_in_the_repository():
    """The project's rule: no package registry's host name (PyPI's or conda's) is written anywhere in the repository,
    tests, fixtures, corpora and docs included: index URLs come from pip's and conda's configuration at run time, and
    captured outputs carry a reserved .invalid host in their place (stated in their provenance)."""
    found = []
    for path in _repository_files():
        if not path.is_file() or _NOT_OURS & set(path.relative_to(REPOSITORY).parts) or path.stat().st_size > 8 << 20:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += ["%s: %s" % (path.relative_to(REPOSITORY), m.group(0)) for m in _REGISTRY.finditer(text)]
    assert found == []

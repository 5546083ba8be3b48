"""Every nvidia/cuda record in kb/data/images.toml cites NVIDIA's own repository at a commit NVIDIA authored.

NVIDIA's repository is https://gitlab.com/nvidia/container-images/cuda. A gitlab URL naming a commit that exists only
in a mirror does not resolve: https://github.com/pranavmishra90/nvidia-container-images-cuda mirrors the repository
with its full history, but also holds its owner's own commits (33c40d2d25d8..., "chore: update from upstream", a
mode-change-only commit by the mirror's owner, was once cited for ten releases).

How KNOWN_NVIDIA_COMMITS was verified (2026-12-04, offline afterwards, so no network here): in a clone of that mirror,
``git show -s --format='%ae %ad %s' <commit>`` gives an @nvidia.com author for each, ``git merge-base --is-ancestor
<commit> 7ad4b0af70e5af9fb82ab990df382a0dd7d494dc`` holds for each (7ad4b0af is NVIDIA's newest commit there, so each
is on NVIDIA's own history, not a branch of the mirror's owner), and for each release ``git log --all --full-history
--no-merges -- dist/<version>/<os>/base/Dockerfile`` names the cited commit as the newest NVIDIA-authored commit that
wrote that file, whose amd64 NVIDIA_REQUIRE_CUDA is exactly the recorded string.
"""

import re

from gpuvet.kb import load, loader

REPOSITORY = "https://gitlab.com/nvidia/container-images/cuda"

# commit -> "author date subject" from git show in the mirror
KNOWN_NVIDIA_COMMITS = {
    "5cca491b4127ded7e324206c11a53b5ea9260c74": "adick@nvidia.com 2023-01-05 Replace symlink management logic for CUDA versions 11.2 and earlier.",
    "34b16df13194b1bb4899dc0b37a5b710c4c76ea6": "jesusa@nvidia.com 2022-12-12 template: remove unneeded symlink from /usr/local/cuda",
    "c8641bcc1ec59a7f7b4dabdd65776b5bb7f91a1f": "srivatsans@nvidia.com 2022-12-14 update tesla changes to Dockerfiles",
    "3de25bfd98973fe22f46aff678d7db3d2466389b": "srivatsans@nvidia.com 2023-03-07 v12.1.0",
    "098adf056da4010d361af31de8c9b62ae80adc7d": "jesusa@nvidia.com 2023-06-29 EOL r510 and r515 TRDs",
    "0a60ad512e0755d8ee0204fd40042c6f7fe22fe7": "jesusa@nvidia.com 2023-11-08 CUDA 12.3",
    "684356f023f943fe8a84e0850fd9a4d3c4c3ded4": "jesusa@nvidia.com 2023-11-08 Remove end-of-life drivers for r418 and r450",
    "e6ee8015e4b014de1cdb183587a03f179097ffd4": "srivatsans@nvidia.com 2023-12-05 CUDA 12.3 Update 1",
    "17ddca404b384e2d04b1f88b7ffdcb3bfc7c9d0b": "srivatsans@nvidia.com 2024-02-27 CUDA 12.3.2",
    "b545e9b859b5ba90cdd4da05f079228dad9a7fa1": "srivatsans@nvidia.com 2024-04-05 12.4.0",
    "53a6a109a87bc28f63ab0e8a17a89113bd7ba4f4": "srivatsans@nvidia.com 2024-04-09 CUDA 12.4.1 Update",
    "a819e795c14abffd917da9cc5e6b8e176806ea1b": "srivatsans@nvidia.com 2024-05-31 12.5.0 Update",
    "85f465ea3343a2d7f7753a0a838701999ed58a01": "srivatsans@nvidia.com 2024-07-15 CUDA 12.5.1 update",
    "0336e30f262d36eed680d1d2766258891a22afbd": "srivatsans@nvidia.com 2024-08-13 CUDA 12.6.0",
    "e4936aab9d2609a2509e8106baed090dbdcf10f2": "srivatsans@nvidia.com 2024-09-05 CUDA 12.6.1 update",
    "4713305561ad2bc025e7e14d4aa3e9d5ee466b3a": "srivatsans@nvidia.com 2024-10-14 12.6.2 Update",
    "57b6e780209ea907267bd11bca588d9605ce629e": "srivatsans@nvidia.com 2024-12-03 CUDA 12.6.3 Update",
    "61663681e7cc1cd6804521b154d436edf42246fa": "srivatsans@nvidia.com 2025-01-27 12.8.0 Update",
    "29a0c4b8b69a4f274e51ed22340b497a83ffa82d": "srivatsans@nvidia.com 2025-03-13 12.8.1 Update",
    "5d46571ae3f4b9c6693a57774b4750fd999090ad": "srivatsans@nvidia.com 2025-05-07 CUDA 12.9 update",
    "f8d5caa222a928e58f49b18c2ce1362bfdfcef9e": "fparkar@nvidia.com 2025-06-24 update README.md and supported-tags.md for 12.9.1 KITMAKER-2374",
    "7ad4b0af70e5af9fb82ab990df382a0dd7d494dc": "srivatsans@nvidia.com 2025-08-13 Update to LD_LIBRARY_PATH",
}
MIRROR_OWNER_COMMIT = "33c40d2d25d82d4b01a4c05b8ae15952ab54cb0b"

_BLOB = re.compile(re.escape(REPOSITORY) + r"/-/blob/([^/\s;]+)/(\S+?)(?=[;\s]|$)")


def _nvidia_cuda():
    return load().images()["nvidia_cuda"]


def test_every_release_cites_its_own_base_dockerfile_at_a_full_commit():
    for release in _nvidia_cuda()["release"]:
        match = _BLOB.fullmatch(release["source"])
        assert match, release["source"]
        commit, path = match.groups()
        assert re.fullmatch(r"[0-9a-f]{40}", commit), release["source"]
        os_dirs = {name.replace(".", "") for name in release["os"]}
        version, os_dir = re.fullmatch(r"dist/([^/]+)/([^/]+)/base/Dockerfile", path).groups()
        assert version == release["version"] and os_dir in os_dirs, release["source"]


def test_every_cited_commit_of_nvidias_repository_is_a_known_nvidia_commit():
    """Every URL into NVIDIA's repository anywhere in images.toml (the table's own source too)."""
    text = open(loader.data_files()["images"], encoding="utf-8").read()
    cited = [m.group(1) for m in _BLOB.finditer(text)]
    assert len(cited) == len(_nvidia_cuda()["release"]) + 1  # each release and the table's supported-tags.md
    assert all(re.fullmatch(r"[0-9a-f]{40}", c) for c in cited), sorted(set(cited))
    assert MIRROR_OWNER_COMMIT not in cited
    assert set(cited) == set(KNOWN_NVIDIA_COMMITS), set(cited) ^ set(KNOWN_NVIDIA_COMMITS)
    assert all(" " in row and row.split()[0].endswith("@nvidia.com") for row in KNOWN_NVIDIA_COMMITS.values())

"""Which driver branches cuda-compat supports depends on the CUDA release (cuda_driver.toml ``[[compat_branches]]``).

Each row of ``CASES`` is one (CUDA release, driver, GPU segment) question with the answer NVIDIA's own CUDA image for
that release gives: the brand=tesla clauses of its NVIDIA_REQUIRE_CUDA (cited by URL, quoted verbatim). A single
branch list for every release (R470, R525, R535, R550) fails the 12.9 and 13.0 rows; a release with no sourced
list answers None (unknown), never a guessed True.
"""

from __future__ import annotations

import re

import pytest

from gpuvet import kb as kb_module
from gpuvet.kb import versions

KB = kb_module.load()

_BLOB = "https://gitlab.com/nvidia/container-images/cuda/-/blob/"
CUDA_12_4 = (_BLOB + "53a6a109a87bc28f63ab0e8a17a89113bd7ba4f4/dist/12.4.1/ubuntu2204/base/Dockerfile",
             "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=525,driver<526 "
             "brand=tesla,driver>=535,driver<536")
CUDA_12_8 = (_BLOB + "29a0c4b8b69a4f274e51ed22340b497a83ffa82d/dist/12.8.1/ubuntu2404/base/Dockerfile",
             "cuda>=12.8 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=535,driver<536 "
             "brand=tesla,driver>=550,driver<551 brand=tesla,driver>=560,driver<561 brand=tesla,driver>=565,driver<566")
CUDA_12_9 = (_BLOB + "f8d5caa222a928e58f49b18c2ce1362bfdfcef9e/dist/12.9.1/ubuntu2404/base/Dockerfile",
             "cuda>=12.9 brand=tesla,driver>=535,driver<536 brand=tesla,driver>=550,driver<551 "
             "brand=tesla,driver>=560,driver<561 brand=tesla,driver>=565,driver<566 brand=tesla,driver>=570,driver<571")
CUDA_13_0 = (_BLOB + "7ad4b0af70e5af9fb82ab990df382a0dd7d494dc/dist/13.0.0/ubuntu2404/base/Dockerfile",
             "cuda>=13.0 brand=tesla,driver>=535,driver<536 brand=tesla,driver>=550,driver<551 "
             "brand=tesla,driver>=565,driver<566 brand=tesla,driver>=570,driver<571 brand=tesla,driver>=575,driver<576")
COMPAT_FAQ = ("https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html",
              "The CUDA driver's compatibility package only supports particular drivers.")
NGC_MINIMUMS = ("https://docs.nvidia.com/deeplearning/frameworks/sglang-release-notes/rel-25-10.html",
                "you can use NVIDIA driver release 470.57 (or later R470), 525.85 (or later R525), 535.86 (or later "
                "R535), or 550.54 (or later R550) in forward-compatibility mode.")
DATACENTER_ONLY = ("https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
                   "Forward Compatibility is applicable only for systems with: NVIDIA Data Center GPUs.")

# (id, CUDA release of the cuda-compat package, driver, GPU segment, expected, (source, quote))
CASES = [
    ("12.9-r470-not-listed", "12.9", "470.256.02", "datacenter", False, CUDA_12_9),
    ("12.9-r525-not-listed", "12.9", "525.147.05", "datacenter", False, CUDA_12_9),
    ("12.9-r535-listed", "12.9", "535.183.01", "datacenter", True, CUDA_12_9),
    ("12.9-r570-listed", "12.9", "570.172.08", "datacenter", True, CUDA_12_9),
    ("13.0-r470-not-listed", "13.0", "470.256.02", "datacenter", False, CUDA_13_0),
    ("13.0-r525-not-listed", "13.0", "525.147.05", "datacenter", False, CUDA_13_0),
    ("13.0.2-r525-not-listed", "13.0.2", "525.147.05", "datacenter", False, CUDA_13_0),
    ("13.0-r535-listed", "13.0", "535.183.01", "datacenter", True, CUDA_13_0),
    ("13.0-r550-listed", "13.0", "550.127.05", "datacenter", True, CUDA_13_0),
    ("13.0-r575-listed", "13.0", "575.57.08", "datacenter", True, CUDA_13_0),
    ("13.0-r560-not-listed", "13.0", "560.35.05", "datacenter", False, CUDA_13_0),
    ("12.8-r470-listed", "12.8", "470.256.02", "datacenter", True, CUDA_12_8),
    ("12.8-r525-not-listed", "12.8", "525.147.05", "datacenter", False, CUDA_12_8),
    ("12.8-r520-not-listed", "12.8", "520.61.05", "datacenter", False, CUDA_12_8),
    ("12.4-r535-listed", "12.4", "535.183.01", "datacenter", True, CUDA_12_4),
    ("12.4-r525-listed", "12.4", "525.147.05", "datacenter", True, CUDA_12_4),
    ("12.4-r470-listed", "12.4", "470.256.02", "datacenter", True, CUDA_12_4),
    ("12.4-r450-not-listed", "12.4", "450.248.02", "datacenter", False, CUDA_12_4),
    ("12.4-r470-below-branch-minimum", "12.4", "470.42.01", "datacenter", False, NGC_MINIMUMS),
    ("12.4-r535-consumer", "12.4", "535.183.01", "consumer", False, DATACENTER_ONLY),
    ("13.1-unlisted-unknown", "13.1", "535.183.01", "datacenter", None, COMPAT_FAQ),
    ("12.7-never-released-unknown", "12.7", "535.183.01", "datacenter", None, COMPAT_FAQ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_cuda_compat_branches_per_release(case):
    name, cuda, driver, segment, expected, (source, quote) = case
    assert source.startswith("https://") and len(quote) > 20
    got = KB.forward_compat_eligible(segment, driver, cuda)
    assert got is expected, f"{name}: cuda-compat {cuda} on {driver} ({segment}) -> {got}; {source}: {quote}"


def test_each_listed_branch_is_a_tesla_clause_of_the_cited_requirement():
    """The quoted clauses of every record name exactly its branches, and its source is NVIDIA's image repository."""
    rows = kb_module._file("cuda_driver")["compat_branches"]
    assert {r["cuda"] for r in rows} >= {"12.4", "12.8", "12.9", "13.0"}
    for row in rows:
        assert row["source"].startswith(_BLOB), row["cuda"]
        assert row["tesla_clauses"].startswith("cuda>=" + row["cuda"]), row["cuda"]
        clauses = [int(b) for b in re.findall(r"brand=tesla,driver>=(\d+),driver<\d+", row["tesla_clauses"])]
        assert clauses == sorted(row["branches"]), row["cuda"]


def test_the_records_agree_with_the_image_requirements_recorded_in_images_toml():
    """The same Dockerfiles' NVIDIA_REQUIRE_CUDA are recorded for ``gpuvet check image:``; both must say the same."""
    images = KB.images()["nvidia_cuda"]
    for row in kb_module._file("cuda_driver")["compat_branches"]:
        version, os_dir = row["image"].split()
        os_name = re.sub(r"^ubuntu(\d\d)(\d\d)$", r"ubuntu\1.\2", os_dir)
        release = next(r for r in images["release"] if r["version"] == version and os_name in r["os"])
        requirement = images["clauses"][release["clauses"]]
        tesla = sorted({int(b) for b in re.findall(r"brand=tesla,driver>=(\d+)", requirement)})
        assert tesla == sorted(row["branches"]), (row["cuda"], release["source"])
        assert versions.cuda_major_minor(version) == versions.cuda_major_minor(row["cuda"])

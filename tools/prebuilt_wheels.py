"""Write src/gpuvet/kb/data/prebuilt_wheels.toml: which prebuilt wheels each flash-attn release publishes on its GitHub
release, read from the release tag's own files in a flash-attention git checkout.

    python tools/prebuilt_wheels.py GIT_DIR            # a clone or bare mirror of Dao-AILab/flash-attention
    python tools/prebuilt_wheels.py GIT_DIR --check    # exit 1 if the shipped file is not what the tags say

flash-attn's PyPI package is an sdist whose setup.py downloads one prebuilt wheel from the GitHub release of its tag,
named ``flash_attn-V+cu{C}torch{T}cxx11abi{ABI}-cp{P}-cp{P}-linux_x86_64.whl``, or else compiles from source. At each tag:

- ``.github/workflows/publish.yml``'s build matrix (python-version x torch-version x cuda-version x cxx11_abi, less its
  ``exclude`` rows) is the set of wheels the release builds; ``tmpname`` names the CUDA part (major+minor before 2.7,
  the major only from 2.7);
- ``setup.py``'s ``get_wheel_url`` says which wheel an install asks for: torch's major.minor, the C++11 ABI torch was
  built with, the Python, and a CUDA tag mapped from torch's CUDA major (``torch_cuda_version = parse("11.8") if
  ... major == 11 else parse("12.3")``).

Both are recorded per release with the URLs of the two files at the tag. A torch development snapshot in a matrix
(2.2.0.dev20231130) still names its wheel torch2.2, which setup.py then downloads for the final 2.2 release: those are
recorded apart (torch_dev). gpuvet.checks.prebuilt reads the file.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import yaml
from packaging.version import Version

OUT = Path(__file__).resolve().parents[1] / "src" / "gpuvet" / "kb" / "data" / "prebuilt_wheels.toml"
REPO = "https://github.com/Dao-AILab/flash-attention"
FIRST, LAST = Version("2.5.0"), Version("2.8.999")


def _show(git_dir: str, tag: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def tags(git_dir: str) -> List[str]:
    names = subprocess.run(["git", "--git-dir", git_dir, "tag"], check=True, capture_output=True, text=True).stdout.split()
    chosen = [t for t in names if re.fullmatch(r"v\d+\.\d+\.\d+(\.post\d+)?", t) and FIRST <= Version(t[1:]) <= LAST]
    return sorted(chosen, key=lambda t: Version(t[1:]))


def _minor(version: str) -> str:
    parsed = Version(version)
    return f"{parsed.major}.{parsed.minor}"


def _cuda_tag(cuda: str, major_only: bool) -> str:
    parts = cuda.split(".")
    return parts[0] if major_only else parts[0] + parts[1]


def matrix(workflow: str) -> Dict[str, object]:
    """The wheels publish.yml builds: torch minors, CUDA tags (with the toolkit each was built with), ABIs, Pythons and
    the excluded (torch, python) / (torch, cuda) pairs. Pure: takes the file's text."""
    document = yaml.safe_load(workflow)
    spec = document["jobs"]["build_wheels"]["strategy"]["matrix"]
    major_only = "tmpname=cu${WHEEL_CUDA_VERSION}" in workflow
    if not major_only and "tmpname=cu${MATRIX_CUDA_VERSION}" not in workflow:
        raise ValueError("publish.yml names its wheels in a way this tool does not know")
    cudas = [str(c) for c in spec["cuda-version"]]
    excluded = []
    for row in spec.get("exclude") or ():
        torch = _minor(str(row["torch-version"]))
        if "python-version" in row:
            excluded.append([torch, "python", str(row["python-version"])])
        if "cuda-version" in row:
            excluded.append([torch, "cuda", _cuda_tag(str(row["cuda-version"]), major_only)])
    torches = [str(t) for t in spec["torch-version"]]
    return {
        "torch": [_minor(t) for t in torches if not Version(t).is_devrelease],
        "torch_dev": {_minor(t): t for t in torches if Version(t).is_devrelease},
        "cuda": {_cuda_tag(c, major_only): c for c in cudas},
        "cxx11_abi": [str(a).upper() for a in spec["cxx11_abi"]],
        "python": [str(p) for p in spec["python-version"]],
        "exclude": excluded,
    }


def wanted_cuda(setup_py: str) -> Dict[str, str]:
    """setup.py's get_wheel_url: torch's CUDA major -> the CUDA tag the install asks for. Pure."""
    body = setup_py[setup_py.index("def get_wheel_url"):]
    body = body[: body.index("wheel_url = BASE_WHEEL_URL")]
    major_only = 'cuda_version = f"{torch_cuda_version.major}"' in body
    one_line = re.search(r'parse\("(11\.\d)"\) if torch_cuda_version\.major == 11 else parse\("(\d+\.\d)"\)', body)
    if one_line:
        pairs = {"11": one_line.group(1), "12": one_line.group(2), "13": one_line.group(2)}
    else:  # the if/elif/else form (2.8.3.post1): 11 -> 11.8, 12 -> 12.3, others -> 13.0
        found = dict(re.findall(r'major == (\d+):\s*\n\s*torch_cuda_version = parse\("(\d+\.\d)"\)', body))
        fallback = re.search(r'else:\s*\n\s*torch_cuda_version = parse\("(\d+\.\d)"\)', body)
        if not found or not fallback:
            raise ValueError("setup.py's get_wheel_url maps torch's CUDA in a way this tool does not know")
        pairs = dict(found)
        pairs.setdefault("13", fallback.group(1))
    return {major: _cuda_tag(cuda, major_only) for major, cuda in sorted(pairs.items())}


def _toml_list(values) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def render(records: List[Dict[str, object]]) -> str:
    lines = [
        "# The prebuilt wheels each flash-attn release publishes on its GitHub release, and which one its setup.py asks",
        "# for. Generated by tools/prebuilt_wheels.py from the tag's .github/workflows/publish.yml (the build matrix, less",
        "# its exclude rows) and setup.py (get_wheel_url); do not edit by hand. gpuvet.checks.prebuilt reads it.",
        "#",
        "#   torch         torch major.minor of the built wheels (the wheel name's torchX.Y), built against that release",
        "#   torch_dev     major.minor -> the torch development snapshot a wheel was built against instead",
        "#   cuda          the wheel name's CUDA tag -> the toolkit that built it",
        "#   cxx11_abi     the wheel name's cxx11abi values (torch's -D_GLIBCXX_USE_CXX11_ABI)",
        "#   python        CPython versions of the built wheels",
        "#   exclude       matrix rows not built: [torch, \"python\", version] or [torch, \"cuda\", tag]",
        "#   wants_cuda    torch's CUDA major -> the CUDA tag setup.py's get_wheel_url asks for",
        "",
    ]
    for record in records:
        lines += [
            "[[release]]",
            'distribution = "flash-attn"',
            f'version = "{record["version"]}"',
            f'torch = {_toml_list(record["torch"])}',
            "torch_dev = { " + ", ".join(f'"{k}" = "{v}"' for k, v in record["torch_dev"].items()) + " }",
            "cuda = { " + ", ".join(f'"{k}" = "{v}"' for k, v in record["cuda"].items()) + " }",
            f'cxx11_abi = {_toml_list(record["cxx11_abi"])}',
            f'python = {_toml_list(record["python"])}',
            "exclude = [" + ", ".join(_toml_list(row) for row in record["exclude"]) + "]",
            "wants_cuda = { " + ", ".join(f'"{k}" = "{v}"' for k, v in record["wants_cuda"].items()) + " }",
            f'source = "{REPO}/blob/{record["tag"]}/.github/workflows/publish.yml (build matrix) ; '
            f'{REPO}/blob/{record["tag"]}/setup.py (get_wheel_url)"',
            "",
        ]
    return "\n".join(lines)


def records(git_dir: str) -> List[Dict[str, object]]:
    out = []
    for tag in tags(git_dir):
        record = matrix(_show(git_dir, tag, ".github/workflows/publish.yml"))
        record.update(version=tag[1:], tag=tag, wants_cuda=wanted_cuda(_show(git_dir, tag, "setup.py")))
        out.append(record)
    return sorted(out, key=lambda r: Version(str(r["version"])), reverse=True)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("git_dir", help="a flash-attention clone's .git folder or a bare mirror")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = render(records(args.git_dir))
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("prebuilt_wheels.toml is current" if same else "prebuilt_wheels.toml differs from the tags")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

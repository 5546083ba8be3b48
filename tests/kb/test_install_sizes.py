"""kb/data/install_sizes.toml: measured by tools/install_sizes.py from the wheel files and their members."""

import re
import sys
from pathlib import Path

from gpuvet.kb import loader
from gpuvet.kb.mirrors import install_size

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def test_every_row_is_measured_and_its_gigabytes_are_its_bytes():
    rows = loader.raw(loader.DATA_DIR / "install_sizes.toml")["size"]
    assert {(r["framework"], r["build"]) for r in rows} >= {("torch", "cuda"), ("torch", "cpu"), ("vllm", "cuda")}
    for row in rows:
        assert not row.get("estimate"), row
        downloaded, unpacked = (int(n) for n in re.search(r"(\d+) bytes downloaded, (\d+) bytes unpacked", row["note"]).groups())
        assert round(downloaded / 1e9, 2) == row["download_gb"] and round(unpacked / 1e9, 2) == row["installed_gb"]
        assert unpacked > downloaded  # wheels are zip archives: unpacked is always larger
        assert "tools/install_sizes.py" in row["source"]


def test_the_disk_check_reads_them():
    size = install_size("torch", "cuda")
    assert size is not None and size.estimate is False and size.installed_gb > size.download_gb > 1


def test_the_tool_rewrites_the_file_it_reads_byte_for_byte():
    sys.path.insert(0, str(TOOLS))
    try:
        import install_sizes
    finally:
        sys.path.remove(str(TOOLS))
    rows = loader.raw(loader.DATA_DIR / "install_sizes.toml")["size"]
    measured = []
    for framework, build, requirement, _extra, index in install_sizes.MEASURED:
        row = next(r for r in rows if (r["framework"], r["build"]) == (framework, build))
        downloaded, unpacked = (int(n) for n in re.search(r"(\d+) bytes downloaded, (\d+) bytes unpacked", row["note"]).groups())
        files = int(re.search(r": (\d+) wheels", row["note"]).group(1))
        measured.append((framework, build, requirement, index, downloaded, unpacked, files))
    assert install_sizes.render(measured) == (loader.DATA_DIR / "install_sizes.toml").read_text(encoding="utf-8")

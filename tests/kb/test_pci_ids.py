"""The NVIDIA part of pci.ids that gpuvet ships (kb/data/pci_ids.toml) and the tool that regenerates it.

Expected names are pci.ids' own lines (https://github.com/pciutils/pciids, pci.ids 2026.08.22, vendor 10de)."""

import subprocess
import sys
from pathlib import Path

import pytest

from gpuvet.ingest import detect_kind, parse
from gpuvet.kb import load
from gpuvet.tomlfile import parse_toml_bytes

TOOL = Path(__file__).resolve().parents[2] / "tools" / "pci_ids.py"


@pytest.mark.parametrize("device, name", [
    ("10de:2204", "GA102 [GeForce RTX 3090]"),
    ("13c2", "GM204 [GeForce GTX 970]"),
    ("10DE:2330", "GH100 [H100 SXM5 80GB]"),
    ("2335", "GH100 [H200 SXM 141GB]"),
    ("1db4", "GV100GL [Tesla V100 PCIe 16GB]"),
    ("2b85", "GB202 [GeForce RTX 5090]"),
    ("ffff", None),  # not an NVIDIA device id pci.ids lists
])
def test_shipped_table_names_nvidia_devices(device, name):
    assert load().pci_device_name(device) == name


def test_the_source_names_the_public_database_and_its_version():
    source = load().pci_ids_source()
    assert source.startswith("pci.ids 2026.08.22") and "https://github.com/pciutils/pciids/blob/" in source


def test_a_device_lspci_could_not_name_is_named_and_checked_as_that_gpu():
    text = "af:00.0 VGA compatible controller: NVIDIA Corporation Device 2204 (rev a1)\n"
    snapshot = parse(detect_kind(text), text, "paste")
    gpu = snapshot["gpus"]["value"][0]
    assert gpu["name"] == "GeForce RTX 3090" and gpu["name_source"] == "pci.ids"
    assert "pci.ids 2026.08.22" in snapshot["gpus"]["note"]
    model = load().gpu(gpu["name"])
    assert model is not None and model.compute_capability == "8.6"


def test_an_id_nobody_knows_stays_unnamed():
    text = "af:00.0 3D controller: NVIDIA Corporation Device ffff (rev a1)\n"
    gpu = parse(detect_kind(text), text, "paste")["gpus"]["value"][0]
    assert gpu["name"] is None and "name_source" not in gpu and gpu["pci_device_id"] == "10de:ffff"


PCI_IDS = """#
#\tVersion: 2099.01.02
#
10dd  Evans & Sutherland
\t2204  Not an NVIDIA device
10de  NVIDIA Corporation
\t2204  GA102 [GeForce RTX 3090]
\t\t10de 147d  GeForce RTX 3090 Founders Edition
\t2330  GH100 [H100 SXM5 80GB]
10df  Emulex Corporation
\t2330  Not NVIDIA either
C 03  Display controller
\t02  3D controller
"""


def test_the_tool_keeps_nvidia_device_lines_only_and_is_stable(tmp_path):
    source = tmp_path / "pci.ids"
    source.write_text(PCI_IDS)
    out = tmp_path / "pci_ids.toml"
    argv = [sys.executable, str(TOOL), str(source), "--commit", "0" * 40, "--out", str(out)]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    document = parse_toml_bytes(out.read_bytes())
    assert document["pci"]["devices"] == {"2204": "GA102 [GeForce RTX 3090]", "2330": "GH100 [H100 SXM5 80GB]"}
    assert document["pci"]["version"] == "2099.01.02" and ("/blob/" + "0" * 40) in document["pci"]["source"]
    written = out.read_bytes()
    assert subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
    assert out.read_bytes() == written


def test_the_tool_refuses_a_file_without_nvidia_devices(tmp_path):
    source = tmp_path / "pci.ids"
    source.write_text("10dd  Evans & Sutherland\n\t2204  Something\n")
    completed = subprocess.run([sys.executable, str(TOOL), str(source), "--out", str(tmp_path / "x.toml")],
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1 and completed.stderr.startswith("error: ")
    assert not (tmp_path / "x.toml").exists()

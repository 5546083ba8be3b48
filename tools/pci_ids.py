"""Regenerate src/gpuvet/kb/data/pci_ids.toml, the NVIDIA devices of the PCI ID Repository's pci.ids.

    python tools/pci_ids.py PATH/TO/pci.ids [--commit HASH] [--out FILE]

pci.ids is the database lspci names devices with (https://pci-ids.ucw.cz/, mirrored at
https://github.com/pciutils/pciids); an lspci whose copy predates a GPU prints ``Device 2204``, and gpuvet names the
device from this table instead. Only vendor 10de's device lines are kept (no subsystems): the output is the same
bytes for the same input, so a rerun on an unchanged pci.ids changes nothing. pci.ids may be distributed under the
3-clause BSD License (its header offers GPL-2.0-or-later or BSD-3-Clause).
"""

import re
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "gpuvet" / "kb" / "data" / "pci_ids.toml"
NVIDIA = "10de"

_VENDOR = re.compile(r"^(?P<id>[0-9a-f]{4})  (?P<name>.+)$")
_DEVICE = re.compile(r"^\t(?P<id>[0-9a-f]{4})  (?P<name>.+)$")
_VERSION = re.compile(r"^#\s*Version:\s*(\S+)")


def nvidia_devices(text):
    """(pci.ids version or None, [(device id, name)]) of vendor 10de, in file order."""
    version, devices, inside = None, [], False
    for line in text.split("\n"):
        found = _VERSION.match(line)
        if found and version is None:
            version = found.group(1)
        vendor = _VENDOR.match(line)
        if vendor:
            inside = vendor.group("id") == NVIDIA
            continue
        if line.startswith("C "):  # the device classes section follows the vendors
            inside = False
        device = _DEVICE.match(line)
        if inside and device:
            devices.append((device.group("id"), device.group("name").strip()))
    return version, devices


def _quoted(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(version, devices, commit=None):
    where = "https://github.com/pciutils/pciids" + ("/blob/%s/pci.ids" % commit if commit else "")
    lines = [
        "# NVIDIA PCI device ids -> names, from the PCI ID Repository's pci.ids (vendor 10de, device lines only).",
        "# Written by tools/pci_ids.py; do not edit by hand. pci.ids: GPL-2.0-or-later or BSD-3-Clause (used under",
        "# BSD-3-Clause); copyright in the compilation: Martin Mares and Albert Pool.",
        "",
        "[pci]",
        "version = %s" % _quoted(version or "unknown"),
        "source = %s" % _quoted("https://pci-ids.ucw.cz/; " + where),
        "",
        "[pci.devices]",
    ]
    lines += ["%s = %s" % (_quoted(device), _quoted(name)) for device, name in devices]
    return "\n".join(lines) + "\n"


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    commit = argv[argv.index("--commit") + 1] if "--commit" in argv else None
    output = Path(argv[argv.index("--out") + 1]) if "--out" in argv else OUTPUT
    version, devices = nvidia_devices(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    if not devices:
        print("error: no NVIDIA (10de) devices in %s" % argv[0], file=sys.stderr)
        return 1
    output.write_text(render(version, devices, commit), encoding="utf-8")
    print("wrote %d NVIDIA devices (pci.ids %s) to %s" % (len(devices), version, output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

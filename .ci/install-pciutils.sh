#!/bin/sh
# Install pciutils (lspci) for the test that compares gpuvet's PCI configuration-space reader with lspci's own
# decoding (tests/probe/test_pci.py). Idempotent and non-interactive; the test skips without it.
set -eu
if command -v lspci >/dev/null 2>&1; then
    echo "lspci already installed: $(command -v lspci)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-pciutils: no apt-get here; install pciutils by hand" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends pciutils >/dev/null 2>&1 || {
    $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y --no-install-recommends pciutils >/dev/null
}
command -v lspci

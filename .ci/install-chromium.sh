#!/bin/sh
# Install Debian's chromium for the report tests (headless screenshots and DOM dumps of gpuvet's HTML reports).
# Idempotent and non-interactive: does nothing when a chromium is already on PATH. The tests skip without it.
set -eu

for candidate in chromium chromium-browser; do
    if command -v "$candidate" >/dev/null 2>&1; then
        echo "chromium already installed: $(command -v "$candidate")"
        exit 0
    fi
done

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: no apt-get here; install chromium by hand (the HTML report tests skip without it)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# fonts-noto-cjk: the Chinese reports must render with real glyphs, not boxes, in screenshots.
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk >/dev/null
echo "chromium installed: $(command -v chromium)"

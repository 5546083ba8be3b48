#!/bin/sh
# Install Debian's xterm, Xvfb, xwininfo and ImageMagick for the screenshot renderer's test (tools/render_screenshots.py
# draws a capture in a real xterm on a virtual screen). Idempotent and non-interactive; the test skips without them.
set -eu

if command -v xterm >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1 && command -v xwininfo >/dev/null 2>&1 \
    && command -v import >/dev/null 2>&1; then
    echo "xterm and Xvfb already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-xterm: no apt-get here; install xterm, xvfb, x11-utils and imagemagick by hand (the renderer test skips)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends xterm xvfb x11-utils imagemagick fonts-dejavu-core fonts-noto-cjk >/dev/null
echo "xterm installed: $(command -v xterm)"

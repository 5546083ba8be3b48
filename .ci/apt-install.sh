#!/bin/sh
# Install Debian packages for the tests that run a real program, when that program is missing:
#     sh .ci/apt-install.sh COMMAND... -- PACKAGE...
# Does nothing when every COMMAND is on PATH; otherwise installs the PACKAGEs with apt-get (updating the lists only
# when a first try finds them stale). Idempotent and non-interactive; the tests that need the programs skip without
# them, so a machine without apt-get is told so and goes on.
set -eu
commands=""
missing=0
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    commands="$commands $1"
    command -v "$1" >/dev/null 2>&1 || missing=1
    shift
done
[ "$#" -gt 0 ] && shift
if [ "$missing" = 0 ]; then
    echo "already installed:$commands"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "apt-install: no apt-get here; install $* by hand (the tests that need$commands skip)" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 || {
    $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
echo "installed: $*"

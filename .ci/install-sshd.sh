#!/bin/sh
# Install Debian's OpenSSH server for the fleet tests (a real sshd on loopback). Idempotent and non-interactive:
# does nothing when sshd is already present. Never starts the system service; the tests start their own sshd.
set -eu

find_sshd() {
    for candidate in /usr/sbin/sshd /usr/local/sbin/sshd "$(command -v sshd 2>/dev/null || true)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if existing=$(find_sshd); then
    echo "sshd already installed: $existing"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-sshd: no apt-get here; install OpenSSH's sshd by hand (the fleet tests skip without it)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# policy-rc.d 101 keeps the package's postinst from starting a system-wide sshd (the tests run their own).
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    REMOVE_POLICY=1
else
    REMOVE_POLICY=0
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends openssh-server openssh-client
if [ "$REMOVE_POLICY" = "1" ]; then
    $SUDO rm -f /usr/sbin/policy-rc.d
fi
find_sshd

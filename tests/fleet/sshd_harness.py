"""A real OpenSSH sshd on loopback standing for several hosts (one port each), for the fleet tests and bench.

One sshd listens on many 127.0.0.1 ports; ``Match LocalPort`` blocks give each port its own ForceCommand wrapper,
so "hosts" differ in what is on their PATH (a fake nvidia-smi replaying a real captured output, python3 3.6 or
none at all), in their authorized keys (auth failure) or in hanging. Keys are throwaway, made in a temp folder.
"""

import os
import shutil
import socket
import stat
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
PY36 = Path.home() / ".pyenv" / "versions" / "3.6.15" / "bin" / "python3"


def find_sshd():
    for candidate in ("/usr/sbin/sshd", "/usr/local/sbin/sshd", shutil.which("sshd") or ""):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_ports(count):
    sockets, ports = [], []
    for _ in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
        ports.append(sock.getsockname()[1])
    for sock in sockets:
        sock.close()
    return ports


def _script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def keygen(path, kind="ed25519"):
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "gpuvet-test", "-f", str(path)], check=True)
    return path


def fake_gpu_bin(folder, xml_fixture, nvcc_fixture=None, python3=None, proc_version=None):
    """A PATH folder with a fake nvidia-smi printing a real `nvidia-smi -q -x` capture (and optionally nvcc).

    ``proc_version``: this machine has no NVIDIA kernel module, so a `cat` stand-in answers a real captured
    /proc/driver/nvidia/version for that one path (and is the real cat for anything else).
    """
    folder.mkdir(parents=True, exist_ok=True)
    if proc_version:
        _script(folder / "cat", '#!/bin/sh\nif [ "$1" = /proc/driver/nvidia/version ] && [ "$#" = 1 ]; then '
                'exec /bin/cat "%s"; fi\nexec /bin/cat "$@"\n' % (FIXTURES / "proc-driver-nvidia-version" / proc_version))
    xml = FIXTURES / "nvidia-smi-q-x" / xml_fixture
    _script(
        folder / "nvidia-smi",
        "#!/bin/sh\n"
        '# Replays a real capture; only `-q -x` is answered, like a host whose other outputs we never recorded.\n'
        'if [ "$1" = "-q" ] && [ "$2" = "-x" ]; then exec /bin/cat "%s"; fi\n'
        'echo "fake nvidia-smi: only -q -x is recorded" >&2\nexit 9\n' % xml,
    )
    if nvcc_fixture:
        _script(folder / "nvcc", '#!/bin/sh\nexec /bin/cat "%s"\n' % (FIXTURES / "nvcc-version" / nvcc_fixture))
    if python3 == "none":
        pass
    elif python3:
        target = folder / "python3"
        if target.exists() or target.is_symlink():
            target.unlink()
        if isinstance(python3, str) and python3.startswith("#!"):
            _script(target, python3)
        else:
            target.symlink_to(python3)
    return folder


class LoopbackSSHD(object):
    """Start with ``start()``; ``hosts`` maps a role to its port; ``stop()`` ends sshd (only the one it started)."""

    def __init__(self, root, roles, authorized_keys, host_key):
        self.root = Path(root)
        self.roles = roles  # role -> {"path": str|None, "command": str|None, "authorized_keys": path|None}
        self.authorized_keys = authorized_keys
        self.host_key = host_key
        self.ports = dict(zip(roles, free_ports(len(roles))))
        self.process = None

    def _wrapper(self, role, spec):
        if spec.get("command"):
            body = "exec %s\n" % spec["command"]
        else:
            body = 'PATH="%s"\nexport PATH\nexec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n' % spec["path"]
        return _script(self.root / ("wrap-" + role), "#!/bin/sh\n" + body)

    def config_text(self):
        lines = [
            "ListenAddress 127.0.0.1",
            "HostKey %s" % self.host_key,
            "PidFile %s" % (self.root / "sshd.pid"),
            "AuthorizedKeysFile %s" % self.authorized_keys,
            "PermitRootLogin yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "MaxStartups 400:30:800",
            "MaxSessions 50",
            "LoginGraceTime 30",
            "LogLevel ERROR",
        ]
        lines += ["Port %d" % port for port in self.ports.values()]
        for role, spec in self.roles.items():
            lines.append("Match LocalPort %d" % self.ports[role])
            lines.append("    ForceCommand %s" % self._wrapper(role, spec))
            if spec.get("authorized_keys"):
                lines.append("    AuthorizedKeysFile %s" % spec["authorized_keys"])
        return "\n".join(lines) + "\n"

    def start(self, sshd):
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege separation directory sshd insists on
        config = self.root / "sshd_config"
        config.write_text(self.config_text())
        check = subprocess.run([sshd, "-t", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError("sshd config rejected: " + check.stderr.strip())
        log = open(str(self.root / "sshd.log"), "w")
        self.process = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        pending = set(self.ports.values())
        while pending and time.monotonic() < deadline:
            for port in list(pending):
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        pending.discard(port)
            if pending:
                if self.process.poll() is not None:
                    break
                time.sleep(0.05)
        if pending:
            self.stop()
            raise RuntimeError("sshd did not listen: " + (self.root / "sshd.log").read_text()[-500:])
        return self

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def known_hosts_line(self, role, key_path=None):
        key = Path(str(key_path or self.host_key) + ".pub").read_text().split()
        return "[127.0.0.1]:%d %s %s\n" % (self.ports[role], key[0], key[1])

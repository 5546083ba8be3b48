"""Session fixtures: a real sshd on loopback standing for a small fleet, and the probe bundle to send to it."""

import importlib.util
import shutil

import pytest

from fleet import sshd_harness as H

# Until gpuvet.probe.collect lands, the bundle is built from a copy of the package with this stand-in probe
# (it reads the driver version the way the real probe's nvidia-smi path does: from `nvidia-smi -q -x`).
STANDIN_COLLECT = '''
import json, re
from gpuvet.probe import runner
from gpuvet.probe.facts import found, failed

def main():
    result = runner.run(["nvidia-smi", "-q", "-x"])
    snapshot = {"schema_version": 1, "gpuvet_version": "0.1.0", "kind": "snapshot", "created": "2026-01-01T00:00:00Z",
                "origin": {"type": "probe", "inputs": []}, "driver": {}}
    if result.ok:
        driver = re.search(r"<driver_version>([^<]+)<", result.stdout).group(1)
        cuda = re.search(r"<cuda_version>([^<]+)<", result.stdout).group(1)
        names = re.findall(r"<product_name>([^<]+)<", result.stdout)
        snapshot["driver"] = {"version": found(driver, "nvidia-smi-xml"), "cuda_max": found(cuda, "nvidia-smi-xml")}
        snapshot["gpus"] = found([{"index": i, "name": n} for i, n in enumerate(names)], "nvidia-smi-xml")
    else:
        snapshot["driver"] = {"version": failed(result.why())}
    print(json.dumps(snapshot))
    return 0
'''


def real_probe_available():
    return importlib.util.find_spec("gpuvet.probe.collect") is not None


class FleetEnv(object):
    def __init__(self, sshd, root, identity, known_hosts, closed_port, bundle_root):
        self.sshd = sshd
        self.root = root
        self.identity = identity
        self.known_hosts = known_hosts
        self.closed_port = closed_port
        self.bundle_root = bundle_root

    def host(self, role):
        port = self.closed_port if role == "closed" else self.sshd.ports[role]
        return "root@127.0.0.1:%d" % port


SLOW_SMI_SECONDS = "317.25"  # an odd duration, so the test finds exactly this sleep among the machine's processes


@pytest.fixture(scope="session")
def fleet_env(tmp_path_factory):
    sshd = H.find_sshd()
    if not sshd:
        pytest.skip("OpenSSH sshd not installed (run .ci/install-sshd.sh)")
    if not shutil.which("ssh-keygen"):
        pytest.skip("ssh-keygen not installed (run .ci/install-sshd.sh)")
    root = tmp_path_factory.mktemp("sshd")
    host_key = H.keygen(root / "host_key")
    wrong_key = H.keygen(root / "wrong_host_key")
    identity = H.keygen(root / "user_key")
    authorized = root / "authorized_keys"
    authorized.write_text((root / "user_key.pub").read_text())
    nobody = root / "authorized_keys_empty"
    nobody.write_text("")
    base = "/usr/bin:/bin"
    fake_a = H.fake_gpu_bin(root / "bin-a", "rtx-3090-1gpu_drv525.147.05.xml")
    fake_b = H.fake_gpu_bin(root / "bin-b", "tesla-t4-1gpu_drv515.105.01.xml")
    fake_c = H.fake_gpu_bin(root / "bin-c", "quadro-p2000-1gpu_drv525.125.06.xml", nvcc_fixture="cuda-12.5_V12.5.82.txt",
                            proc_version="open_565.57.01_ubuntu24.04_gcc13.3.txt")
    # nvidia-smi that never answers (a wedged GPU): the probe blocks on it until its deadline
    slow = H.fake_gpu_bin(root / "bin-slow", "rtx-3090-1gpu_drv525.147.05.xml")
    (slow / "nvidia-smi").write_text("#!/bin/sh\nexec /bin/sleep %s\n" % SLOW_SMI_SECONDS)
    roles = {
        "slowsmi": {"path": "%s:%s" % (slow, base)},
        "a1": {"path": "%s:%s" % (fake_a, base)},
        "a2": {"path": "%s:%s" % (fake_a, base)},
        "b": {"path": "%s:%s" % (fake_b, base)},
        "nopython": {"path": str(fake_c)},  # no python3 at all: the text fallback
        "hang": {"command": "/bin/sleep 30"},
        "authfail": {"path": "%s:%s" % (fake_a, base), "authorized_keys": nobody},
        "badkey": {"path": "%s:%s" % (fake_a, base)},
        "probefail": {"path": "%s:%s" % (H.fake_gpu_bin(
            root / "bin-crash", "rtx-3090-1gpu_drv525.147.05.xml",
            python3="#!/bin/sh\necho 'Traceback (most recent call last): boom' >&2\nexit 1\n"), base)},
    }
    if H.PY36.exists():
        roles["py36"] = {"path": "%s:%s" % (H.fake_gpu_bin(root / "bin-py36", "rtx-3090-1gpu_drv525.147.05.xml",
                                                           python3=H.PY36), base)}
    server = H.LoopbackSSHD(root, roles, authorized, host_key)
    try:
        server.start(sshd)
    except (RuntimeError, OSError) as exc:
        pytest.skip("cannot start sshd here: %s" % exc)
    known_hosts = root / "known_hosts"
    known_hosts.write_text("".join(
        server.known_hosts_line(role, wrong_key if role == "badkey" else None) for role in roles))
    closed_port = H.free_ports(1)[0]
    if real_probe_available():
        bundle_root = None
    else:
        bundle_root = root / "standin" / "gpuvet"
        shutil.copytree(str(H.REPO / "src" / "gpuvet" / "probe"), str(bundle_root / "probe"))
        shutil.copy(str(H.REPO / "src" / "gpuvet" / "__init__.py"), str(bundle_root / "__init__.py"))
        (bundle_root / "probe" / "collect.py").write_text(STANDIN_COLLECT)
    yield FleetEnv(server, root, identity, known_hosts, closed_port, bundle_root)
    server.stop()

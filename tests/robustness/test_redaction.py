"""Plant every kind of secret on a (fake-GPU) machine, run every command and format, grep every output for every
secret value. With --redact-host, the host name, IP addresses, GPU UUIDs and serial numbers are gone as well."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .conftest import FIXTURES, PYTHON, smi_env

# Distinct values so a hit names the leak. None of them is a substring of anything gpuvet prints by itself.
SECRETS = {
    "PIP_INDEX_URL": "https://alice:PipUrlTok3n@mirror.example/simple",
    "HF_TOKEN": "hf_HuggingSecret41",
    "WANDB_API_KEY": "wandbKey0123456789abcdef",
    "AWS_SECRET_ACCESS_KEY": "awsSecretAccess/Key+42",
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEY0042",
    "MY_SERVICE_TOKEN": "svcTok_Zz9981",
    "DB_PASSWORD": "dbPassw0rd!Hunter2",
    "SOME_API_KEY": "someApiKeyValue777",
}
PIP_CONF_SECRET = "ConfFileTok3nXYZ"
LEAK_VALUES = [v for v in SECRETS.values() if "://" not in v] + ["PipUrlTok3n", "alice:", PIP_CONF_SECRET]

HOSTNAME = "gpu-node-417.corp.example"
IP = "10.71.72.73"
XML = FIXTURES / "nvidia-smi-q-x/a100-sxm4-80gb-mig-1of4gpu_drv535.54.03.xml"
UUID = "GPU-513536b6-7d19-9063-b049-1e69664bb298"
SERIAL = "1650522003820"


def _markup_formats():
    from gpuvet.cli.formats import MARKUP_MODULES
    from gpuvet.report.blocks import BUILDERS

    return {f"{command}:{fmt}" for command in BUILDERS for fmt in MARKUP_MODULES}


@pytest.fixture(scope="module")
def env(smi_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("secrets")
    pip_conf = folder / "pip.conf"
    pip_conf.write_text("[global]\nindex-url = https://bob:%s@conf-mirror.example/simple\n"
                        "extra-index-url = https://carol:%s@extra.example/simple\n" % (PIP_CONF_SECRET, PIP_CONF_SECRET))
    settings = dict(SECRETS, PIP_CONFIG_FILE=str(pip_conf), MASTER_ADDR=IP, NCCL_SOCKET_IFNAME="eth0",
                    CUDA_VISIBLE_DEVICES="0", FAKE_SMI_XML=str(XML), HOME=str(folder))
    return smi_env(smi_dir, **settings)


@pytest.fixture(scope="module")
def log_file(tmp_path_factory):
    """A training log whose author ran `env` before the crash: every secret, the host, IP and GPU UUID inside."""
    path = tmp_path_factory.mktemp("log") / "train.log"
    dump = "\n".join("%s=%s" % item for item in SECRETS.items())
    path.write_text(
        "+ env\n%s\nPIP_CONFIG_FILE=/etc/pip.conf\nMASTER_ADDR=%s\nHOSTNAME=%s\n"
        "[rank0]: host %s (%s) using %s\n"
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "curl https://alice:PipUrlTok3n@mirror.example/simple failed, token=%s\n"
        % (dump, IP, HOSTNAME, HOSTNAME, IP, UUID, SECRETS["HF_TOKEN"]))
    return path


def _run(env, args, hostname=None):
    """gpuvet ARGS; with ``hostname``, in its own UTS namespace whose host name is set (root only)."""
    argv = [PYTHON, "-m", "gpuvet", *args]
    if hostname:
        argv = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', hostname, *argv]
    completed = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    assert b"Traceback" not in completed.stderr, completed.stderr.decode(errors="replace")
    assert completed.returncode in (0, 1, 3), completed.stderr.decode(errors="replace")
    return completed.stdout.decode("utf-8") + completed.stderr.decode("utf-8")


def _commands(log_file):
    commands = [("probe", "json"), ("probe", "text")]
    commands += [("check", fmt) for fmt in ("json", "text", "markdown", "html")]
    commands += [("diagnose", fmt) for fmt in ("json", "text", "markdown", "html")]
    runs = []
    for command, fmt in commands:
        if fmt in ("markdown", "html") and "%s:%s" % (command, fmt) not in _markup_formats():
            continue
        args = [command, "--format", fmt]
        if command == "probe":
            args.append("--no-binaries")
        elif command == "check":
            args += ["--no-network", "torch==2.1.2"]
        else:
            args.append(str(log_file))
        runs.append(args)
    return runs


def test_markup_formats_are_covered_when_they_exist():
    missing = [c + ":" + f for c in ("check", "diagnose") for f in ("markdown", "html")
               if c + ":" + f not in _markup_formats()]
    assert missing == [], "every markup format of check and diagnose is in the secret sweep"


def test_secrets_never_reach_any_output(env, log_file):
    for args in _commands(log_file):
        output = _run(env, args)
        leaks = [value for value in LEAK_VALUES if value in output]
        assert not leaks, "gpuvet %s leaked %s" % (" ".join(args), leaks)


def test_probe_keeps_the_names_and_the_mirror_host(env):
    """Redaction removes values, not the facts a reader needs: which variables are set, which mirror pip uses."""
    import json

    snapshot = json.loads(_run(env, ["probe", "--format", "json", "--no-binaries"]))
    pip = snapshot["pip"]["value"]
    assert "mirror.example/simple" in json.dumps(pip) or "conf-mirror.example/simple" in json.dumps(pip)
    assert "***" in json.dumps(pip)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root for a UTS namespace")
def test_redact_host_removes_identity_from_every_output(env, log_file):
    plain = _run(env, ["probe", "--format", "json", "--no-binaries"], hostname=HOSTNAME)
    assert HOSTNAME in plain and UUID in plain and SERIAL in plain  # the planted identity is really there
    for args in _commands(log_file):
        output = _run(env, args + ["--redact-host"], hostname=HOSTNAME)
        leaks = [value for value in [HOSTNAME, IP, UUID, SERIAL, UUID[4:]] + LEAK_VALUES if value in output]
        assert not leaks, "gpuvet %s --redact-host leaked %s" % (" ".join(args), leaks)

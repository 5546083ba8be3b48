"""Plant every kind of secret on a (fake-GPU) machine, run every command and format, grep every output for every
secret value. With --redact-host, the host name, IP addresses, GPU UUIDs and serial numbers are gone as well."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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
    from gpuvet.cli.choices import Format
    from gpuvet.report.blocks import BUILDERS

    # the markup formats cli/formats.render_document renders through report/blocks.py's builders
    return {f"{command}:{fmt.value}" for command in BUILDERS for fmt in (Format.MARKDOWN, Format.HTML)}


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


# --- issue #14: every secret shape, in every input kind, grepped in every format and in -o files -----------------

WANDB_HEX = "0123456789abcdef0123456789abcdef0a1b2c3d"
SHAPES = {  # value -> how it is planted; every value is distinct so a hit names the leak
    "QueryTok3nValue99": "index url ?token=",
    "glpat-PrivTok3nGitLab0042": "pip.conf ?private_token=",
    "p@ss@Word9": "password containing @",
    "hf_PlantedHuggingFace00Tok3n": "HF_TOKEN= in a log",
    "WandbFlagValue12345": "--wandb-key VALUE",
    "hf_FlagHfTok3n000999": "--hf_token VALUE",
    "tokWordValue4242xyz": "token VALUE",
    WANDB_HEX: "40-hex W&B key",
    "ghp_GithubPlanted0123456789abcdef": "GitHub token",
    "github_pat_11PLANTED0123456789_abcdefghij": "GitHub fine-grained token",
    "sk-proj-OpenAiPlanted0123456789": "OpenAI-style key",
    "AKIAPLANTED000000042": "AWS access key id",
    "xoxb-1234567890-PlantedSlack": "Slack token",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.PlantedSignature42": "JWT",
    "BearerPlanted.Tok3n-000": "Authorization: Bearer",
    "SigPlanted0042": "?X-Amz-Signature=",
    "EnvSecretValue0042": "*_SECRET= in the environment",
}


@pytest.fixture(scope="module")
def shape_env(smi_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("shapes")
    pip_conf = folder / "pip.conf"
    pip_conf.write_text(
        "[global]\n"
        "index-url = https://gitlab.example/api/v4/projects/7/packages/pypi/simple?private_token=glpat-PrivTok3nGitLab0042\n"
        "extra-index-url = https://dave:p@ss@Word9@at-mirror.example/simple\n")
    settings = dict(PIP_CONFIG_FILE=str(pip_conf), HOME=str(folder), FAKE_SMI_XML=str(XML),
                    PIP_EXTRA_INDEX_URL="https://pypi.example/simple?token=QueryTok3nValue99&x=1",
                    UV_INDEX_URL="https://s3.example/simple?X-Amz-Signature=SigPlanted0042",
                    NCCL_SECRET="EnvSecretValue0042", CUDA_VISIBLE_DEVICES="0")
    return smi_env(smi_dir, **settings)


@pytest.fixture(scope="module")
def shape_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("shapelog") / "train.log"
    path.write_text(
        "+ export HF_TOKEN=hf_PlantedHuggingFace00Tok3n\n"
        "+ python train.py --wandb-key WandbFlagValue12345 --hf_token hf_FlagHfTok3n000999 --lr 3e-4\n"
        "+ huggingface-cli upload --token tokWordValue4242xyz; wandb login %s\n"
        "export WANDB_API_KEY=%s GH=ghp_GithubPlanted0123456789abcdef PAT=github_pat_11PLANTED0123456789_abcdefghij\n"
        "OPENAI=sk-proj-OpenAiPlanted0123456789 AWS=AKIAPLANTED000000042 SLACK=xoxb-1234567890-PlantedSlack\n"
        "curl -H 'Authorization: Bearer BearerPlanted.Tok3n-000' -H 'X-Jwt: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.PlantedSignature42'\n"
        "pip install -i https://pypi.example/simple?token=QueryTok3nValue99 --extra-index-url https://dave:p@ss@Word9@at-mirror.example/simple torch\n"
        "node-77a:4242:4343 [0] NCCL INFO Bootstrap : Using eth0:10.9.8.7<0>\n"
        "node-77a:4242:4344 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:fe80::1a2b:3c4d:5e6f:7a8b%%ib0<0>\n"
        "GPU Serial Number : 1650522003999\n"
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        % (WANDB_HEX, WANDB_HEX))
    return path


def _every_run(log_file):
    for args in _commands(log_file):
        yield args
    yield ["recommend", "--format", "json", "torch"]
    yield ["recommend", "--format", "markdown", "torch"]


def _leaks(output):
    leaks = ["%s (%s)" % (value, how) for value, how in SHAPES.items() if value in output]
    return leaks + [fragment for fragment in ("Word9@", "p@ss") if fragment in output]


# One run per command writes its report with -o as well: the file must hold no secret either. The writer does not
# depend on the format, so one format per command is enough there; every format is read on stdout.
WRITTEN = {("probe", "text"), ("check", "html"), ("diagnose", "markdown"), ("recommend", "json")}


def test_every_secret_shape_is_gone_from_every_format_and_file(shape_env, shape_log, tmp_path):
    for number, args in enumerate(_every_run(shape_log)):
        output = _run(shape_env, args)
        assert not _leaks(output), "gpuvet %s leaked %s" % (" ".join(args), _leaks(output))
        if (args[0], args[2]) in WRITTEN:
            target = tmp_path / ("out-%d" % number)
            printed = _run(shape_env, args + ["-o", str(target)])
            written = target.read_text()
            assert written, "gpuvet %s -o wrote nothing" % " ".join(args)
            assert not _leaks(printed + written), "gpuvet %s -o leaked %s" % (" ".join(args), _leaks(printed + written))


def test_evidence_keeps_the_names_around_the_values(shape_env, shape_log):
    """Values go, names stay: the evidence still says which flag or variable carried a secret."""
    output = _run(shape_env, ["diagnose", "--format", "json", str(shape_log)])
    assert "no kernel image" in output
    for kept in ("--wandb-key ***", "--hf_token ***", "HF_TOKEN=***"):
        if kept.split()[0].split("=")[0] in output:
            assert kept in output, kept


def test_redact_host_removes_nccl_hosts_ipv6_and_serials_from_evidence(shape_env, shape_log):
    import json

    document = json.loads(_run(shape_env, ["diagnose", "--format", "json", "--redact-host", str(shape_log)]))
    text = json.dumps(document)
    for value in ("node-77a", "10.9.8.7", "fe80::1a2b:3c4d:5e6f:7a8b", "1650522003999"):
        assert value not in text, value


def test_the_one_pass_directly():
    """The function every output goes through, on each shape (fast, and names the exact miss)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    from gpuvet.probe.redact import redact

    lines = {
        "https://h.example/simple?token=QueryTok3nValue99&x=1": "QueryTok3nValue99",
        "https://gitlab.example/simple?private_token=PrivTok": "PrivTok",
        "https://u:p@ss@Word9@mirror.example/simple": "Word9",
        "HF_TOKEN=hf_PlantedHuggingFace00Tok3n": "Planted",
        "--wandb-key WandbFlagValue12345": "WandbFlag",
        "--hf_token hf_FlagHfTok3n000999": "FlagHf",
        "--api_key=Abc123456789": "Abc123",
        "token tokWordValue4242xyz": "tokWord",
        "WANDB_API_KEY=" + WANDB_HEX: WANDB_HEX,
        "wandb login " + WANDB_HEX: WANDB_HEX,
        "MY_SERVICE_TOKEN=abc DB_PASSWORD=hunter2 APP_SECRET=s3": "hunter2",
        "Authorization: Bearer BearerPlanted.Tok3n-000": "BearerPlanted",
    }
    for line, secret in lines.items():
        assert secret not in redact(line), line
    assert redact("--max-tokens 512 --tokenizer gpt2 cuDNN 9.1.0.70") == "--max-tokens 512 --tokenizer gpt2 cuDNN 9.1.0.70"
    assert redact("HF_TOKEN=hf_x1234567890") == "HF_TOKEN=***"
    host = redact("node-77a:1:2 [0] NCCL INFO up on node-77a\nSerial Number : 1650522003999", host=True)
    assert "node-77a" not in host and "1650522003999" not in host and "NCCL INFO" in host

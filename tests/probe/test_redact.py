from gpuvet.probe.redact import is_secret_name, redact_env, redact_host, redact_url


def test_secret_names_are_precise():
    for name in ("HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "GITHUB_TOKEN", "PIP_PASSWORD",
                 "OPENAI_API_KEY", "MY_SECRET", "DB_PASSWD", "HUGGING_FACE_HUB_TOKEN"):
        assert is_secret_name(name), name
    for name in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "NCCL_DEBUG", "PIP_INDEX_URL",
                 "LD_LIBRARY_PATH", "PWD", "KEYBOARD_LAYOUT", "MONKEY_PATCH"):
        assert not is_secret_name(name), name


def test_url_credentials_removed_everywhere_in_a_value():
    assert redact_url("https://user:tok3n@pypi.corp/simple") == "https://***@pypi.corp/simple"
    assert redact_url("PyPI (pip's default index)") == "PyPI (pip's default index)"
    both = redact_url("https://a:b@x/simple https://c@y/simple")
    assert "a:b" not in both and "c@" not in both and both.count("***@") == 2


def test_redact_env_keeps_names_drops_values():
    cleaned = redact_env({"HF_TOKEN": "hf_abc", "CUDA_VISIBLE_DEVICES": "0,1",
                          "PIP_EXTRA_INDEX_URL": "https://me:pw@mirror/simple"})
    assert cleaned == {"HF_TOKEN": "***", "CUDA_VISIBLE_DEVICES": "0,1",
                       "PIP_EXTRA_INDEX_URL": "https://***@mirror/simple"}


def test_redact_host_removes_identity_but_keeps_versions():
    snapshot = {
        "origin": {"type": "probe", "host": "node17"},
        "host": {"hostname": {"status": "found", "value": "node17", "source": "socket"}},
        "gpus": {"status": "found", "source": "nvml", "value": [
            {"uuid": "GPU-8ca2ab7a-3b7c-d8cf-9ec1-0123456789ab", "serial": "1650522003820", "name": "NVIDIA H100"}]},
        "cudnn": {"status": "found", "source": "library", "value": [{"version": "9.1.0.70", "path": "/home/node17/lib"}]},
        "env": {"status": "found", "source": "env", "value": {"MASTER_ADDR": "10.1.2.3", "NCCL_X": "fe80::1:2:3"}},
    }
    redacted = redact_host(snapshot)
    text = repr(redacted)
    for secret in ("node17", "8ca2ab7a", "1650522003820", "10.1.2.3", "fe80::1:2:3"):
        assert secret not in text, secret
    assert redacted["cudnn"]["value"][0]["version"] == "9.1.0.70"
    assert redacted["host"]["hostname"]["status"] == "missing"
    assert snapshot["origin"]["host"] == "node17"  # the input is not modified


def test_free_text_redaction_of_a_pasted_log():
    from gpuvet.probe.redact import redact_text

    line = (
        "pip install -i https://alice:s3cr3t@mirror.example/simple torch; export HF_TOKEN=hf_" + "x" * 30
        + " WANDB_API_KEY: abcdef; Authorization: Bearer eyJhbGciOi; host 10.1.2.3 GPU-12345678-1234-1234-1234-123456789abc"
    )
    cleaned = redact_text(line)
    for secret in ("s3cr3t", "alice", "hf_" + "x" * 30, "abcdef", "eyJhbGciOi"):
        assert secret not in cleaned
    assert "10.1.2.3" in cleaned  # host identity stays unless asked
    shared = redact_text(line, host=True)
    assert "10.1.2.3" not in shared and "12345678-1234" not in shared

"""conda's channel configuration as conda documents it, and its built-in defaults asked of conda, never written here.

Sources: https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/use-condarc.html ("Searching for
.condarc": the search path and its order; "Conflict merging strategy": lists merge, dictionaries merge, primitives
clobber; "Precedence": CONDA_<NAME> variables over every file), .../configuration/settings.html (channels,
default_channels, channel_alias, custom_channels) and https://docs.conda.io/projects/conda/en/latest/configuration.html
("env var string delimiter: ','" for channels and default_channels). `conda config --show --json` writes
channel_alias as conda's Channel.dump() (scheme, location, ...): conda/models/channel.py, conda/cli/main_config.py.
"""

from __future__ import annotations

import json
import os
import stat
import sys

from gpuvet.probe.python_env import conda_channel_config, conda_config_files, read_condarc
from gpuvet.sources.net_targets import server_endpoints
from gpuvet.sources.package_indexes import conda_defaults

NO_CONDA = {"PATH": os.devnull}  # no conda on PATH, no CONDA_EXE: conda cannot be asked


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_search_path_is_condas_order(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = str(tmp_path / "home")
    _write(tmp_path / "root" / "condarc.d" / "b.yaml", "")
    _write(tmp_path / "root" / "condarc.d" / "a.yml", "")
    _write(tmp_path / "root" / "condarc.d" / "notes.txt", "")
    files = conda_config_files({"CONDA_ROOT": str(tmp_path / "root"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                                "CONDA_PREFIX": str(tmp_path / "env"), "CONDARC": str(tmp_path / "rc.yml")})
    order = [files.index(p) for p in (
        "/etc/conda/.condarc", "/var/lib/conda/condarc", str(tmp_path / "root" / ".condarc"),
        str(tmp_path / "root" / "condarc.d" / "a.yml"), str(tmp_path / "root" / "condarc.d" / "b.yaml"),
        str(tmp_path / "xdg" / "conda" / ".condarc"), os.path.join(home, ".config", "conda", "condarc"),
        os.path.join(home, ".conda", ".condarc"), os.path.join(home, ".condarc"),
        str(tmp_path / "env" / ".condarc"), str(tmp_path / "rc.yml"))]
    assert order == sorted(order)  # $CONDA_PREFIX after ~/.condarc, $CONDARC last
    assert str(tmp_path / "root" / "condarc.d" / "notes.txt") not in files


def test_reader_takes_block_flow_and_map_forms():
    text = ("channels: [defaults, 'conda-forge']\nchannel_alias: \"https://alias.example.invalid/\"  # ours\n"
            "default_channels:\n  - https://mirror.example.invalid/pkgs/main\n  - https://mirror.example.invalid/pkgs/r\n"
            "custom_channels:\n  pytorch: https://mirror.example.invalid/cloud\n  nvidia: 'https://n.example.invalid'\n"
            "ssl_verify: false\n")
    assert read_condarc(text) == {
        "channels": ["defaults", "conda-forge"], "channel_alias": "https://alias.example.invalid/",
        "default_channels": ["https://mirror.example.invalid/pkgs/main", "https://mirror.example.invalid/pkgs/r"],
        "custom_channels": {"pytorch": "https://mirror.example.invalid/cloud", "nvidia": "https://n.example.invalid"}}
    assert read_condarc("custom_channels: {pytorch: https://m.example.invalid/cloud}\n") == {
        "custom_channels": {"pytorch": "https://m.example.invalid/cloud"}}


def test_lists_and_maps_merge_values_clobber_and_variables_win(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    _write(tmp_path / ".condarc", "channels:\n  - conda-forge\n  - defaults\nchannel_alias: https://home.example.invalid\n"
                                  "custom_channels:\n  pytorch: https://home.example.invalid/cloud\n"
                                  "  nvidia: https://home.example.invalid/nv\n")
    _write(tmp_path / "env" / ".condarc", "channels:\n  - pytorch\nchannel_alias: https://env.example.invalid\n"
                                          "custom_channels:\n  pytorch: https://env.example.invalid/cloud\n")
    environ = {"CONDA_PREFIX": str(tmp_path / "env"), "HOME": str(tmp_path)}
    config = conda_channel_config(environ)
    assert config["channels"] == ["pytorch", "conda-forge", "defaults"]  # the later file's entries first
    assert config["channel_alias"] == "https://env.example.invalid"
    assert config["custom_channels"] == {"pytorch": "https://env.example.invalid/cloud",
                                         "nvidia": "https://home.example.invalid/nv"}
    assert config["config_files"] == [str(tmp_path / ".condarc"), str(tmp_path / "env" / ".condarc")]
    config = conda_channel_config(dict(environ, CONDA_CHANNELS="nvidia, defaults", CONDA_CHANNEL_ALIAS="https://v.invalid",
                                       CONDA_DEFAULT_CHANNELS="https://d.invalid/main,https://d.invalid/r"))
    assert config["channels"] == ["nvidia", "defaults", "pytorch", "conda-forge"]
    assert config["channel_alias"] == "https://v.invalid"
    assert config["default_channels"] == ["https://d.invalid/main", "https://d.invalid/r"]


def test_channels_resolve_through_condas_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    _write(tmp_path / ".condarc", "channels: [defaults, pytorch, nvidia, 'file:///opt/local']\n"
                                  "default_channels: [https://mirror.example.invalid/pkgs/main]\n"
                                  "custom_channels:\n  pytorch: https://mirror.example.invalid/cloud/\n"
                                  "channel_alias: https://alias.example.invalid/\n")
    targets, notes = server_endpoints(dict(NO_CONDA, HOME=str(tmp_path)), daemon_json=os.devnull)
    conda = [(t.target, t.role) for t in targets if t.kind == "conda-channel" and t.role != "mirror"]
    assert conda == [("https://mirror.example.invalid/pkgs/main", "configured"),
                     ("https://mirror.example.invalid/cloud/pytorch", "configured"),
                     ("https://alias.example.invalid/nvidia", "configured")]
    assert notes == []
    assert {t.mirror_of for t in targets if t.kind == "conda-channel" and t.role == "mirror"} == {"anaconda"}


def test_without_configuration_or_conda_the_defaults_are_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    targets, notes = server_endpoints(dict(NO_CONDA, HOME=str(tmp_path)), daemon_json=os.devnull)
    assert [t.role for t in targets if t.kind == "conda-channel"] == ["mirror", "mirror"]  # the known mirrors only
    assert [(n.id, n.params) for n in notes] == [("net.conda_unknown", {"channels": "defaults, conda-forge"})]
    # what conda answers is used as it is
    asked = {"channel_alias": "https://a.example.invalid", "default_channels": ["https://d.example.invalid/main"]}
    targets, notes = server_endpoints(dict(NO_CONDA, HOME=str(tmp_path)), daemon_json=os.devnull, conda=asked)
    assert [(t.target, t.role) for t in targets if t.kind == "conda-channel" and t.role != "mirror"] == [
        ("https://d.example.invalid/main", "configured"), ("https://a.example.invalid/conda-forge", "default")]
    assert notes == []


def _fake_conda(tmp_path, body):
    script = _write(tmp_path / "bin" / "conda", "#!%s\n%s\n" % (sys.executable, body))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_conda_is_asked_for_its_defaults(tmp_path):
    # the shape `conda config --show channel_alias default_channels --json` writes: channel_alias is a Channel dump
    answer = {"channel_alias": {"auth": None, "location": "alias.example.invalid", "name": None, "package_filename": None,
                                "platform": None, "scheme": "https", "token": None},
              "default_channels": ["https://d.example.invalid/pkgs/main", "https://d.example.invalid/pkgs/r"]}
    exe = _fake_conda(tmp_path, "import json, sys\nassert sys.argv[1:] == "
                                "['config', '--show', 'channel_alias', 'default_channels', '--json']\n"
                                "print(json.dumps(%r))" % (answer,))
    assert conda_defaults({"CONDA_EXE": exe}) == {
        "channel_alias": "https://alias.example.invalid",
        "default_channels": ["https://d.example.invalid/pkgs/main", "https://d.example.invalid/pkgs/r"]}
    assert conda_defaults({"PATH": str(tmp_path / "bin")})["channel_alias"] == "https://alias.example.invalid"


def test_a_conda_that_hangs_or_fails_leaves_the_defaults_unknown(tmp_path):
    assert conda_defaults({"CONDA_EXE": _fake_conda(tmp_path, "import time\ntime.sleep(30)")}, timeout=0.5) == {}
    assert conda_defaults({"CONDA_EXE": _fake_conda(tmp_path, "import sys\nsys.exit(1)")}) == {}
    assert conda_defaults({"CONDA_EXE": _fake_conda(tmp_path, "print('not json')")}) == {}
    assert conda_defaults(NO_CONDA) == {}
    assert json.dumps(conda_defaults({"CONDA_EXE": str(tmp_path / "missing")})) == "{}"

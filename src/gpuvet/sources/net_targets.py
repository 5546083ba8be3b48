"""What ``gpuvet net`` tests: the targets named on the command line, and on a server this machine's own endpoints.

Configured endpoints come from each tool's own configuration, read here (nothing is written):

- pip: its configuration files and ``PIP_INDEX_URL``/``PIP_EXTRA_INDEX_URL`` (what ``pip config list`` shows; read
  by the probe's ``pip_fact``), else pip's own default index asked of the installed pip;
- conda: ``channels``/``default_channels``/``channel_alias``/``custom_channels`` of the ``.condarc`` files and
  ``CONDA_*`` variables conda reads (read by the probe's ``conda_channel_config``), else conda's own defaults asked
  of the installed conda (``gpuvet.sources.package_indexes.conda_defaults``); with no conda to ask they are unknown, and
  a note says which channels were not tested;
- Hugging Face: ``HF_ENDPOINT``, else the knowledge base's default;
- container registries: ``registry-mirrors`` of ``/etc/docker/daemon.json``, plus Docker Hub.

Known mirrors, the PyTorch wheel index, ModelScope and GitHub are knowledge-base records (kb/data/mirrors.toml).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from gpuvet.errors import InputError
from gpuvet.models import Message, msg
from gpuvet.sources.netprobe import Target

CONDA_SAMPLE = "/noarch/repodata.json"
DOCKER_DAEMON_JSON = "/etc/docker/daemon.json"


def host_target(text: str) -> Target:
    """``HOST[:PORT]`` (``[v6]:PORT`` for IPv6) -> a host target; port 22 (SSH) by default."""
    value = text.strip()
    host, port = value, 22
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        if rest.startswith(":"):
            port = _port(rest[1:], text)
    elif value.count(":") == 1:
        host, _, raw = value.partition(":")
        port = _port(raw, text)
    if not host:
        raise InputError.said("errors.net_host", text=repr(text))
    return Target(target="%s:%d" % (host, port), kind="host", host=host, port=port, named=True, role="named")


def _port(raw: str, text: str) -> int:
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise InputError.said("errors.net_port", text=repr(text))
    return port


def url_target(url: str, kind: str = "pip-index") -> Target:
    if not url.startswith(("http://", "https://")):
        raise InputError.said("errors.net_url", url=repr(url))
    return Target(target=url, kind=kind, url=url, named=True, role="named", family="pypi")


def _pip_targets(environ: Mapping[str, str], mirrors: Any) -> List[Target]:
    from gpuvet.probe import packages, python_env
    from gpuvet.sources.package_indexes import pip_default_index

    fact = python_env.pip_fact(packages.site_dirs(), environ)
    value = fact.get("value") if isinstance(fact, dict) and fact.get("status") == "found" else {}
    value = value if isinstance(value, dict) else {}
    urls = [value.get("index_url") or pip_default_index()] + list(value.get("extra_index_urls") or [])
    targets = [Target(target=u, kind="pip-index", url=u, role="configured", family="pypi") for u in _unique(urls)]
    for endpoint in mirrors.mirrors_of("pypi"):
        targets.append(_endpoint_target(endpoint, role="mirror"))
    return targets


def _endpoint_target(endpoint: Any, role: str = "default", url: Optional[str] = None) -> Target:
    shown = endpoint.url if endpoint.kind == "registry" else (url or endpoint.url)  # a registry's probe adds /v2/
    return Target(target=shown, kind=endpoint.kind, url=url or endpoint.url, role=role,
                  family=endpoint.family, mirror_of=endpoint.mirror_of, endpoint_id=endpoint.id,
                  sample_path=CONDA_SAMPLE if endpoint.kind == "conda-channel" else "",
                  extra={"default_channels": list(endpoint.default_channels),
                         "custom_channels": endpoint.custom_channels} if endpoint.kind == "conda-channel" else {})


def _conda_targets(environ: Mapping[str, str], mirrors: Any, asked: Optional[Mapping[str, Any]] = None,
                   timeout: Optional[float] = None) -> Tuple[List[Target], List[Message]]:
    """The channels conda installs from here, as conda resolves them (docs: settings.html, ``channels``,
    ``default_channels``, ``channel_alias``, ``custom_channels``): ``defaults`` is the ``default_channels`` list, a
    name is ``custom_channels[name]/name`` or ``channel_alias/name``, a URL is itself. Values no configuration sets
    are conda's built-in defaults, asked of conda (``asked``, else :func:`gpuvet.sources.package_indexes.conda_defaults`);
    with no conda to ask they are unknown, and the channels that need them are named in a note, not guessed."""
    from gpuvet.probe import python_env

    config = python_env.conda_channel_config(environ)
    answer: Dict[str, Any] = {}

    def setting(key: str) -> Any:
        if key in config:
            return config[key]
        if "asked" not in answer:
            from gpuvet.sources.package_indexes import CONDA_ASK_TIMEOUT, conda_defaults

            answer["asked"] = dict(asked) if asked is not None else conda_defaults(
                environ, CONDA_ASK_TIMEOUT if timeout is None else timeout)
        return answer["asked"].get(key)

    custom = config.get("custom_channels") or {}
    unknown: List[str] = []

    def resolve(name: str) -> List[str]:
        if "://" in name:
            return [name]
        if name in custom:
            return [str(custom[name]).rstrip("/") + "/" + name]
        alias = setting("channel_alias")
        if alias:
            return [str(alias).rstrip("/") + "/" + name]
        unknown.append(name)
        return []

    urls: List[str] = []
    for channel in config.get("channels") or ["defaults"]:
        if channel != "defaults":
            urls += resolve(channel)
        elif setting("default_channels"):
            for entry in setting("default_channels"):
                urls += resolve(entry)
        else:
            unknown.append("defaults")
    targets = []
    for url in _unique(u for u in urls if u.startswith(("http://", "https://"))):
        known = next((e for e in mirrors.endpoints if e.url.rstrip("/") == url.rstrip("/")), None)
        targets.append(Target(target=url, kind="conda-channel", url=url, role="configured",
                              family=known.family if known and known.family else "anaconda",
                              mirror_of=known.mirror_of if known else "", endpoint_id=known.id if known else "",
                              sample_path=CONDA_SAMPLE))
    if not config.get("channels"):  # conda-forge, where most CUDA builds live, is tested too unless channels are set
        targets += [Target(target=url, kind="conda-channel", url=url, role="default", family="anaconda",
                           sample_path=CONDA_SAMPLE) for url in resolve("conda-forge") if url not in urls]
    for endpoint in mirrors.mirrors_of("anaconda"):
        targets.append(_endpoint_target(endpoint, role="mirror"))
    notes = [msg("net.conda_unknown", channels=", ".join(_unique(unknown)))] if unknown else []
    return targets, notes


def docker_registry_mirrors(path: str = DOCKER_DAEMON_JSON) -> List[str]:
    from gpuvet.probe.files import ReadError, read_text

    try:  # regular files only, bounded: a FIFO put there must not hold gpuvet net
        document = json.loads(read_text(path))
    except (ReadError, ValueError, RecursionError):
        return []
    found = document.get("registry-mirrors") if isinstance(document, dict) else None
    return [str(u) for u in found if isinstance(u, str)] if isinstance(found, list) else []


def server_targets(environ: Optional[Mapping[str, str]] = None, mirrors: Any = None,
                   daemon_json: str = DOCKER_DAEMON_JSON, conda: Optional[Mapping[str, Any]] = None) -> List[Target]:
    """Every endpoint this server installs or downloads from, and the known mirrors of each (for the fixes)."""
    return server_endpoints(environ, mirrors, daemon_json, conda)[0]


def server_endpoints(environ: Optional[Mapping[str, str]] = None, mirrors: Any = None,
                     daemon_json: str = DOCKER_DAEMON_JSON, conda: Optional[Mapping[str, Any]] = None,
                     conda_timeout: Optional[float] = None) -> Tuple[List[Target], List[Message]]:
    """:func:`server_targets` and the notes on what could not be tested (conda channels whose location only an
    absent conda could say). ``conda``: conda's own defaults when already known (tests), else asked of conda, for at
    most ``conda_timeout`` seconds (``gpuvet.sources.package_indexes.CONDA_ASK_TIMEOUT`` when None)."""
    environ = os.environ if environ is None else environ
    if mirrors is None:
        from gpuvet import kb

        mirrors = kb.load().mirrors()
    targets = _pip_targets(environ, mirrors)
    for endpoint in mirrors.defaults():
        if endpoint.kind == "wheel-index":
            targets.append(_endpoint_target(endpoint))
    conda_targets, notes = _conda_targets(environ, mirrors, conda, conda_timeout)
    targets += conda_targets
    for endpoint in mirrors.defaults():
        if endpoint.kind == "model-hub":
            configured = environ.get(endpoint.env) if endpoint.env else None
            targets.append(_endpoint_target(endpoint, role="configured" if configured else "default",
                                            url=configured or None))
            targets += [_endpoint_target(m, role="mirror") for m in mirrors.mirrors_of(endpoint.family)]
        elif endpoint.kind == "git":
            targets.append(_endpoint_target(endpoint))
    for endpoint in mirrors.defaults():
        if endpoint.kind == "registry":
            targets.append(_endpoint_target(endpoint))
            for url in docker_registry_mirrors(daemon_json):
                targets.append(Target(target=url, kind="registry", url=url.rstrip("/") + "/v2/", role="configured",
                                      mirror_of=endpoint.family))
            targets += [_endpoint_target(m, role="mirror", url=m.url.rstrip("/") + "/v2/")
                        for m in mirrors.mirrors_of(endpoint.family)]
    return _dedupe(targets), notes


def _unique(urls: Iterable[Any]) -> List[str]:
    seen: List[str] = []
    for url in urls:
        if isinstance(url, str) and url.strip() and url.strip() not in seen:
            seen.append(url.strip())
    return seen


def _dedupe(targets: Sequence[Target]) -> List[Target]:
    kept: Dict[str, Target] = {}
    for target in targets:
        key = (target.url or target.target).rstrip("/")
        if key not in kept:  # the first (configured) wins over the same URL as a known mirror
            kept[key] = target
    return list(kept.values())

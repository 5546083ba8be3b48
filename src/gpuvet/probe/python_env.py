"""The Python that runs the probe, its pip configuration (index URLs, credentials removed) and conda, if any.

Nothing is executed: pip's version comes from its dist-info, conda's from conda-meta, so a slow conda or a pip
that hangs on the network cannot stall the probe.
"""

import os
import platform
import sys

from gpuvet.probe import facts
from gpuvet.probe.files import list_dir, try_read
from gpuvet.probe.redact import redact_url


def python_fact():
    base = getattr(sys, "base_prefix", sys.prefix)
    return facts.found({
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "venv": sys.prefix != base,
        "abi": sys.implementation.cache_tag if hasattr(sys, "implementation") else None,
    }, "python")


def pip_config_files(environ=None):
    """pip's configuration files in pip's own order (later ones override earlier ones)."""
    environ = os.environ if environ is None else environ
    home = os.path.expanduser("~")
    files = []
    for folder in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep):
        files.append(os.path.join(folder, "pip", "pip.conf"))
    files.append("/etc/pip.conf")
    files.append(os.path.join(home, ".pip", "pip.conf"))
    files.append(os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "pip", "pip.conf"))
    files.append(os.path.join(sys.prefix, "pip.conf"))
    if environ.get("PIP_CONFIG_FILE"):
        files.append(environ["PIP_CONFIG_FILE"])
    return files


def pip_fact(site_dirs, environ=None):
    environ = os.environ if environ is None else environ
    version = None
    for site in site_dirs:
        for entry in list_dir(site):
            if entry.startswith("pip-") and entry.endswith(".dist-info"):
                version = entry[len("pip-"): -len(".dist-info")]
                break
        if version:
            break
    index_url = None
    extra = []  # type: list[str]
    used = []
    problems = []
    for path in pip_config_files(environ):
        if not os.path.exists(path):
            continue
        text = try_read(path, limit=256 * 1024)
        if text is None:
            problems.append("%s: not readable" % path)
            continue
        import configparser  # only where a pip configuration file exists: most probes never parse one

        parser = configparser.RawConfigParser()
        try:
            parser.read_string(text, source=path)
        except configparser.Error as exc:
            problems.append("%s: %s" % (path, str(exc).splitlines()[0]))
            continue
        used.append(path)
        for section in ("global", "install", "download"):
            if parser.has_option(section, "index-url"):
                index_url = parser.get(section, "index-url").strip()
            if parser.has_option(section, "extra-index-url"):
                extra = parser.get(section, "extra-index-url").split()
    if environ.get("PIP_INDEX_URL"):
        index_url = environ["PIP_INDEX_URL"].strip()
    if environ.get("PIP_EXTRA_INDEX_URL"):
        extra = environ["PIP_EXTRA_INDEX_URL"].split()
    value = {
        "version": version,
        "index_url": redact_url(index_url) if index_url else None,
        "extra_index_urls": [redact_url(url) for url in extra],
        "config_files": used,
    }
    if problems:
        value["config_errors"] = problems
    if version is None and not used and index_url is None:
        return facts.missing("pip is not installed in this Python")
    return facts.found(value, "pip-metadata")


def conda_fact(environ=None):
    environ = os.environ if environ is None else environ
    prefix = environ.get("CONDA_PREFIX")
    conda_exe = environ.get("CONDA_EXE")
    base = None
    if conda_exe:
        base = os.path.dirname(os.path.dirname(conda_exe))
    elif os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        prefix = prefix or sys.prefix
        base = sys.prefix
    if not prefix and not base:
        return facts.missing("no conda: CONDA_PREFIX and CONDA_EXE unset, no conda-meta in sys.prefix")
    version = None
    for entry in list_dir(os.path.join(base, "conda-meta")) if base else []:
        # conda-24.1.2-py311h06a4308_0.json
        if entry.startswith("conda-") and entry.endswith(".json") and entry[6:7].isdigit():
            version = entry[len("conda-"):].split("-")[0]
            break
    return facts.found({
        "version": version,
        "active_env": environ.get("CONDA_DEFAULT_ENV") or (os.path.basename(prefix) if prefix else None),
        "prefix": prefix,
        "base": base,
        "python_in_env": bool(prefix and os.path.realpath(sys.prefix) == os.path.realpath(prefix)),
    }, "conda-meta" if version else "env")

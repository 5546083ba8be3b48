"""The Python that runs the probe, its pip configuration (index URLs, credentials removed) and conda, if any.

Nothing is executed: pip's version comes from its dist-info, conda's from conda-meta, so a slow conda or a pip
that hangs on the network cannot stall the probe.
"""

import os
import sys

from gpuvet.probe import facts
from gpuvet.probe.files import list_dir, try_read
from gpuvet.probe.redact import redact_url

# sys.implementation.name -> platform.python_implementation(), for the interpreters whose sys.version platform parses
# by its first word
_IMPLEMENTATIONS = {"cpython": "CPython", "pypy": "PyPy"}


def python_version_and_implementation():
    """``(platform.python_version(), platform.python_implementation())``. On CPython and PyPy, platform's version is
    the first word of sys.version ("3.11.7", "3.13.0rc1", "3.14.0a1+"), padded to three parts; importing platform for
    it cost ~1.2 ms of every probe, so platform answers only for other interpreters."""
    name = getattr(getattr(sys, "implementation", None), "name", None)
    if name in _IMPLEMENTATIONS:
        version = sys.version.split()[0]
        if version.count(".") == 1:
            version += ".0"
        return version, _IMPLEMENTATIONS[name]
    import platform

    return platform.python_version(), platform.python_implementation()


def free_threaded():
    """True on a free-threaded CPython (PEP 703: python3.13t, 3.14t), whose ABI is its own (cp313t): wheels for the
    regular build, abi3 ones included, do not install there. The build configuration says it (Py_GIL_DISABLED, what
    packaging.tags reads too), not sys._is_gil_enabled(), which answers whether the GIL is on right now (PYTHON_GIL=1
    re-enables it on a free-threaded build, whose ABI stays cp313t). Before 3.13 there is no such build, and no import."""
    if sys.version_info < (3, 13):
        return False
    import sysconfig

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def python_fact():
    base = getattr(sys, "base_prefix", sys.prefix)
    version, implementation = python_version_and_implementation()
    return facts.found({
        "version": version,
        "implementation": implementation,
        "executable": sys.executable,
        "prefix": sys.prefix,
        "venv": sys.prefix != base,
        "abi": sys.implementation.cache_tag if hasattr(sys, "implementation") else None,
        "free_threaded": free_threaded(),
    }, "python")


def pip_config_files(environ=None):
    """pip's configuration files in pip's own order (later ones override earlier ones): global, user, site, then
    PIP_CONFIG_FILE. As pip's Configuration.iter_config_files and _load_config_files do (pypa/pip,
    src/pip/_internal/configuration.py; https://pip.pypa.io/en/stable/topics/configuration/): PIP_CONFIG_FILE set to
    os.devnull loads no file at all, and the user's files are skipped when PIP_CONFIG_FILE names a file that exists."""
    environ = os.environ if environ is None else environ
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    home = os.path.expanduser("~")
    files = []
    for folder in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep):
        files.append(os.path.join(folder, "pip", "pip.conf"))
    files.append("/etc/pip.conf")
    if not (env_file and os.path.exists(env_file)):
        files.append(os.path.join(home, ".pip", "pip.conf"))
        files.append(os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "pip", "pip.conf"))
    files.append(os.path.join(sys.prefix, "pip.conf"))
    if env_file:
        files.append(env_file)
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


# conda's configuration, read the way conda documents it (nothing is executed: what conda itself answers when none
# of these is set is asked of conda at run time by gpuvet.sources.package_indexes.conda_defaults, never written here).
# https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/use-condarc.html ("Searching for .condarc",
# "Conflict merging strategy", "Precedence"); the keys: .../configuration/settings.html and
# https://docs.conda.io/projects/conda/en/latest/configuration.html (env var string delimiter ',').
CONDA_CHANNEL_KEYS = ("channels", "default_channels", "channel_alias", "custom_channels")
_CONDA_LISTS = ("channels", "default_channels")


def conda_config_files(environ=None):
    """The .condarc files conda reads on Linux, in its documented order (later ones take precedence): each search
    path entry as written, a ``condarc.d/`` folder as its ``*.yml``/``*.yaml`` files in name order."""
    environ = os.environ if environ is None else environ
    home = os.path.expanduser("~")
    entries = ["/etc/conda/.condarc", "/etc/conda/condarc", "/etc/conda/condarc.d/",
               "/var/lib/conda/.condarc", "/var/lib/conda/condarc", "/var/lib/conda/condarc.d/"]
    folders = [environ.get("CONDA_ROOT"), os.path.join(environ["XDG_CONFIG_HOME"], "conda")
               if environ.get("XDG_CONFIG_HOME") else None,
               os.path.join(home, ".config", "conda"), os.path.join(home, ".conda")]
    for folder in folders:
        if folder:
            entries += [os.path.join(folder, ".condarc"), os.path.join(folder, "condarc"),
                        os.path.join(folder, "condarc.d") + os.sep]
    entries.append(os.path.join(home, ".condarc"))
    if environ.get("CONDA_PREFIX"):
        prefix = environ["CONDA_PREFIX"]
        entries += [os.path.join(prefix, ".condarc"), os.path.join(prefix, "condarc"),
                    os.path.join(prefix, "condarc.d") + os.sep]
    if environ.get("CONDARC"):
        entries.append(environ["CONDARC"])
    files = []
    for entry in entries:
        if entry.endswith(os.sep):
            names = sorted(n for n in list_dir(entry) if n.endswith((".yml", ".yaml")))
            candidates = [os.path.join(entry, n) for n in names]
        else:
            candidates = [entry]
        for path in candidates:
            if path not in files:  # $XDG_CONFIG_HOME unset or equal to ~/.config names the same file twice
                files.append(path)
    return files


def _scalar(text):
    return text.strip().strip("'\"")


def read_condarc(text):
    """``channels``, ``default_channels`` (lists), ``channel_alias`` (a string) and ``custom_channels`` (a map) of
    a .condarc: YAML, but only these keys in their usual block or flow form; anything else is ignored."""
    found = {}
    key = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace() and ":" in line:
            name, _, rest = line.partition(":")
            name, rest = name.strip(), rest.strip()
            key = name if name in _CONDA_LISTS + ("custom_channels",) else None
            if name == "channel_alias" and rest:
                found["channel_alias"] = _scalar(rest)
            elif key in _CONDA_LISTS and rest.startswith("["):
                found[key] = [_scalar(item) for item in rest.strip("[]").split(",") if item.strip()]
                key = None
            elif key == "custom_channels" and rest.startswith("{"):
                pairs = (item.partition(":") for item in rest.strip("{}").split(",") if ":" in item)
                found[key] = dict((_scalar(k), _scalar(v)) for k, _, v in pairs)
                key = None
            elif key:
                found[key] = {} if key == "custom_channels" else []
            continue
        if key in _CONDA_LISTS and line.strip().startswith("- "):
            found[key].append(_scalar(line.strip()[2:]))
        elif key == "custom_channels" and ":" in line:
            # a URL value holds a colon too: the key ends at the first ": " (or a trailing colon)
            name, _, value = line.strip().partition(": ")
            if value:
                found[key][_scalar(name)] = _scalar(value)
    return found


def _merge_conda(merged, settings):
    """One more source on top of ``merged``, by conda's strategy: lists merge (the higher source's entries first,
    no repeats), maps merge key by key, a single value is replaced."""
    for key, value in settings.items():
        if key in _CONDA_LISTS:
            merged[key] = list(value) + [v for v in merged.get(key, []) if v not in value]
        elif key == "custom_channels":
            combined = dict(merged.get(key, {}))
            combined.update(value)
            merged[key] = combined
        else:
            merged[key] = value


def conda_channel_config(environ=None):
    """What conda's configuration says of its channels: the keys of CONDA_CHANNEL_KEYS that some source sets, from
    the .condarc files in conda's order and then ``CONDA_CHANNELS``, ``CONDA_DEFAULT_CHANNELS`` (comma-separated)
    and ``CONDA_CHANNEL_ALIAS``, which take precedence over every file. ``config_files``: the files read.
    A key no source sets is absent: its value is conda's built-in default, which only conda can say."""
    environ = os.environ if environ is None else environ
    merged = {}  # type: dict
    used = []
    for path in conda_config_files(environ):
        if not os.path.isfile(path):
            continue
        text = try_read(path, limit=256 * 1024)
        if text is None:
            continue
        used.append(path)
        _merge_conda(merged, read_condarc(text))
    from_env = {}
    for key in _CONDA_LISTS:
        raw = environ.get("CONDA_" + key.upper())
        if raw and raw.strip():
            from_env[key] = [item.strip() for item in raw.split(",") if item.strip()]
    if environ.get("CONDA_CHANNEL_ALIAS", "").strip():
        from_env["channel_alias"] = environ["CONDA_CHANNEL_ALIAS"].strip()
    _merge_conda(merged, from_env)
    if "channel_alias" in merged:
        merged["channel_alias"] = redact_url(merged["channel_alias"])
    for key in _CONDA_LISTS:
        if key in merged:
            merged[key] = [redact_url(v) for v in merged[key]]
    if "custom_channels" in merged:
        merged["custom_channels"] = dict((k, redact_url(v)) for k, v in merged["custom_channels"].items())
    merged["config_files"] = used
    return merged

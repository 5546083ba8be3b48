"""``check --project DIR``: read the project's requirements*.txt, pyproject.toml, conda environment.yml and Dockerfiles (the I/O half of
gpuvet.ingest.project), following ``-r`` includes inside the project, bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from gpuvet.errors import InputError
from gpuvet.ingest import dataloader, lockfiles, project
from gpuvet.models import msg

_MAX_FILES = 64
_MAX_BYTES = 1024 * 1024


_MAX_LOCK_BYTES = 64 * 1024 * 1024  # a lockfile of a large workspace runs to megabytes


def _read(path: Path, limit: int = _MAX_BYTES, kind: str = "a requirements file") -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(f"{path} is over {limit // 1024} KiB: not {kind}")
    return data.decode("utf-8", "replace")


_SKIP_DIRS = {".git", ".venv", "venv", "env", "node_modules", "site-packages", "__pycache__", ".tox", "build", "dist"}
_CODE_SUFFIXES = {".py"}
_CONFIG_SUFFIXES = {".yaml", ".yml", ".json", ".ini", ".cfg", ".toml"}
_TEXT_SUFFIXES = _CODE_SUFFIXES | _CONFIG_SUFFIXES | {".txt", ".sh", ".md"}
_MAX_CODE_FILES = 400


def _project_files(root: Path) -> List[Path]:
    """The project's own text files, top-down, leaving out environments, caches and build output (bounded)."""
    out: List[Path] = []
    for path in sorted(root.rglob("*")):
        if len(out) >= _MAX_CODE_FILES:
            break
        relative = path.relative_to(root)
        if any(part in _SKIP_DIRS or part.startswith(".") for part in relative.parts[:-1]) or len(relative.parts) > 6:
            continue
        if path.suffix.lower() in _TEXT_SUFFIXES and path.is_file():
            out.append(path)
    return out


def code_lint(root: Path, python: Optional[str] = None) -> List[Dict[str, Any]]:
    """Code and configs moved from Windows: absolute Windows paths in Python string literals and config values,
    and text files that are not UTF-8 (what Chinese Windows saves as GB18030 fails to decode on Linux, where
    open() without an encoding reads UTF-8, and a Python source in it does not even import), and DataLoaders whose
    workers would use CUDA once they fork instead of spawn."""
    found: List[Dict[str, Any]] = []
    code: Dict[str, str] = {}
    for path in _project_files(root):
        try:
            data = path.read_bytes()[:_MAX_BYTES]
        except OSError:
            continue
        name = str(path.relative_to(root))
        guess = project.encoding_guess(data)
        if guess is not None:
            found.append({"file": name, "line": "", "problem": "not_utf8", "encoding": guess})
        text = data.decode("utf-8", "replace")
        if path.suffix.lower() in _CODE_SUFFIXES:
            found += project.python_windows_paths(text, name)
            code[name] = text
        elif path.suffix.lower() in _CONFIG_SUFFIXES:
            found += project.config_windows_paths(text, name)
    return found + dataloader.dataloader_fork_risks(code, python)


def _load_lock(path: Path, kind: str) -> Any:
    """A lockfile parsed: TOML (uv.lock) or YAML (pixi.lock, with the optional PyYAML); a file that does not parse is
    an input error naming it."""
    text = _read(path, _MAX_LOCK_BYTES, "a lockfile")
    if kind == "toml":
        from gpuvet.tomlfile import loads_toml

        try:
            return loads_toml(text)
        except ValueError as exc:
            raise InputError(f"{path}: not valid TOML ({str(exc).splitlines()[0]})") from None
    import yaml  # the optional extra gpuvet[project]

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's when built with it
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:200]})") from None


# The manifests each lockfile resolves (pixi reads [tool.pixi] of a pyproject.toml too)
_LOCKED_MANIFESTS = {"uv.lock": ("pyproject.toml",), "pixi.lock": ("pixi.toml", "pyproject.toml")}


def _locked(root: Path, python: Optional[str], targets: List[str], origins: List[str], seen: List[Path],
            skipped: List[Dict[str, Any]]) -> List[str]:
    """The frameworks a ``uv.lock`` or ``pixi.lock`` pins: what ``uv sync`` / ``pixi install`` installs, so they
    replace what the lock's own manifest declares for the same framework (a range there is what the lock resolved);
    a requirements file, environment.yml or Dockerfile beside it is another way to install and keeps its targets.
    ``origins[i]`` is the file ``targets[i]`` came from."""
    from gpuvet.kb import load
    from gpuvet.probe.names import canonical_name

    kb = load()

    def wanted(name: str) -> bool:
        return kb.framework(canonical_name(name)) is not None

    locked: List[str] = []
    replaced: Dict[str, set] = {}  # manifest -> the framework names its lock pins
    for name, kind, reader in (("uv.lock", "toml", lockfiles.read_uv_lock), ("pixi.lock", "yaml", lockfiles.read_pixi_lock)):
        path = root / name
        if not path.is_file():
            continue
        seen.append(path.resolve())
        if kind == "yaml":
            try:
                import yaml  # noqa: F401  (the optional extra gpuvet[project])
            except ImportError:
                skipped.append({"file": name, "line": "", "why": msg("ingest.skipped.needs_yaml")})
                continue
        declared = reader(_load_lock(path, kind), python, wanted)
        locked += declared.targets
        skipped += [{"file": name, "line": line, "why": why} for line, why in declared.skipped]
        for manifest in _LOCKED_MANIFESTS[name]:
            replaced.setdefault(manifest, set()).update(_name(t) for t in declared.targets)
    kept = [t for t, origin in zip(targets, origins) if _name(t) not in replaced.get(origin, set())]
    return kept + locked


def _name(target: str) -> str:
    """The canonical distribution name a requirement string starts with."""
    import re

    from gpuvet.probe.names import canonical_name

    return canonical_name(re.split(r"[\s\[=<>!~;@]", target.strip(), maxsplit=1)[0])


def read_project(folder: str, python: Optional[str] = None) -> Dict[str, Any]:
    """{"path", "files": [...], "targets": [...], "skipped": [{"file", "line", "why"}]} of a project folder
    (each ``why`` a catalog Message, rendered per language by the report)."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InputError(f"--project {folder}: not a folder", hint="pass the project's top folder")
    queue: List[Path] = sorted(root.glob("requirements*.txt")) + sorted((root / "requirements").glob("*.txt"))
    seen: List[Path] = []
    lint: List[Dict[str, Any]] = []
    targets: List[str] = []
    origins: List[str] = []  # the file each target came from
    skipped: List[Dict[str, Any]] = []
    while queue and len(seen) < _MAX_FILES:
        path = queue.pop(0).resolve()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        text = _read(path)
        relative = str(path.relative_to(root.resolve())) if root.resolve() in path.parents else str(path)
        lint += project.windows_lint(text, relative)
        declared = project.read_requirements(text, python)
        targets += declared.targets
        origins += [relative] * len(declared.targets)
        skipped += [{"file": str(path.relative_to(root.resolve())) if root.resolve() in path.parents else str(path),
                     "line": line, "why": why} for line, why in declared.skipped]
        for include in declared.includes:
            candidate = (path.parent / include).resolve()
            where = str(path.relative_to(root.resolve())) if root.resolve() in path.parents else str(path)
            if root.resolve() not in candidate.parents:  # never read outside the project
                skipped.append({"file": where, "line": "-r " + include, "why": msg("ingest.skipped.outside_project")})
            elif not candidate.is_file():
                skipped.append({"file": where, "line": "-r " + include, "why": msg("ingest.skipped.include_missing")})
            else:
                queue.append(candidate)
    system_requirements: List[Dict[str, Any]] = []
    for name, reader in (("pyproject.toml", project.read_pyproject), ("pixi.toml", project.read_pixi_toml)):
        manifest = root / name
        if not manifest.is_file():
            continue
        from gpuvet.tomlfile import loads_toml

        try:
            document = loads_toml(_read(manifest))
        except ValueError as exc:
            raise InputError(f"{manifest}: not valid TOML ({str(exc).splitlines()[0]})") from None
        seen.append(manifest.resolve())
        declared = reader(document, python)
        targets += declared.targets
        origins += [name] * len(declared.targets)
        skipped += [{"file": name, "line": line, "why": why} for line, why in declared.skipped]
        system_requirements += [{"file": name, "name": k, "value": v} for k, v in declared.system_requirements.items()]
    for name in ("environment.yml", "environment.yaml"):
        conda_file = root / name
        if not conda_file.is_file():
            continue
        seen.append(conda_file.resolve())
        try:
            import yaml  # the optional extra gpuvet[project]: YAML needs a real parser
        except ImportError:
            skipped.append({"file": name, "line": "", "why": msg("ingest.skipped.needs_yaml")})
            continue
        try:
            document = yaml.safe_load(_read(conda_file))
        except yaml.YAMLError as exc:
            raise InputError(f"{conda_file}: not valid YAML ({str(exc).splitlines()[0]})") from None
        declared = project.read_environment_yml(document, python)
        targets += declared.targets
        origins += [name] * len(declared.targets)
        skipped += [{"file": name, "line": line, "why": why} for line, why in declared.skipped]
    for dockerfile in sorted(root.glob("Dockerfile*"))[:_MAX_FILES] + sorted(root.glob("docker/Dockerfile*"))[:_MAX_FILES]:
        if not dockerfile.is_file():
            continue
        seen.append(dockerfile.resolve())
        where = str(dockerfile.relative_to(root))
        declared = project.read_dockerfile(_read(dockerfile), python)
        targets += declared.targets
        origins += [where] * len(declared.targets)
        skipped += [{"file": where, "line": line, "why": why} for line, why in declared.skipped]
    targets = _locked(root, python, targets, origins, seen, skipped)
    if not seen:
        raise InputError(f"--project {folder}: no requirements*.txt, pyproject.toml, pixi.toml, environment.yml, "
                         "uv.lock, pixi.lock or Dockerfile there")
    lint += code_lint(root, python)
    for script in sorted(root.glob("*.sh"))[:_MAX_FILES]:  # CRLF in a shell script: "bad interpreter: /bin/bash^M"
        try:
            head = script.read_bytes()[:_MAX_BYTES]
        except OSError:
            continue
        if b"\r\n" in head:
            lint.append({"file": script.name, "line": "", "problem": "crlf"})
    return {"path": str(root), "files": [str(p.relative_to(root.resolve())) if root.resolve() in p.parents else str(p)
                                         for p in seen],
            "targets": list(dict.fromkeys(targets)), "skipped": skipped, "lint": lint,
            "system_requirements": system_requirements}

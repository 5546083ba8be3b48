"""``check --project DIR``: read the project's requirements*.txt, pyproject.toml, conda environment.yml and Dockerfiles (the I/O half of
gpuvet.ingest.project), following ``-r`` includes inside the project, bounded."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, Dict, List, Optional

from gpuvet.errors import InputError
from gpuvet.ingest import dataloader, lockfiles, project
from gpuvet.models import msg

_MAX_FILES = 64
_MAX_CODE_BYTES = 8 * 1024 * 1024  # all the Python and config files the lints read together: a data folder of
# sixty 1 MiB sources costs seconds of parsing, not minutes


def _read(root: Path, path: Path, kind: str = "project file") -> str:
    """A file of the project read as every user file is (gpuvet.userfiles): a regular file whose real path stays
    inside the project (a link to a private file elsewhere is never read), bounded in size; decoded from UTF-8,
    UTF-16 or a legacy CJK encoding, else UTF-8 with replacements (a requirement line is ASCII)."""
    from gpuvet.userfiles import ReadRefused, decode_text, read_bytes

    data = read_bytes(str(path), kind, root=str(root), pipes=False,
                      hint="a project's files are read only when they are regular files inside it")
    try:
        return decode_text(data, str(path), kind)
    except ReadRefused:
        return data.decode("utf-8", "replace")


def _readable(root: Path, path: Path, where: str, skipped: List[Dict[str, Any]]) -> bool:
    """Whether ``path`` may be read as a file of the project; when not (a link out of it, a FIFO, a device), the
    reason is noted in ``skipped`` and the rest of the project is read."""
    from gpuvet.userfiles import inside

    if not inside(str(path), str(root)):
        skipped.append({"file": where, "line": "", "why": msg("ingest.skipped.outside_project")})
        return False
    try:
        regular = path.is_file() and stat.S_ISREG(path.stat().st_mode)
    except OSError:
        regular = False
    if not regular:
        skipped.append({"file": where, "line": "", "why": msg("ingest.skipped.not_regular")})
        return False
    return True


_SKIP_DIRS = {".git", ".venv", "venv", "env", "node_modules", "site-packages", "__pycache__", ".tox", "build", "dist"}
_CODE_SUFFIXES = {".py"}
_CONFIG_SUFFIXES = {".yaml", ".yml", ".json", ".ini", ".cfg", ".toml"}
_TEXT_SUFFIXES = _CODE_SUFFIXES | _CONFIG_SUFFIXES | {".txt", ".sh", ".md"}
_MAX_CODE_FILES = 400


def _project_files(root: Path) -> List[Path]:
    """The project's own text files, top-down, leaving out environments, caches and build output (bounded in depth
    and count, links out of the project and special files never listed: gpuvet.userfiles.tree_files)."""
    from gpuvet.userfiles import tree_files

    out: List[Path] = []
    for name in tree_files(str(root), skip_dir=lambda part: part in _SKIP_DIRS or part.startswith(".")):
        path = Path(name)
        if path.suffix.lower() in _TEXT_SUFFIXES:
            out.append(path)
            if len(out) >= _MAX_CODE_FILES:
                break
    return out


def code_lint(root: Path, python: Optional[str] = None) -> List[Dict[str, Any]]:
    """Code and configs moved from Windows: absolute Windows paths in Python string literals and config values,
    and text files that are not UTF-8 (what Chinese Windows saves as GB18030 fails to decode on Linux, where
    open() without an encoding reads UTF-8, and a Python source in it does not even import), and DataLoaders whose
    workers would use CUDA once they fork instead of spawn. At most _MAX_CODE_BYTES are read in all."""
    from gpuvet.errors import InputError
    from gpuvet.userfiles import read_bytes

    found: List[Dict[str, Any]] = []
    code: Dict[str, str] = {}
    budget = _MAX_CODE_BYTES
    for path in _project_files(root):
        if budget <= 0:
            break
        try:
            data = read_bytes(str(path), "project file", root=str(root), pipes=False)
        except InputError:
            continue  # too big, or replaced by a link or a FIFO since it was listed: not linted
        budget -= len(data)
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


def _load_lock(root: Path, path: Path, kind: str) -> Any:
    """A lockfile parsed: TOML (uv.lock) or YAML (pixi.lock, with the optional PyYAML), bounded in depth and size;
    a file that does not parse is an input error naming it."""
    from gpuvet.userfiles import parse_toml, parse_yaml

    text = _read(root, path, "lockfile")
    return parse_toml(text, str(path), "lockfile") if kind == "toml" else parse_yaml(text, str(path), "lockfile")


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
        if not path.exists() or not _readable(root, path, name, skipped):
            continue
        seen.append(path.resolve())
        if kind == "yaml":
            try:
                import yaml  # noqa: F401  (the optional extra gpuvet[project])
            except ImportError:
                skipped.append({"file": name, "line": "", "why": msg("ingest.skipped.needs_yaml")})
                continue
        declared = reader(_load_lock(root, path, kind), python, wanted)
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
        raise InputError.said("errors.project_not_folder", folder=folder)
    given, root = str(root), root.resolve()  # every file read must stay inside this real folder
    if not root.is_dir():
        raise InputError.said("errors.project_not_folder", folder=folder)
    queue: List[Path] = sorted(root.glob("requirements*.txt")) + sorted((root / "requirements").glob("*.txt"))
    seen: List[Path] = []
    lint: List[Dict[str, Any]] = []
    targets: List[str] = []
    origins: List[str] = []  # the file each target came from
    skipped: List[Dict[str, Any]] = []
    while queue and len(seen) < _MAX_FILES:
        listed = queue.pop(0)
        where = str(listed.relative_to(root)) if root in listed.parents else str(listed)
        if not _readable(root, listed, where, skipped):
            continue
        path = listed.resolve()
        if path in seen:
            continue
        seen.append(path)
        text = _read(root, path)
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
    from gpuvet.userfiles import parse_toml, parse_yaml

    for name, reader in (("pyproject.toml", project.read_pyproject), ("pixi.toml", project.read_pixi_toml)):
        manifest = root / name
        if not manifest.exists() or not _readable(root, manifest, name, skipped):
            continue
        document = parse_toml(_read(root, manifest), str(manifest), name)
        seen.append(manifest.resolve())
        declared = reader(document, python, str(manifest))
        targets += declared.targets
        origins += [name] * len(declared.targets)
        skipped += [{"file": name, "line": line, "why": why} for line, why in declared.skipped]
        system_requirements += [{"file": name, "name": k, "value": v} for k, v in declared.system_requirements.items()]
    for name in ("environment.yml", "environment.yaml"):
        conda_file = root / name
        if not conda_file.exists() or not _readable(root, conda_file, name, skipped):
            continue
        seen.append(conda_file.resolve())
        try:
            import yaml  # noqa: F401  (the optional extra gpuvet[project]: YAML needs a real parser)
        except ImportError:
            skipped.append({"file": name, "line": "", "why": msg("ingest.skipped.needs_yaml")})
            continue
        document = parse_yaml(_read(root, conda_file), str(conda_file), name)
        declared = project.read_environment_yml(document, python)
        targets += declared.targets
        origins += [name] * len(declared.targets)
        skipped += [{"file": name, "line": line, "why": why} for line, why in declared.skipped]
    for dockerfile in sorted(root.glob("Dockerfile*"))[:_MAX_FILES] + sorted(root.glob("docker/Dockerfile*"))[:_MAX_FILES]:
        where = str(dockerfile.relative_to(root))
        if dockerfile.is_dir() or not _readable(root, dockerfile, where, skipped):
            continue
        seen.append(dockerfile.resolve())
        declared = project.read_dockerfile(_read(root, dockerfile), python)
        targets += declared.targets
        origins += [where] * len(declared.targets)
        skipped += [{"file": where, "line": line, "why": why} for line, why in declared.skipped]
    targets = _locked(root, python, targets, origins, seen, skipped)
    if not seen and skipped:  # there were such files, none of them readable: say which and why
        first = skipped[0]
        raise InputError.said("errors.project_unreadable", folder=folder, file=first["file"], why=first["why"])
    if not seen:
        raise InputError.said("errors.project_empty", folder=folder)
    lint += code_lint(root, python)
    from gpuvet.userfiles import read_bytes

    for script in sorted(root.glob("*.sh"))[:_MAX_FILES]:  # CRLF in a shell script: "bad interpreter: /bin/bash^M"
        try:
            head = read_bytes(str(script), "project file", root=str(root), pipes=False)
        except InputError:
            continue  # a FIFO, a link out of the project or a huge file: not a script to lint
        if b"\r\n" in head:
            lint.append({"file": script.name, "line": "", "problem": "crlf"})
    return {"path": given, "files": [str(p.relative_to(root.resolve())) if root.resolve() in p.parents else str(p)
                                         for p in seen],
            "targets": list(dict.fromkeys(targets)), "skipped": skipped, "lint": lint,
            "system_requirements": system_requirements}

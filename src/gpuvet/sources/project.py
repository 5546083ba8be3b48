"""``check --project DIR``: read the project's requirements*.txt, pyproject.toml, conda environment.yml and Dockerfiles (the I/O half of
gpuvet.ingest.project), following ``-r`` includes inside the project, bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

from gpuvet.errors import InputError
from gpuvet.ingest import project

_MAX_FILES = 64
_MAX_BYTES = 1024 * 1024


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()[: _MAX_BYTES + 1]
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > _MAX_BYTES:
        raise InputError(f"{path} is over {_MAX_BYTES // 1024} KiB: not a requirements file")
    return data.decode("utf-8", "replace")


def read_project(folder: str, python: Optional[str] = None) -> Dict[str, Any]:
    """{"path", "files": [...], "targets": [...], "skipped": [{"file", "line", "why"}]} of a project folder."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise InputError(f"--project {folder}: not a folder", hint="pass the project's top folder")
    queue: List[Path] = sorted(root.glob("requirements*.txt")) + sorted((root / "requirements").glob("*.txt"))
    seen: List[Path] = []
    lint: List[Dict[str, str]] = []
    targets: List[str] = []
    skipped: List[Dict[str, str]] = []
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
        skipped += [{"file": str(path.relative_to(root.resolve())) if root.resolve() in path.parents else str(path),
                     "line": line, "why": why} for line, why in declared.skipped]
        for include in declared.includes:
            candidate = (path.parent / include).resolve()
            where = str(path.relative_to(root.resolve())) if root.resolve() in path.parents else str(path)
            if root.resolve() not in candidate.parents:  # never read outside the project
                skipped.append({"file": where, "line": "-r " + include, "why": "outside the project: not read"})
            elif not candidate.is_file():
                skipped.append({"file": where, "line": "-r " + include, "why": "the included file is not there"})
            else:
                queue.append(candidate)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        from gpuvet.tomlfile import loads_toml

        try:
            document = loads_toml(_read(pyproject))
        except ValueError as exc:
            raise InputError(f"{pyproject}: not valid TOML ({str(exc).splitlines()[0]})") from None
        seen.append(pyproject.resolve())
        declared = project.read_pyproject(document, python)
        targets += declared.targets
        skipped += [{"file": "pyproject.toml", "line": line, "why": why} for line, why in declared.skipped]
    system_requirements: List[Dict[str, str]] = []
    pixi = root / "pixi.toml"
    if pixi.is_file():
        from gpuvet.tomlfile import loads_toml

        try:
            pixi_document = loads_toml(_read(pixi))
        except ValueError as exc:
            raise InputError(f"{pixi}: not valid TOML ({str(exc).splitlines()[0]})") from None
        seen.append(pixi.resolve())
        declared = project.read_pixi_toml(pixi_document, python)
        targets += declared.targets
        skipped += [{"file": "pixi.toml", "line": line, "why": why} for line, why in declared.skipped]
        system_requirements += [{"file": "pixi.toml", "name": k, "value": v} for k, v in declared.system_requirements.items()]
    for name in ("environment.yml", "environment.yaml"):
        conda_file = root / name
        if not conda_file.is_file():
            continue
        seen.append(conda_file.resolve())
        try:
            import yaml  # the optional extra gpuvet[project]: YAML needs a real parser
        except ImportError:
            skipped.append({"file": name, "line": "", "why": "reading it needs PyYAML: pip install 'gpuvet[project]'"})
            continue
        try:
            document = yaml.safe_load(_read(conda_file))
        except yaml.YAMLError as exc:
            raise InputError(f"{conda_file}: not valid YAML ({str(exc).splitlines()[0]})") from None
        declared = project.read_environment_yml(document, python)
        targets += declared.targets
        skipped += [{"file": name, "line": line, "why": why} for line, why in declared.skipped]
    for dockerfile in sorted(root.glob("Dockerfile*"))[:_MAX_FILES] + sorted(root.glob("docker/Dockerfile*"))[:_MAX_FILES]:
        if not dockerfile.is_file():
            continue
        seen.append(dockerfile.resolve())
        where = str(dockerfile.relative_to(root))
        declared = project.read_dockerfile(_read(dockerfile), python)
        targets += declared.targets
        skipped += [{"file": where, "line": line, "why": why} for line, why in declared.skipped]
    if not seen:
        raise InputError(f"--project {folder}: no requirements*.txt, pyproject.toml, pixi.toml, environment.yml or "
                         "Dockerfile there")
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

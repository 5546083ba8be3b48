"""What ``gpuvet replay`` writes: the replay report as text, and the files that rebuild the captured environment
(``requirements.txt`` with its index lines, a conda ``environment.yml``, a ``Dockerfile``). Pure functions of the
capture document and the knowledge base."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from gpuvet.i18n import text
from gpuvet.report.table import pad

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

# pip freeze leaves these out by default: the installer's own tools, not the environment's content.
_TOOLS = {"pip", "setuptools", "wheel", "distribute"}


def _indexes_by_label(kb: KnowledgeBase) -> Dict[str, Dict[str, str]]:
    """Distribution -> local version label -> the index that serves it (``torch`` -> ``cu124`` -> PyTorch's cu124
    index), from the KB variants; a framework's companions (torchvision for torch) come from the same indexes."""
    indexes: Dict[str, Dict[str, str]] = {}
    for framework in kb.frameworks():
        labels: Dict[str, str] = {}
        names = {name.lower() for name in framework.distributions} | {framework.name.lower()}
        for release in framework.releases:
            names |= {str(name).lower() for name in release.companions}
            for variant in release.variants.values():
                url = variant.index_url or ""
                if url.startswith(("https://", "http://")):  # not "PyPI (default)"
                    labels.setdefault(variant.name.lower(), url)
        for name in names:
            indexes.setdefault(name, labels)
    return indexes


def requirement_lines(lock: List[Mapping[str, Any]], kb: KnowledgeBase,
                      changes: Optional[Mapping[str, str]] = None) -> "tuple[List[str], List[str]]":
    """(index lines, requirement lines): exact pins; a URL or VCS install as ``name @ url``; a local directory as a
    comment (it cannot be fetched elsewhere); a local label's index as one ``--extra-index-url``. ``changes`` (name ->
    version) are the replay plan's builds, pinned instead of the captured ones."""
    indexes, extra, lines = _indexes_by_label(kb), [], []
    changes = {key.lower(): value for key, value in (changes or {}).items()}
    for entry in lock:
        name, version, source = str(entry["name"]), str(entry["version"]), entry.get("source") or {}
        version = changes.get(name.lower(), version)
        if name.lower() in _TOOLS:
            continue
        kind = source.get("kind")
        if kind == "dir":
            lines.append("# %s %s was installed from a local directory (%s): not reproducible from an index"
                         % (name, version, source.get("url")))
            continue
        if kind == "vcs":
            commit = "@" + source["commit"] if source.get("commit") else ""
            lines.append("%s @ git+%s%s" % (name, source.get("url"), commit))
            continue
        if kind == "url":
            lines.append("%s @ %s" % (name, source.get("url")))
            continue
        lines.append("%s==%s" % (name, version))
        label = version.partition("+")[2].lower()
        index = indexes.get(name.lower().replace("_", "-"), {}).get(label) if label else None
        if index and index not in extra:
            extra.append(index)
    return ["--extra-index-url " + url for url in extra], lines


def plan_changes(plan: List[Mapping[str, Any]]) -> Dict[str, str]:
    """The builds the replay plan puts in place of captured ones that do not run on this machine (name -> version)."""
    return {str(step["alternative"]["name"]): str(step["alternative"]["version"])
            for step in plan if step.get("alternative") and step["alternative"].get("version")}


def requirements_txt(capture: Mapping[str, Any], kb: KnowledgeBase, changes: Optional[Mapping[str, str]] = None) -> str:
    index_lines, lines = requirement_lines(list(capture.get("lock") or []), kb, changes)
    head = ["# gpuvet replay: the environment captured %s" % (capture.get("captured_at") or "?")]
    if changes:
        head.append("# changed for this machine: " + ", ".join("%s==%s" % item for item in sorted(changes.items())))
    return "\n".join(head + index_lines + lines) + "\n"


def _python(capture: Mapping[str, Any]) -> Optional[str]:
    python = ((capture.get("snapshot") or {}).get("python") or {}).get("value") or {}
    version = str(python.get("version") or "")
    return ".".join(version.split(".")[:2]) if version else None


def environment_yml(capture: Mapping[str, Any], kb: KnowledgeBase, changes: Optional[Mapping[str, str]] = None) -> str:
    index_lines, lines = requirement_lines(list(capture.get("lock") or []), kb, changes)
    python = _python(capture)
    out = ["name: gpuvet-replay", "channels:", "  - conda-forge", "dependencies:"]
    out.append("  - python=%s" % python if python else "  - python")
    out += ["  - pip", "  - pip:"]
    out += ["      - %s" % line for line in index_lines + [line for line in lines if not line.startswith("#")]]
    return "\n".join(out) + "\n"


def dockerfile(capture: Mapping[str, Any], base: Optional[Mapping[str, Any]] = None) -> str:
    """The Dockerfile that rebuilds the capture; ``base`` is gpuvet.checks.images.replay_base's choice (a Python
    image when the wheels carry CUDA, else an nvidia/cuda runtime tag the target driver runs), said in a comment."""
    python = _python(capture) or "3"
    base = base or {"image": "python:%s-slim" % python, "reason": "wheels", "wheels": "?"}
    why = {
        "wheels": ["# The CUDA runtime comes inside the wheels (%s), so a Python image is the base; the driver is the"
                   % base.get("wheels"),
                   "# host's, mounted by the NVIDIA Container Toolkit."],
        "no_cuda": ["# The capture names no CUDA toolkit and no CUDA runtime wheel: a Python image is the base."],
        "no_cuda_image": ["# The capture had CUDA %s outside the wheels, but no nvidia/cuda tag of it that gpuvet lists"
                          % base.get("cuda"),
                          "# runs on the target driver: a Python image is the base; add the CUDA %s runtime yourself."
                          % base.get("cuda")],
        "driver_below_cuda": ["# The capture had CUDA %s outside the wheels; the target driver %s is below %s, the floor"
                              % (base.get("cuda"), base.get("driver"), base.get("minimum")),
                              "# of CUDA %s, so no runtime of it runs there: move that driver to >= %s first, or"
                              % (base.get("cuda"), base.get("minimum")),
                              "# rebuild the CUDA code the capture compiled for a CUDA that driver serves."],
        "cuda_image": ["# The capture had CUDA %s outside the wheels: %s is the newest nvidia/cuda runtime tag of it"
                       % (base.get("cuda"), base.get("image")),
                       "# that starts and runs on the target driver (gpuvet check image:%s says why)." % base.get("image"),
                       "# Python is the image's Ubuntu python3 (the capture had Python %s)." % python],
    }[str(base.get("reason"))]
    lines = ["# gpuvet replay: the captured environment in a container."] + why
    lines.append("# Run it with `docker run --gpus all ...` on a host whose driver `gpuvet replay` accepts.")
    lines.append("FROM %s" % base["image"])
    if base.get("reason") == "cuda_image":
        # A virtual environment: Ubuntu 24.04 marks its system Python externally managed (PEP 668), so a plain
        # pip install there stops; a venv works the same on 20.04, 22.04 and 24.04.
        lines.append("RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv"
                     " && rm -rf /var/lib/apt/lists/* && python3 -m venv /opt/venv")
        lines += ["ENV PATH=/opt/venv/bin:$PATH",
                  "COPY requirements.txt /tmp/requirements.txt",
                  "RUN pip install --no-cache-dir -r /tmp/requirements.txt"]
    else:
        lines += ["COPY requirements.txt /tmp/requirements.txt",
                  "RUN pip install --no-cache-dir -r /tmp/requirements.txt"]
    return "\n".join(lines + [""])


def render_text(document: Mapping[str, Any], lang: str = "en") -> str:
    lines = [text(lang, "replay.title", file=document.get("capture", {}).get("file", "?"),
                  captured=document.get("capture", {}).get("captured_at") or "?")]
    changed = document.get("differences") or []
    if changed:
        lines.append(text(lang, "replay.differences"))
        for item in changed:
            lines.append("  %s %s -> %s" % (pad(item["fact"], 10), item["captured"] or "-", item["here"] or "-"))
    else:
        lines.append(text(lang, "replay.same_facts"))
    unknown = document.get("not_known_here") or []
    if unknown:
        lines.append(text(lang, "replay.not_known", facts=", ".join(item["fact"] for item in unknown)))
    for target in document.get("targets") or []:
        lines.append("  %s %s -> %s" % (pad(target["verdict"].upper(), 5), target["target"], target.get("resolved") or "-"))
        failing = [f for f in target.get("findings") or [] if f.get("severity") == "fail"]
        if failing:
            lines.append("        " + str(failing[0].get("title")))
    for step in document.get("plan") or []:
        if step.get("archs"):
            lines.append(text(lang, "replay.arch_gap", target=step["target"], **step["archs"]))
        alternative = step.get("alternative")
        if alternative:
            lines.append(text(lang, "replay.plan_" + alternative["change"], target=step["target"],
                              build=alternative["build"]))
            if alternative.get("install"):
                lines.append("    $ " + alternative["install"])
        else:
            lines.append(text(lang, "replay.plan_none", target=step["target"]))
    for path in document.get("files") or []:
        lines.append(text(lang, "replay.wrote", path=path))
    lines.append(text(lang, "replay.drift" if document.get("drift") else "replay.no_drift"))
    return "\n".join(lines) + "\n"

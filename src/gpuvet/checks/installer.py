"""The install commands gpuvet prints, in the installer the user runs (``--installer pip|uv|conda|pixi``).

uv's pip interface takes pip's commands as they are (``uv pip install``, ``--index-url``, ``--extra-index-url``,
``--no-deps``, ``--force-reinstall``); a PyTorch index (``--index-url https://download.pytorch.org/whl/cu121``)
becomes uv's own selector, ``--torch-backend=cu121`` (https://docs.astral.sh/uv/guides/integration/pytorch/
#automatic-backend-selection). ``uv pip uninstall`` asks no question, so pip's ``-y`` goes.

conda: a torch build PyTorch published as a conda package (kb/data/installers.toml, ``conda_pytorch_channel``) becomes
that package with the channels of its era (``pytorch-cuda=12.1 -c pytorch -c nvidia``, ``cudatoolkit=11.3 -c
pytorch``, ``cpuonly -c pytorch``); any other build keeps its pip command, run inside the conda environment, with
the reason said. pixi: the build goes into the workspace's PyPI dependencies (``pixi add --pypi SPEC --index URL``),
a CUDA build with ``pixi workspace system-requirements add cuda MAJOR`` first. Other commands are left as they are."""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from gpuvet.checks.chain import Candidate, evaluate
from gpuvet.checks.resolve import first_fit
from gpuvet.checks.targets import Target
from gpuvet.findings import make
from gpuvet.ingest.project import _variant  # the backend a PyTorch index URL names, one reader for every input
from gpuvet.kb import versions
from gpuvet.models import Finding, Severity, Verdict
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

_PIP = re.compile(r"^(?:python3?\s+-m\s+)?pip3?\s+(?P<rest>(?:install|uninstall)\b.*)$")
_TORCH_INDEX = re.compile(r"\s--index-url[ =]https://download\.pytorch\.org/whl/(?P<backend>cu\d+|cpu|rocm[\d.]+|xpu)/?(?=\s|$)")
_COMMENT = re.compile(r"^(?P<command>.*?)(?:\s+#\s*(?P<comment>.*))?$")
_VALUED = {"-i": "index", "--index-url": "index", "--extra-index-url": "extra", "-f": "find_links",
           "--find-links": "find_links", "--trusted-host": "trusted"}
_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:==(?P<version>[^\s;,]+))?")


def as_uv(command: str) -> str:
    match = _PIP.match(command.strip())
    if match is None:
        return command
    rest = match.group("rest")
    if rest.startswith("uninstall"):
        rest = re.sub(r"\s(?:-y|--yes)(?=\s|$)", "", rest)
    rest = _TORCH_INDEX.sub(lambda m: " --torch-backend=" + m.group("backend"), rest)
    return "uv pip " + rest


# ------------------------------------------------------------------------------------- pip's command, read once


@dataclasses.dataclass
class PipCommand:
    """One ``pip install|uninstall`` command, as shlex reads it (options gpuvet does not know stay in ``flags``)."""

    action: str
    specs: List[str]
    index: Optional[str] = None
    extra: List[str] = dataclasses.field(default_factory=list)
    find_links: List[str] = dataclasses.field(default_factory=list)
    trusted: List[str] = dataclasses.field(default_factory=list)
    flags: List[str] = dataclasses.field(default_factory=list)
    comment: Optional[str] = None
    raw: str = ""  # the command without its comment

    @property
    def pip_text(self) -> str:
        """The command without its comment, as ``python -m pip`` inside an environment runs it."""
        return "python -m pip " + _PIP.match(self.raw).group("rest")  # type: ignore[union-attr]


def parse_pip(command: str) -> Optional[PipCommand]:
    """``command`` as a :class:`PipCommand`; None when it is not one pip install/uninstall (or shlex cannot read it)."""
    parts = _COMMENT.match(command.strip())
    body = parts.group("command") if parts else command.strip()
    if _PIP.match(body) is None:
        return None
    try:
        words = shlex.split(body)
    except ValueError:
        return None
    while words and words[0] != "install" and words[0] != "uninstall":
        words.pop(0)
    parsed = PipCommand(action=words[0], specs=[], comment=parts.group("comment") if parts else None, raw=body)
    values: Dict[str, Any] = {"extra": parsed.extra, "find_links": parsed.find_links, "trusted": parsed.trusted}
    rest = iter(words[1:])
    for word in rest:
        option, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        key = _VALUED.get(option)
        if key is not None:
            value = inline or next(rest, "")
            if key == "index":
                parsed.index = value
            else:
                values[key].append(value)
        elif word.startswith("-"):
            parsed.flags.append(word)
        else:
            parsed.specs.append(word)
    return parsed


Written = Tuple[str, List[Optional[str]]]  # a command and what its comment says


def _each(command: str, translate: Callable[[str], Written]) -> str:
    """``a && b`` translated part by part; every part's notes go into one comment at the end, where a shell reads
    none of them as a command."""
    texts, notes = [], []
    for part in command.split(" && "):
        text, said = translate(part.strip())
        texts.append(text)
        notes += [n for n in said if n and n not in notes]
    return " && ".join(texts) + ("  # " + "; ".join(notes) if notes else "")


# ----------------------------------------------------------------------------------------- which torch build


@dataclasses.dataclass(frozen=True)
class TorchBuild:
    version: str
    cuda: Optional[str]  # "12.1"; None for the CPU build
    backend: str  # cu121 | cpu | rocm6.1 | ...


def _cuda_of(backend: str) -> Optional[str]:
    match = re.match(r"^cu(\d+)(\d)$", backend)
    return "%s.%s" % (match.group(1), match.group(2)) if match else None


def torch_build(pip: PipCommand, kb: KnowledgeBase) -> Optional[TorchBuild]:
    """The torch build one ``pip install torch==V ...`` names: from its PyTorch index, its local version (+cu121), or,
    from PyPI's default index, the variant of gpuvet's data with that very install command. None otherwise."""
    if pip.action != "install" or len(pip.specs) != 1:
        return None
    match = _SPEC.match(pip.specs[0])
    if match is None or match.group("name").lower() != "torch" or not match.group("version"):
        return None
    version, _, local = match.group("version").partition("+")
    backend = local or next((v for v in map(_variant, [pip.index or ""] + pip.extra) if v), None)
    if backend is None and pip.index is None and not pip.extra and not pip.find_links:
        framework = kb.framework("torch") if kb is not None else None
        release = next((r for r in framework.releases if r.version == version), None) if framework else None
        plain = re.sub(r"\s--force-reinstall\b", "", pip.raw)
        variant = next((v for v in release.variants.values() if v.install == plain), None) if release else None
        if variant is not None:
            backend = variant.name
    if backend is None:
        return None
    return TorchBuild(version, _cuda_of(backend), backend)


# ---------------------------------------------------------------------------------------------------- conda


def _conda_package(build: TorchBuild, channel: Dict[str, Any]) -> Optional[str]:
    """``pytorch==V <CUDA package> -c ...`` for a build PyTorch published as a conda package; None when it did not."""
    if build.backend == "cpu":
        published = build.version in channel["pytorch_cuda"] or build.version in channel["cudatoolkit"]
        return "pytorch==%s cpuonly -c pytorch" % build.version if published else None
    if build.cuda in channel["pytorch_cuda"].get(build.version, ()):
        return "pytorch==%s pytorch-cuda=%s -c pytorch -c nvidia" % (build.version, build.cuda)
    for cuda, channels in channel["cudatoolkit"].get(build.version, ()):
        if cuda == build.cuda:
            return "pytorch==%s cudatoolkit=%s %s" % (build.version, cuda, " ".join("-c " + c for c in channels.split()))
    return None


def as_conda(command: str, kb: KnowledgeBase) -> str:
    """``command`` for a conda environment: PyTorch's own conda package where it published one for that torch
    release and CUDA version (the channels of that era), else the pip command inside the environment, reason said."""
    return _each(command, lambda part: _as_conda(part, kb))


def _as_conda(command: str, kb: KnowledgeBase) -> Written:
    pip = parse_pip(command)
    if pip is None:
        return command, []
    if pip.action == "uninstall":
        return pip.pip_text, [pip.comment]
    channel = kb.installer_forms("conda_pytorch_channel")
    build = torch_build(pip, kb)
    if build is not None:
        package = _conda_package(build, channel)
        if package is not None:
            kept = [f for f in pip.flags if f in ("--force-reinstall", "--no-deps")]
            return " ".join(["conda install", package] + kept), [pip.comment]
        last = versions.parse(str(channel["last"]))
        mine = versions.parse(build.version)
        if last is not None and mine is not None and mine > last:
            why = "PyTorch publishes no conda package of torch %s (its pytorch channel ended with %s)" % (
                build.version, channel["last"])
        else:
            why = "no conda package of torch %s (%s) on PyTorch's channel in gpuvet's data" % (build.version, build.backend)
        return pip.pip_text, [pip.comment, why + ": pip inside the conda environment"]
    return pip.pip_text, [pip.comment, "no conda package of this build in gpuvet's data: pip inside the conda environment"]


# ----------------------------------------------------------------------------------------------------- pixi


def _pixi_spec(spec: str) -> str:
    """A pip requirement as a pixi PyPI dependency: a wheel URL gets its distribution's name (PEP 508 ``name @ url``)."""
    if "://" in spec and spec.endswith(".whl"):
        name = spec.rsplit("/", 1)[-1].split("-", 1)[0]
        return shlex.quote("%s @ %s" % (name, spec))
    return shlex.quote(spec)


def as_pixi(command: str, kb: KnowledgeBase) -> str:
    """``command`` for a pixi workspace: the build as a PyPI dependency (``pixi add --pypi``, its index with
    ``--index``), a CUDA torch build after ``pixi workspace system-requirements add cuda MAJOR``; what ``pixi add``
    cannot say (extra indexes, find-links, build isolation) is said in the comment, as the manifest's
    [pypi-options]."""
    return _each(command, lambda part: _as_pixi(part, kb))


def _as_pixi(command: str, kb: KnowledgeBase) -> Written:
    pip = parse_pip(command)
    if pip is None:
        return command, []
    names = [_SPEC.match(s).group("name") if _SPEC.match(s) else s for s in pip.specs]  # type: ignore[union-attr]
    if pip.action == "uninstall":
        return "pixi remove --pypi " + " ".join(map(shlex.quote, names)), [pip.comment]
    words = ["pixi add --pypi"] + [_pixi_spec(s) for s in pip.specs]
    if pip.index:
        words += ["--index", pip.index]
    notes: List[Optional[str]] = [pip.comment]
    if pip.extra:
        notes.append("first add %s to [pypi-options] extra-index-urls of the manifest" % ", ".join(pip.extra))
    if pip.find_links:
        notes.append("first add %s to [pypi-options] find-links of the manifest" % ", ".join(pip.find_links))
    if "--no-build-isolation" in pip.flags:
        notes.append("first list %s in [pypi-options] no-build-isolation of the manifest" % ", ".join(names))
    if "--no-deps" in pip.flags:
        notes.append("pixi also installs its dependencies (no --no-deps)")
    text = " ".join(words)
    if "--force-reinstall" in pip.flags:
        text += " && pixi reinstall " + " ".join(map(shlex.quote, names))
    build = torch_build(pip, kb)
    if build is not None and build.cuda:
        text = "pixi workspace system-requirements add cuda %s && %s" % (build.cuda.split(".")[0], text)
    return text, notes


# --------------------------------------------------------------------------------------------- all of them


def translate(command: str, installer: str, kb: KnowledgeBase) -> str:
    """One install command as ``installer`` writes it."""
    if installer == "uv":
        return " && ".join(as_uv(part.strip()) for part in command.split(" && "))
    if installer == "conda":
        return as_conda(command, kb)
    if installer == "pixi":
        return as_pixi(command, kb)
    return command


def install_lines(commands: Any, installer: str, kb: KnowledgeBase) -> Any:
    """Install commands (one string or a list) as ``installer`` writes them."""
    if installer == "pip" or commands is None:
        return commands
    if isinstance(commands, str):
        return translate(commands, installer, kb)
    return [translate(c, installer, kb) for c in commands]


def with_installer(report: Any, installer: str, kb: KnowledgeBase) -> Any:
    """The check report with every fix's commands written for ``installer`` ("pip": unchanged)."""
    if installer == "pip":
        return report

    source = {"conda": "conda_pytorch_channel", "pixi": "pixi"}.get(installer)
    cited = (str(kb.installer_forms(source)["source"]),) if source else ()

    def written(finding: Any) -> Any:
        if finding.fix is None or not finding.fix.commands:
            return finding
        commands = tuple(translate(c, installer, kb) for c in finding.fix.commands)
        sources = finding.sources + tuple(c for c in cited if c not in finding.sources and commands != finding.fix.commands)
        return finding._replace(fix=finding.fix._replace(commands=commands), sources=sources)

    targets = tuple(t._replace(findings=tuple(map(written, t.findings))) for t in report.targets)
    return report._replace(targets=targets, machine=tuple(map(written, report.machine)),
                          together=tuple(map(written, report.together)))


# --------------------------------------------------------------- what uv's --torch-backend=auto would pick here


def uv_auto_backends(driver: Optional[str], table: Sequence[Sequence[str]]) -> List[str]:
    """The PyTorch indexes uv searches with ``--torch-backend=auto`` on Linux, in its order: every CUDA backend whose
    minimum driver ``driver`` meets, then ``cpu``; ``cpu`` alone without a driver (kb/data/installers.toml)."""
    have = versions.parse(driver) if driver else None
    if have is None:
        return ["cpu"]
    chosen = []
    for backend, floor in table:
        minimum = versions.parse(floor)
        if minimum is not None and have >= minimum:
            chosen.append(backend)
    return chosen + ["cpu"]


def uv_auto_candidate(view: SnapshotView, target: Target, kb: KnowledgeBase) -> Optional[Candidate]:
    """The torch build ``uv pip install '<target>' --torch-backend=auto`` would install here: the newest release the
    target admits (and this Python runs) on the first index in uv's order that has one. None when gpuvet's
    knowledge base has no such build."""
    framework = kb.framework(target.name)
    if framework is None:
        return None
    python = view.python_version
    for backend in uv_auto_backends(view.driver_version, kb.uv_torch_backends()["linux"]):
        for release in framework.releases:  # newest first
            if not target.admits(release.version) or (python and release.supports_python(python) is False):
                continue
            variant = release.variant(backend)
            if variant is not None:
                return Candidate(framework, release, variant)
    return None


def uv_auto_findings(view: SnapshotView, targets: Sequence[Target], kb: KnowledgeBase) -> List[Finding]:
    """For each torch target: what ``--torch-backend=auto`` would install on this machine and whether that build
    runs here (uv reads the driver only, never the GPU's compute capability). An info note when it runs; a warning,
    with the failing layer's code and the backend to name instead, when it does not."""
    findings: List[Finding] = []
    source = str(kb.uv_torch_backends()["source"])
    for target in targets:
        if target.name != "torch":
            continue
        chosen = uv_auto_candidate(view, target, kb)
        if chosen is None:
            continue
        _, problems = evaluate(view, chosen, kb)
        failing = [f for f in problems if f.severity is Severity.FAIL]
        undecided = [f for f in problems if f.verdict is Verdict.UNKNOWN]
        facts: Dict[str, Any] = dict(target=target.text, build=chosen.label, backend=chosen.variant.name,
                                     driver=view.driver_version or "none", sources=(source,))
        if failing:
            better = first_fit(view, chosen.framework, kb, admit=lambda r: target.admits(r.version))
            commands: Tuple[str, ...] = ()
            if better is not None and better.variant.name != chosen.variant.name:
                commands = (as_uv(better.install),)
            findings.append(make("checks.uv_auto_fails", code=failing[0].code, layer=failing[0].layer,
                                 why=failing[0].title, commands=commands,
                                 fix="checks.uv_auto_fails.fix" if commands else None, **facts))
        elif not undecided:
            findings.append(make("checks.uv_auto_runs", **facts))
    return findings

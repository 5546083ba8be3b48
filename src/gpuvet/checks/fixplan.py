"""A fix is a plan the model verifies before it is printed.

An install command of a fix is read as data: the builds it installs (name, exact version, the variant its index or
its own install line names) and the ones it uninstalls. ``applied`` writes that plan into a copy of the snapshot as
pip would leave the environment -- each build's exact ``==`` pins installed with it (vLLM's torch), a ``>=`` pin
that the environment does not meet raised to the newest release the knowledge base holds (what pip's resolver
picks from PyPI) -- and the same check runs again on that copy. A command whose environment still fails is not printed: a fix that reinstalls the failing build, a torch that vLLM's own pin
rejects, an xformers that lets pip pull a torch this driver cannot run.

Commands gpuvet cannot read as a plan (a driver upgrade, ``gpuvet kb harvest``, ``nvidia-smi``) are kept as they
are: the model has nothing to apply them to. Pure functions: the check to run again is passed in.
"""

from __future__ import annotations

import copy
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from gpuvet.probe.names import canonical_name

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase
    from gpuvet.kb.records import Framework

# pip's options that take a value: their value is no requirement.
_VALUED = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "-c", "--constraint",
           "-r", "--requirement"}


class PipWords(NamedTuple):
    action: str  # install | uninstall
    specs: Tuple[str, ...]
    named_index: bool  # an --index-url / --extra-index-url / --find-links of its own


def parse_pip(command: str) -> Optional[PipWords]:
    """One ``pip install|uninstall`` command as words (``python -m pip``, ``uv pip`` alike); None for anything else.
    gpuvet.checks.installer reads commands fully for translating them; this reads only what a plan needs, without
    its dataclasses (a live check that verifies a fix imports neither, tests/robustness/test_startup_imports.py)."""
    import shlex

    try:
        words = shlex.split(command.split(" #")[0])
    except ValueError:
        return None
    if "pip" not in words and "pip3" not in words:
        return None
    rest = words[max(i for i, w in enumerate(words) if w in ("pip", "pip3")) + 1:]
    if not rest or rest[0] not in ("install", "uninstall"):
        return None
    specs, named_index, skip = [], False, False
    for word in rest[1:]:
        if skip:
            skip = False
            continue
        option = word.split("=", 1)[0]
        if option in _VALUED:
            named_index = named_index or option in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")
            skip = "=" not in word
        elif not word.startswith("-"):
            specs.append(word)
    return PipWords(rest[0], tuple(specs), named_index)


class Build(NamedTuple):
    """One build a plan installs: the framework's name, its release and the variant (None: not one gpuvet knows)."""

    name: str
    version: str
    variant: Optional[str]
    labelled: bool = False  # from an index of its own or named ``+label``: the version carries the label (2.8.0+cu128)


class Plan(NamedTuple):
    """What one fix option does to the environment."""

    installs: Tuple[Build, ...]
    uninstalls: Tuple[str, ...] = ()


def _spec_parts(spec: str) -> Optional[Tuple[str, str, Optional[str]]]:
    """``torch==2.7.0+cu128`` -> ("torch", "2.7.0", "cu128"); ``"jax[cuda12]==0.4.30"`` -> ("jax", ...); None for a
    spec without an exact version (pip would choose it, so the plan would not be exact)."""
    text = spec.strip("'\"")
    name, sep, version = text.partition("==")
    if not sep or not version:
        return None
    name = name.split("[")[0]
    public, _, local = version.partition("+")
    return canonical_name(name), public, (local or None)


def _variant_of(framework: Optional[Framework], version: str, local: Optional[str], command: str) -> Optional[str]:
    """The variant a command installs: the one whose own install line it is, else the label or index it names,
    else the release's default (what PyPI gives)."""
    release = framework.release(version) if framework is not None else None
    if release is None:
        return local
    for variant in release.variants.values():
        if variant.install and variant.install.strip() == command.strip():
            return variant.name
    named = release.variant(local) if local else None
    if named is not None:
        return named.name
    # The variant whose own index the command names (its companions added: torch==X torchvision==Y --index-url ...)
    for variant in release.variants.values():
        index = str(getattr(variant, "index_url", "") or "")
        if index.startswith("http") and (f" {index}" in command or f"={index}" in command):
            return variant.name
    return release.default_variant


def plan_of(commands: Sequence[str], kb: KnowledgeBase) -> Optional[Plan]:
    """The plan of one fix option (its uninstalls, then one install), or None when a command is not an exact
    ``pip install`` of builds (the model then has nothing to verify)."""
    installs: List[Build] = []
    uninstalls: List[str] = []
    for command in commands:
        for part in command.split(" && "):
            pip = parse_pip(part)
            if pip is None:
                return None
            if pip.action == "uninstall":
                uninstalls += [canonical_name(s) for s in pip.specs]
                continue
            for spec in pip.specs:
                parts = _spec_parts(spec)
                if parts is None:
                    if kb.framework(canonical_name(spec.strip("'\"").split("[")[0].split("=")[0].split("<")[0]
                                                   .split(">")[0])) is not None:
                        return None  # a framework pip would choose itself: no exact plan
                    continue  # a helper the build needs (ninja): nothing the check judges
                name, version, local = parts
                framework = kb.framework(name)
                installs.append(Build(framework.name if framework else name, version,
                                      _variant_of(framework, version, local, part), bool(local or pip.named_index)))
    return Plan(tuple(installs), tuple(uninstalls)) if installs else None


def _admits(spec: str, version: str) -> bool:
    try:
        return SpecifierSet(spec).contains(Version(version).public, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _installed_version(snapshot: Mapping[str, Any], name: str) -> Optional[str]:
    for package in (snapshot.get("packages") or {}).get("value") or []:
        if isinstance(package, dict) and canonical_name(str(package.get("name", ""))) == name:
            return package.get("version")
    return None


def _pulled(plan: Plan, kb: KnowledgeBase, installed: Callable[[str], Optional[str]]) -> List[Build]:
    """The builds pip brings with the plan's: each planned framework's ``requires`` pins, where the plan does not
    name them itself. An exact pin gives that release's default build; a range the environment does not meet gives
    the newest release the knowledge base holds in it (what pip's resolver takes from PyPI)."""
    named = {b.name for b in plan.installs}
    pulled: List[Build] = []
    for build in plan.installs:
        framework = kb.framework(build.name)
        release = framework.release(build.version) if framework is not None else None
        if release is None:
            continue
        variant = release.variants.get(build.variant or "") or release.default
        requires = dict((release.extra or {}).get("requires") or {})
        requires.update((getattr(variant, "extra", None) or {}).get("requires") or {})
        for package, spec in requires.items():
            name = canonical_name(package)
            pinned = kb.framework(name)
            if name in named or pinned is None:
                continue
            have = installed(name)
            if have is not None and _admits(spec, have):
                continue
            chosen = next((r for r in pinned.releases if _admits(spec, r.version)), None)
            if chosen is not None:
                pulled.append(Build(pinned.name, chosen.version, chosen.default_variant))
                named.add(name)
    return pulled


def applied(snapshot: Mapping[str, Any], plan: Plan, kb: KnowledgeBase) -> Dict[str, Any]:
    """A copy of ``snapshot`` as the environment would be once the plan ran."""
    result = dict(snapshot)
    builds = list(plan.installs) + _pulled(plan, kb, lambda name: _installed_version(snapshot, name))
    gone = {canonical_name(b.name) for b in builds} | set(plan.uninstalls)
    for build in builds:
        framework = kb.framework(build.name)
        if framework is not None:
            gone |= {canonical_name(d) for d in framework.distributions}
    packages = copy.deepcopy(snapshot.get("packages") or {"status": "found", "source": "plan"})
    kept = [p for p in packages.get("value") or [] if not (isinstance(p, dict)
                                                            and canonical_name(str(p.get("name", ""))) in gone)]
    for build in builds:
        framework = kb.framework(build.name)
        release = framework.release(build.version) if framework is not None else None
        label = f"+{build.variant}" if _labelled(build, release) else ""
        distribution = framework.distributions[0] if framework is not None else build.name
        kept.append({"name": canonical_name(distribution), "version": build.version + label})
        variant = release.variants.get(build.variant or "") if release is not None else None
        kept = _with_bundled(kept, variant)
    packages = dict(packages, status="found", value=kept)
    result["packages"] = packages
    frameworks = snapshot.get("frameworks")
    if isinstance(frameworks, dict) and isinstance(frameworks.get("value"), dict):
        value = {k: v for k, v in frameworks["value"].items() if canonical_name(k) not in gone}
        result["frameworks"] = dict(frameworks, value=value)
    return result


def _with_bundled(packages: List[Any], variant: Any) -> List[Any]:
    """The packages with the cuDNN and NCCL wheels a CUDA build pins (``nvidia-cudnn-cu12==9.10.2.21``) in place of
    the ones it replaces: pip installs a build's own pins with it."""
    if variant is None or not getattr(variant, "cuda", None):
        return packages
    major = str(variant.cuda).split(".")[0]
    for library, version in (("cudnn", variant.cudnn), ("nccl", variant.nccl)):
        if not version:
            continue
        prefix = f"nvidia-{library}-"
        packages = [p for p in packages if not (isinstance(p, dict) and str(p.get("name", "")).startswith(prefix))]
        packages.append({"name": f"{prefix}cu{major}", "version": str(version)})
    return packages


def _labelled(build: Build, release: Any) -> bool:
    """Does the installed version carry the variant as its local label? A build from its publisher's own index
    does (``torch==2.8.0+cu128``, which pip on Windows or Arm never swaps for PyPI's CPU wheel), and so does any
    build but the release's default; PyPI's default build does not."""
    if release is None or not build.variant or release.variant(build.variant) is None:
        return False
    return build.labelled or build.variant != release.default_variant


def target_text(build: Build, kb: KnowledgeBase) -> str:
    """The check target that judges ``build``: its exact version, and its variant where the version carries it."""
    framework = kb.framework(build.name)
    release = framework.release(build.version) if framework is not None else None
    if not _labelled(build, release):
        return f"{build.name}=={build.version}"
    return f"{build.name}=={build.version}+{build.variant}"


Check = Callable[[Mapping[str, Any], str], str]  # (snapshot, target) -> verdict value ("pass", "warn", "fail", ...)


def holds(snapshot: Mapping[str, Any], commands: Sequence[str], kb: KnowledgeBase, check: Check,
          also: Sequence[str] = ()) -> Optional[bool]:
    """Does the environment hold once ``commands`` ran (no target fails ``check``)? Each build the plan installs is
    checked, and each target of ``also`` whose framework the plan leaves in place. None: the commands are no plan
    gpuvet can read."""
    plan = plan_of(commands, kb)
    if plan is None:
        return None
    after = applied(snapshot, plan, kb)
    replaced = {b.name for b in plan.installs}
    targets = [target_text(b, kb) for b in plan.installs if kb.framework(b.name) is not None]
    targets += [t for t in also if _target_name(t, kb) not in replaced]
    if not targets:
        return None
    # A build the model cannot judge here (PyTorch's aarch64 wheel, whose arch list it has not read) is not refuted:
    # only a failure drops the option.
    return all(check(after, target) != "fail" for target in targets)


def _target_name(target: str, kb: KnowledgeBase) -> str:
    name = canonical_name(target.split("==")[0].split("[")[0].split(">")[0].split("<")[0].strip())
    framework = kb.framework(name)
    return framework.name if framework is not None else name


def options(commands: Sequence[str]) -> List[Tuple[str, ...]]:
    """A fix's commands as its options: each exact install with the pip steps just before it (an uninstall, an
    unpinned helper such as ``pip install ninja`` for a source build); other commands alone."""
    grouped: List[Tuple[str, ...]] = []
    pending: List[str] = []
    for command in commands:
        pip = parse_pip(command.split(" && ")[0])
        step = pip is not None and (pip.action == "uninstall" or not any(_spec_parts(s) for s in pip.specs))
        if step:
            pending.append(command)
            continue
        grouped.append(tuple(pending) + (command,))
        pending = []
    if pending:
        grouped.append(tuple(pending))
    return grouped

"""What a check is asked beyond the snapshot (``CheckOptions``), and what each option does to it.

``gpuvet check`` builds these options from its command line; a library caller builds them itself and gets, from
``gpuvet.checks.run_checks``, the very report the command prints. Everything here is pure: what must be read (the
project's files, the package indexes' answers) is read by the caller and passed in, the project already read
(``gpuvet.sources.project.read_project``) and the network in the snapshot (``gpuvet.sources.package_indexes``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from gpuvet.models import IMAGE_PREFIX

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

class CheckOptions(NamedTuple):
    """``targets``: requirement strings or ``image:REF`` (none: every installed framework); ``installer``: whose
    commands the fixes are written in (pip, uv, conda or pixi: ``checks.installer``); ``platform``: the GPU rental
    platform the user named (a profile of kb/data/platforms.toml; it wins over the probe's evidence); ``project``: a
    project's declared dependencies as ``read_project`` read them (its frameworks become targets, its lints machine
    findings). A NamedTuple, immutable like a frozen dataclass, because ``dataclasses`` (and the ``inspect`` and
    ``ast`` it imports) is kept off a live check's start-up (tests/robustness/test_startup_imports.py)."""

    targets: Tuple[str, ...] = ()
    installer: str = "pip"
    platform: Optional[str] = None
    project: Optional[Mapping[str, Any]] = None


def image_to_target(argument: str, kb: KnowledgeBase) -> str:
    """``image:pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime`` -> the torch build the official tag names; an image of
    a family the knowledge base knows by tag (nvidia/cuda, NGC containers) stays an ``image:`` target (a tag it does
    not list is judged unknown by the checks); any other reference is a usage error."""
    from gpuvet.errors import UsageError
    from gpuvet.ingest.project import image_target
    from gpuvet.kb.images import describe

    ref = argument[len(IMAGE_PREFIX):]
    target = image_target(ref)
    if target is not None:
        return target
    if describe(ref, kb) is not None:
        return argument
    raise UsageError.said("errors.image_unknown", argument=argument)


def judged_project(declared: Mapping[str, Any], kb: KnowledgeBase) -> Dict[str, Any]:
    """The project with its targets narrowed to what the check judges: requirements that name a framework the
    knowledge base covers (numpy or transformers are not a build to judge) and the base images it knows by tag; the
    rest listed as ``not_judged``."""
    from gpuvet.checks.targets import parse_target

    project = dict(declared)
    judged = [t for t in declared["targets"]
              if t.startswith(IMAGE_PREFIX) or kb.framework(parse_target(t).name) is not None]
    project["not_judged"] = [t for t in declared["targets"] if t not in judged]
    project["targets"] = judged
    return project


def targets_of(options: CheckOptions, project: Optional[Mapping[str, Any]], kb: KnowledgeBase) -> List[str]:
    """The targets the check judges: the options' own (an image tag that names a build, as that build), then the
    project's not already named."""
    targets = [image_to_target(t, kb) if t.startswith(IMAGE_PREFIX) else t for t in options.targets]
    if project is not None:
        targets += [t for t in project["targets"] if t not in targets]
    return targets


def with_platform(snapshot: Mapping[str, Any], name: str, kb: KnowledgeBase) -> Dict[str, Any]:
    """A copy of the snapshot with ``host.platform`` set to what the user named. An unknown name is a usage error
    that lists the known ones (``checks.platform.profile_of``)."""
    from gpuvet.checks.platform import profile_of
    from gpuvet.probe.facts import found

    profile_of(kb, name)
    copy = dict(snapshot)
    copy["host"] = dict(copy.get("host") or {}, platform=found({"name": name, "evidence": []}, "--platform"))
    return copy

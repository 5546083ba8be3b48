"""From a TARGET to the exact build to judge, and from a failing build to the builds that would fit.

Resolution rules (the knowledge base never guesses):
- ``torch==2.1.2+cu121``: exactly that release and variant; an unknown release or variant is ``unknown_version``.
- ``torch==2.1.2``: that release, in the variant installed (when the snapshot has it installed) or the variant plain
  ``pip install`` gives (the release's PyPI default).
- ``torch`` / ``torch>=2.1``: the installed version when it satisfies the target; else the newest admitted release
  whose some variant fits the machine; else the newest admitted release in its default variant (which then fails,
  with the fitting alternatives in its fixes).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version

from gpuvet.checks.chain import LAYERS, Candidate, evaluate, installed_build, major_minor, on_platform
from gpuvet.checks.targets import Target
from gpuvet.findings import make
from gpuvet.kb.records import Variant, variant_cuda
from gpuvet.models import Finding, Severity, Verdict, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase
    from gpuvet.kb.records import Framework, Release

    VariantTest = Callable[[Release, Variant], bool]  # does this build of the release answer the target (its extra)?


class Resolution(NamedTuple):
    """The build a target resolves to, or the findings that say why none was chosen."""

    candidate: Optional[Candidate]
    findings: Tuple[Finding, ...] = ()  # unknown_version and friends when no candidate could be chosen
    note: Optional[Finding] = None  # e.g. "plain pip install gives another variant"


def _unknown(title_id: str, detail_id: str, target: Target, source: Tuple[str, ...] = (), commands: Tuple[str, ...] = (),
             **params: Any) -> Finding:
    key = title_id.rsplit(".", 1)[0]  # checks.unknown.<what>: the kind of unknown (framework, release, variant)
    assert detail_id == key + ".detail", detail_id
    return make(key, target=target.text, sources=source, commands=commands, **params)


def _harvest_command(target: Target, version: str) -> Tuple[str, ...]:
    """The command that teaches gpuvet a published release from its own wheel (``gpuvet kb harvest``): the fix of
    a release the shipped data lacks, whether too new, too old or a hole."""
    return (f"gpuvet kb harvest {target.name}=={version}",)


def _version(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except (InvalidVersion, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
        return None


def _why_unknown(framework: Any, version: str, kb: KnowledgeBase, target: Target) -> Finding:
    known = [r.version for r in framework.releases]
    wanted = _version(version)
    params = dict(
        name=framework.display,
        version=version,
        oldest=known[-1] if known else "-",
        newest=known[0] if known else "-",
        kb=kb.version,
    )
    if wanted is not None and (wanted.is_prerelease or wanted.is_devrelease):
        return _unknown("checks.unknown.prerelease.title", "checks.unknown.prerelease.detail", target, **params)
    if wanted is not None and known and wanted > Version(known[0]):
        return _unknown("checks.unknown.newer.title", "checks.unknown.newer.detail", target,
                       commands=_harvest_command(target, version), **params)
    if wanted is not None and known and wanted < Version(known[-1]):
        return _unknown("checks.unknown.older.title", "checks.unknown.older.detail", target,
                       commands=_harvest_command(target, version), **params)
    return _unknown("checks.unknown.release.title", "checks.unknown.release.detail", target,
                       commands=_harvest_command(target, version), **params)


def _unknown_extras(framework: Any, release: Any, target: Target) -> Finding:
    return _unknown(
        "checks.unknown.variant.title",
        "checks.unknown.variant.detail",
        target,
        name=framework.display,
        version=release.version,
        variant="[" + ",".join(sorted(target.extras)) + "]",
        known=", ".join(release.variants) or "-",
    )


# A conda build: conda-forge's builds set their own TORCH_CUDA_ARCH_LIST (its recipe, below), which is not the list
# of PyTorch's wheels, and they bring their own Python, cuDNN and NCCL in the environment; the pytorch channel's builds
# are not in the data either.
CONDA_RECIPE = "https://github.com/conda-forge/pytorch-cpu-feedstock/blob/main/recipe/build.sh"
_CONDA_LABEL = re.compile(r"^(?:cu(?P<major>\d+)(?P<minor>\d)|(?P<cpu>cpu))\.conda$")


def conda_build(framework: Any, release: Any, local: str) -> Optional[Candidate]:
    """``torch==2.8.0+cu129.conda`` (what gpuvet reads from a pixi.lock): a conda build of that release for CUDA 12.9.
    What the data can judge is judged (the driver the CUDA version needs, the GPU's CUDA support); its compiled
    architectures are unknown, never borrowed from PyPI's wheel; Python and glibc are the environment's own."""
    match = _CONDA_LABEL.match(local.lower())
    if match is None:
        return None
    cuda = None if match.group("cpu") else "%d.%s" % (int(match.group("major")), match.group("minor"))
    variant = Variant(name=local.lower(), cuda=cuda, cudnn=None, nccl=None, sass=(), ptx=(), index_url=None,
                      install="pixi install --locked", source=CONDA_RECIPE, extra={"conda": True})
    plain = release._replace(python="", glibc_min=None, variants={variant.name: variant},
                             default_variant=variant.name)
    return Candidate(framework, plain, variant)


def _variant_for_installed(release: Any, installed: Optional[Mapping[str, Any]]) -> Optional[Any]:
    if installed is None:  # callers pass it with an installed version, so never None
        return None
    local = (_version(installed.get("version")) or Version("0")).local
    if local:
        variant = release.variant(local)
        if variant is not None:
            return variant
    if "cuda" in installed:
        cuda = installed.get("cuda")
        if not cuda:
            return release.variant("cpu")
        return release.variant(major_minor(cuda) or cuda)
    return None


def variant_extras(framework: Any, extras: Any) -> Optional[Any]:
    """A filter ``(release, variant) -> bool`` for targets whose extras name a build (``jax[cuda12]``,
    ``tensorflow[and-cuda]``), or None when the extras name none.

    An extra names a variant when it is the variant's name or appears as ``[extra]`` in its install command: the
    knowledge base's own install idioms are the mapping, so no framework is special-cased here. Extras that name no
    variant anywhere in the framework (``vllm[audio]``) do not restrict anything.
    """
    wanted = {extra.lower() for extra in (extras or ())}
    if not wanted:
        return None

    def named(variant: Any) -> bool:
        install = (variant.install or "").lower()
        return variant.name.lower() in wanted or any(f"[{extra}]" in install for extra in wanted)

    if not any(named(v) for release in framework.releases for v in release.variants.values()):
        return None
    return lambda release, variant: named(variant)


def candidates(framework: Framework, admit: Callable[[Release], bool] = lambda release: True,
               variant_ok: Optional[VariantTest] = None) -> Iterator[Candidate]:
    """Every (release, variant) of a framework, newest release first, the PyPI default variant first within it."""
    for release in framework.releases:
        if not admit(release):
            continue
        names = [name for name in release.variants if variant_ok is None or variant_ok(release, release.variants[name])]
        if release.default_variant in names:
            names.remove(release.default_variant)
            names.insert(0, release.default_variant)
        for name in names:
            yield Candidate(framework, release, release.variants[name])


def fits(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> bool:
    """The build runs here as the machine stands: no failing finding and nothing the model cannot judge.

    Layer by layer, stopping at the first finding that settles "no": the search for a build that fits weighs dozens
    of candidates per target (bench/bench_snapshots.py). A plain build is weighed as pip installs it on this platform
    (chain.on_platform: PyPI's Arm wheel of torch 2.5-2.10 is a CPU build)."""
    candidate = on_platform(view, candidate, kb)
    for layer in LAYERS:
        for finding in layer(view, candidate, kb).findings:
            if finding.severity is Severity.FAIL or finding.verdict is Verdict.UNKNOWN:
                return False
    return True


def first_fit(view: SnapshotView, framework: Framework, kb: KnowledgeBase, admit: Callable[[Release], bool] = lambda release: True,
              variant_ok: Optional[VariantTest] = None) -> Optional[Candidate]:
    """The newest build of ``framework`` that fits the machine as it stands (GPU builds before CPU builds)."""
    cpu_fallback = None
    for candidate in candidates(framework, admit, variant_ok):
        if not candidate.variant.cuda:
            if cpu_fallback is None and view.gpus == [] and fits(view, candidate, kb):
                cpu_fallback = candidate
            continue
        if fits(view, candidate, kb):
            return candidate
    return cpu_fallback


def _paired_build(release: Any, local: str) -> Any:
    """A package built once per torch build (torchvision, torchaudio: ``cuda_from = "torch"``) names the torch build it
    goes with in its local label (``+cu128``): its one variant, with the CUDA the label names; None otherwise. The
    libraries read from PyPI's wheel are that build's only when the wheel was built with the same CUDA; another
    build's code is not known (its arch lists stay unknown, never borrowed)."""
    plain = [v for v in release.variants.values() if v.extra.get("cuda_from") == "torch"]
    cuda = variant_cuda(local)
    if len(plain) != 1 or cuda is None:
        return None
    variant = plain[0]._replace(name=local.lower(), cuda=cuda, extra=dict(plain[0].extra, torch_build=local.lower()))
    if major_minor(variant.extra.get("ptx_cuda")) != cuda:
        extra = {k: v for k, v in variant.extra.items() if k not in ("libraries", "arch_source", "ptx_cuda", "aarch64")}
        variant = variant._replace(sass=(), ptx=(), extra=extra)
    return variant


def _post_release(framework: Any, pinned: str, local: Optional[str]) -> Tuple[Any, Optional[str]]:
    """A post release the knowledge base does not list as its own is its base release: ``vllm==0.6.3.post1`` is
    0.6.3 rebuilt (same CUDA, same pins). Paddle names its CUDA builds that way on its own index
    (``paddlepaddle-gpu==2.6.1.post117`` = 2.6.1 built with CUDA 11.7), so there a post number >= 100 names the
    variant (``cu117``)."""
    version = _version(pinned)
    if version is None or version.post is None:
        return None, local
    base = framework.release(version.base_version)
    if base is None:
        return None, local
    if local is None and version.post >= 100 and framework.name == "paddlepaddle":
        local = f"cu{version.post}"
    return base, local


def resolve(view: SnapshotView, target: Target, kb: KnowledgeBase) -> Resolution:
    framework = kb.framework(target.name)
    if framework is None:
        import difflib

        names = [f.name for f in kb.frameworks()] + [d for f in kb.frameworks() for d in f.distributions]
        close = difflib.get_close_matches(target.name, names, n=1, cutoff=0.6)
        suggestion = msg("checks.unknown.did_you_mean", name=close[0]) if close else ""
        return Resolution(None, (_unknown("checks.unknown.framework.title", "checks.unknown.framework.detail", target,
                                          name=target.name, kb=kb.version, suggestion=suggestion),))
    installed = installed_build(view, framework)
    installed_version = _version(installed.get("version")) if installed else None
    variant_ok = variant_extras(framework, target.extras)

    if target.pinned is not None:
        release = framework.release(target.pinned)
        local = target.local
        if release is None:
            release, local = _post_release(framework, target.pinned, local)
        if release is None:
            return Resolution(None, (_why_unknown(framework, target.pinned, kb, target),))
        if local:
            variant = release.variant(local) or _paired_build(release, local)
            conda = conda_build(framework, release, local) if variant is None else None
            if conda is not None:
                return Resolution(conda)
            if variant is None:
                return Resolution(
                    None,
                    (
                        _unknown(
                            "checks.unknown.variant.title",
                            "checks.unknown.variant.detail",
                            target,
                            name=framework.display,
                            version=release.version,
                            variant=local,
                            known=", ".join(release.variants) or "-",
                        ),
                    ),
                )
            return Resolution(Candidate(framework, release, variant))
        variant = None
        if installed_version is not None and installed_version.public == Version(release.version).public:
            variant = _variant_for_installed(release, installed)
        if variant_ok is not None:
            # ``jax[cuda12]==0.4.30``: the extra chooses the build; a release without it is said, not swapped.
            named = [v for v in release.variants.values() if variant_ok(release, v)]
            if not named:
                return Resolution(None, (_unknown_extras(framework, release, target),))
            default = release.default
            variant = variant if variant in named else (default if default in named else named[0])
        variant = variant or release.default or next(iter(release.variants.values()), None)
        if variant is None:
            return Resolution(None, (_why_unknown(framework, target.pinned, kb, target),))
        return Resolution(Candidate(framework, release, variant))

    # A range or a bare name.
    if installed_version is not None and target.admits(installed_version.public):
        release = framework.release(installed_version.public)
        if release is None:
            return Resolution(None, (_why_unknown(framework, str(installed_version), kb, target),))
        variant = _variant_for_installed(release, installed) or release.default
        if variant is not None and (variant_ok is None or variant_ok(release, variant)):
            return Resolution(Candidate(framework, release, variant))
    admitted = [r for r in framework.releases if target.admits(r.version)]
    if variant_ok is not None:
        admitted = [r for r in admitted if any(variant_ok(r, v) for v in r.variants.values())]
    if not admitted:
        newest_version = framework.releases[0].version if framework.releases else "-"
        return Resolution(
            None,
            (_unknown("checks.unknown.range.title", "checks.unknown.range.detail", target, name=framework.display, newest=newest_version, kb=kb.version),),
        )
    fitting = first_fit(view, framework, kb, admit=lambda r: target.admits(r.version), variant_ok=variant_ok)
    newest = admitted[0]
    default = newest.default or next(iter(newest.variants.values()))
    if variant_ok is not None and not variant_ok(newest, default):
        # What ``pip install jax[cuda12]`` gives is the newest release in the build the extra names.
        default = next(v for v in newest.variants.values() if variant_ok(newest, v))
    if fitting is None:
        return Resolution(Candidate(framework, newest, default))
    note = None
    if (fitting.release.version, fitting.variant.name) != (newest.version, default.name):
        _, default_findings = evaluate(view, Candidate(framework, newest, default), kb)
        reasons = [f for f in default_findings if f.severity is Severity.FAIL]
        if reasons:
            plain = f"{framework.name}=={newest.version} ({default.name})"
            note = make("checks.plain_install_differs", layer=reasons[0].layer, plain=plain, chosen=fitting.label,
                        why=reasons[0].title, build=fitting.label, fix="checks.install_this.fix",
                        commands=(fitting.install,))
    return Resolution(fitting, note=note)


def alternatives(view: SnapshotView, candidate: Candidate, kb: KnowledgeBase) -> List[Candidate]:
    """Builds that fit where ``candidate`` does not: the same release in another variant, then the newest release."""
    found: List[Candidate] = []
    same = first_fit(view, candidate.framework, kb, admit=lambda r: r.version == candidate.release.version)
    if same is not None and same.variant.cuda:
        found.append(same)
    newest = first_fit(view, candidate.framework, kb)
    if newest is not None and all(newest.label != c.label for c in found):
        found.append(newest)
    return found


# ------------------------------------------------------------------------------------------------ distribution names
def distribution_note(framework: Any, name: str, version: str) -> Optional[Mapping[str, Any]]:
    """What the distribution ``name`` gives at release ``version``: the ``[[distribution_note]]`` record of the
    framework file that covers it (``tensorflow-gpu`` >= 2.12 installs nothing; ``paddlepaddle`` is the CPU build),
    or None where the name is just the framework's."""
    from gpuvet.kb import versions
    from gpuvet.probe.names import canonical_name

    notes: Iterable[Mapping[str, Any]] = framework.extra.get("distribution_note", ())
    for note in notes:
        if canonical_name(str(note.get("name", ""))) != name:
            continue
        if not note.get("releases") or versions.in_specifier(version, str(note["releases"])):
            return note
    return None


def distribution_named(view: SnapshotView, target: Target, candidate: Candidate, kb: KnowledgeBase
                       ) -> Tuple[Candidate, Optional[Finding]]:
    """The one rule over the distribution names people still type: the build the named distribution really gives,
    and a failure when it gives none.

    - ``build = "none"`` (``tensorflow-gpu`` >= 2.12, pinned or resolved so): pip installs nothing; the finding's fix
      installs the same release under the name the note says to ``use`` (``tensorflow[and-cuda]==X``).
    - ``build = "cpu"`` (``paddlepaddle``): the release's CPU build, judged as such by the chain (``cpu_only_build``
      on a machine with GPUs, its fix the release's CUDA build, ``paddlepaddle-gpu``). A target that names a build
      (``paddlepaddle==2.6.1+cu118``) or a release whose installed build the snapshot reads is judged as it is.
    - ``build = "cuda"`` or no note: the candidate as resolved."""
    from gpuvet.checks.chain import sources_of

    note = distribution_note(candidate.framework, target.name, candidate.release.version)
    if note is None:
        return candidate, None
    build = note.get("build")
    version = candidate.release.version
    if build == "none":
        use = str(note.get("use") or candidate.framework.name)
        command = f'pip install "{use}=={version}"'
        return candidate, make("checks.distribution_removed", name=target.name, version=version,
                               last=note.get("last", "-"), stub=note.get("stub", "-"), framework=candidate.framework.display, use=use,
                               expected=f"{use}=={version}", actual=target.text,
                               commands=(command,), sources=sources_of(note))
    if build == "cpu" and candidate.variant.cuda and not target.local:
        installed = installed_build(view, candidate.framework)
        installed_version = _version(installed.get("version")) if installed else None
        if installed_version is not None and installed_version.public == Version(version).public:
            return candidate, None
        cpu = Variant(name="cpu", cuda=None, cudnn=None, nccl=None, sass=(), ptx=(), index_url=None,
                      install=f"pip install {target.name}=={version}", source=str(note.get("source", "")),
                      extra={"distribution_cpu": target.name})
        return candidate._replace(variant=cpu), None
    return candidate, None


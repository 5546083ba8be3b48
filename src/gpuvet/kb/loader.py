"""Reading the data files: raw TOML per file (cached), validation, and conversion into record types.

Every "record" is a top-level table or an element of an array of tables (at any depth); every record must carry a
non-empty ``source``. Framework files share one schema (docs/KB.md); unknown keys are kept in ``extra``.
"""

from __future__ import annotations

import os
from functools import lru_cache, partial
from typing import TYPE_CHECKING, AbstractSet, Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from gpuvet.errors import InputError, KnowledgeBaseError
from gpuvet.kb import versions

# Where the files are and their names have their home in kb/places.py (which the overlay reader imports too, so the
# loader and the overlay never import each other); the loader's callers reach them here as before.
from gpuvet.kb.places import DATA as DATA
from gpuvet.kb.places import FRAMEWORKS as FRAMEWORKS
from gpuvet.kb.places import HEADS as HEADS
from gpuvet.kb.places import data_path as data_path
from gpuvet.kb.places import find_framework_file as find_framework_file
from gpuvet.kb.places import framework_files as framework_files
from gpuvet.kb.places import framework_heads as framework_heads
from gpuvet.kb.places import heads_text as heads_text
from gpuvet.kb.places import is_shipped
from gpuvet.kb.places import normalize_name as normalize_name
from gpuvet.kb.places import raw as raw
from gpuvet.kb.places import shipped_framework_files as shipped_framework_files
from gpuvet.kb.places import shipped_framework_heads as shipped_framework_heads
from gpuvet.kb.records import Framework, Release, Releases, Variant, variant_key

if TYPE_CHECKING:
    from pathlib import Path

    from packaging.version import Version


def __getattr__(name: str) -> Any:
    if name in ("DATA_DIR", "FRAMEWORK_DIR"):
        from pathlib import Path

        return Path(DATA if name == "DATA_DIR" else FRAMEWORKS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Keys that name a record inside its array, tried in order, for record ids like "torch:release[2.1.2].variant[cu121]".
_ID_KEYS = ("version", "name", "cuda", "branch", "major", "sm", "distribution", "framework", "id", "key")


def data_files() -> Dict[str, "Path"]:
    """Every data file by its short name: ``cuda_driver``, ``gpuvet``, ..., frameworks by their stem (``torch``)."""
    from pathlib import Path

    files = {path.stem: path for path in sorted(Path(DATA).glob("*.toml"))}
    for path in sorted(Path(FRAMEWORKS).glob("*.toml")):
        files.setdefault(path.stem, path)
    return files


def records(document: Mapping[str, Any], prefix: str = "") -> Iterator[Tuple[str, Mapping[str, Any]]]:
    """(record id, table) for every top-level table and every array-of-tables element, at any depth."""
    for key, value in document.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and not prefix and value and all(isinstance(v, dict) for v in value.values()):
            for name, child in value.items():  # a table of named records: [metric.matmul], [metric.memcpy] ...
                yield f"{path}[{name}]", child
                yield from records(child, f"{path}[{name}]")
        elif isinstance(value, dict) and not prefix:
            yield path, value
            yield from records(value, path)
        elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            for index, item in enumerate(value):
                item_id = f"{path}[{_record_name(item, index)}]"
                yield item_id, item
                yield from records(item, item_id)


def _record_name(item: Mapping[str, Any], index: int) -> str:
    for key in _ID_KEYS:
        if key in item and isinstance(item[key], (str, int)):
            return str(item[key])
    return str(index)


def sources_of(value: Any) -> Tuple[str, ...]:
    """A record's source as a tuple: a string or a list of strings are both accepted."""
    if isinstance(value, str):
        return (value.strip(),) if value.strip() else ()
    if isinstance(value, list):
        return tuple(v.strip() for v in value if isinstance(v, str) and v.strip())
    return ()


def missing_sources(name: str, document: Mapping[str, Any]) -> List[str]:
    return [f"{name}:{rid}" for rid, record in records(document) if not sources_of(record.get("source"))]


# ---------------------------------------------------------------------------------------------------- frameworks

# The hint of a record the loader refuses: the data file is wrong (shipped, or the user's overlay).
_FIX_DATA = "errors.kb_fix_data"


def _require(record: Mapping[str, Any], keys: Tuple[str, ...], where: str) -> None:
    for key in keys:
        if record.get(key) in (None, "", [], {}):
            raise KnowledgeBaseError.said_with_hint("errors.kb_field_missing", _FIX_DATA, where=where, field=repr(key))


def _source(record: Mapping[str, Any], where: str) -> str:
    found = sources_of(record.get("source"))
    if not found:
        raise KnowledgeBaseError.said("errors.kb_no_source", where=where)
    return "; ".join(found)


def _extra(record: Mapping[str, Any], known: Tuple[str, ...]) -> Dict[str, Any]:
    return {k: v for k, v in record.items() if k not in known}


_VARIANT_KEYS = ("name", "cuda", "cudnn", "nccl", "sass", "ptx", "index_url", "install", "source")
_RELEASE_KEYS = ("version", "released", "python", "default_variant", "variant", "companions", "glibc_min", "source")
_FRAMEWORK_KEYS = ("name", "display", "distributions", "source")


def _variant(record: Mapping[str, Any], where: str) -> Variant:
    _require(record, ("name",), where)
    cuda = record.get("cuda")
    if cuda is not None and versions.cuda_major_minor(str(cuda)) is None:
        raise KnowledgeBaseError.said_with_hint("errors.kb_cuda_version", _FIX_DATA, where=where, cuda=repr(cuda))
    return Variant(
        name=str(record["name"]),
        cuda=str(cuda) if cuda is not None else None,
        cudnn=record.get("cudnn"),
        nccl=record.get("nccl"),
        sass=tuple(record.get("sass", ())),
        ptx=tuple(record.get("ptx", ())),
        index_url=record.get("index_url"),
        install=record.get("install"),
        source=_source(record, where),
        extra=_extra(record, _VARIANT_KEYS),
    )


def _release(record: Mapping[str, Any], where: str) -> Release:
    _require(record, ("version",), where)
    version = str(record["version"])
    if versions.parse(version) is None:
        raise KnowledgeBaseError.said_with_hint("errors.kb_version", _FIX_DATA, where=where, version=repr(version))
    if record.get("python") and versions.in_specifier("3.11", str(record["python"])) is None:
        raise KnowledgeBaseError.said_with_hint("errors.kb_python", _FIX_DATA, where=where)
    variants: Dict[str, Variant] = {}
    for item in record.get("variant", ()):
        variant = _variant(item, f"{where}.variant[{item.get('name', '?')}]")
        variants[variant.name] = variant
    default = record.get("default_variant")
    if default is not None and default not in variants:
        raise KnowledgeBaseError.said_with_hint("errors.kb_default_variant", _FIX_DATA, where=where,
                                                default=repr(default))
    return Release(
        version=version,
        released=record.get("released"),
        python=str(record.get("python") or ""),  # "" = the data does not say
        default_variant=default,
        variants=variants,
        companions=dict(record.get("companions", {})),
        glibc_min=record.get("glibc_min"),
        source=_source(record, where),
        extra=_extra(record, _RELEASE_KEYS),
    )


def framework_from(path: Union[str, "Path"]) -> Framework:
    document = raw(path)
    head = document.get("framework")
    file_name = os.path.basename(os.fspath(path))
    stem = os.path.splitext(file_name)[0]
    where = f"{stem}:framework"
    if not isinstance(head, dict) or not head.get("name") or not head.get("distributions"):
        if not is_shipped(path):  # the user's overlay file: their input to fix (exit 2)
            raise InputError(f"knowledge-base overlay file {os.fspath(path)} needs a [framework] table with name and "
                             "distributions", hint="see docs/KB.md, \"Framework files\"")
    if not isinstance(head, dict):
        raise KnowledgeBaseError.said_with_hint("errors.kb_no_framework", _FIX_DATA, file=file_name)
    _require(head, ("name", "distributions"), where)
    spec = document.get("libraries")
    name = str(head["name"])
    # Each release is checked and joined with its wheels' libraries only when asked for (a check asks for one, the
    # installed frameworks' search none): see Releases. A version that does not parse is refused here, as ever.
    shipped: List[Tuple[Any, Callable[[], Release]]] = []
    for item in document.get("release", ()):
        where_release = f"{stem}:release[{item.get('version', '?')}]"
        version = versions.parse(str(item.get("version")))
        if version is None:
            _release(item, where_release)  # raises: no version, or one that does not parse
            continue
        shipped.append((version, partial(_made_release, name, item, where_release, spec)))
    known = {version for version, _make in shipped}
    releases = Releases(shipped, overlay_at=lambda wanted: next(iter(_overlay_releases(
                            name, known, spec, _harvested_at(name, str(wanted)))), None),
                        overlay_all=lambda: _overlay_releases(name, known, spec))
    extra = _extra(head, _FRAMEWORK_KEYS)
    extra.update({k: v for k, v in document.items() if k not in ("framework", "release")})
    return Framework(
        name=name,
        display=str(head.get("display") or head["name"]),
        distributions=tuple(head["distributions"]),
        releases=releases,
        source=_source(head, where),
        extra=extra,
    )


def _made_release(framework: str, record: Mapping[str, Any], where: str, spec: Optional[Mapping[str, Any]]) -> Release:
    return _with_harvest(framework, _release(record, where), spec)


HarvestIndex = Dict[Tuple[str, str], List[Mapping[str, Any]]]  # (version, platform) -> builds read from wheels


@lru_cache(maxsize=None)
def _shipped_harvest(framework: str) -> HarvestIndex:
    """(version, platform) -> the builds of one framework read from real wheels (data/harvested/<framework>.toml)."""
    index: HarvestIndex = {}
    path = data_path("harvested", f"{framework}.toml")
    for build in raw(path).get("build", ()) if os.path.isfile(path) else ():
        index.setdefault((str(build["version"]), build.get("platform", "x86_64")), []).append(build)
    return index


# framework -> its shipped builds with the whole overlay's (_harvested_of), and, before that is read, framework ->
# parsed version -> that version's entries alone (_harvested_at). Cleared by forget_harvest.
_WHOLE: Dict[str, HarvestIndex] = {}
_ONE: Dict[str, Dict[Any, HarvestIndex]] = {}


def _harvested_of(framework: str) -> HarvestIndex:
    """The shipped builds of one framework (:func:`_shipped_harvest`) with what the user's overlay adds."""
    if framework not in _WHOLE:
        _WHOLE[framework] = _with_overlay(framework, _shipped_harvest(framework), None)
    return _WHOLE[framework]


@lru_cache(maxsize=None)
def _by_version(framework: str, whole: bool) -> Dict[Any, HarvestIndex]:
    """Parsed version -> its entries of :func:`_harvested_of` (``whole``) or of :func:`_shipped_harvest`, in order."""
    groups: Dict[Any, HarvestIndex] = {}
    for key, builds in (_harvested_of(framework) if whole else _shipped_harvest(framework)).items():
        groups.setdefault(versions.parse(key[0]), {})[key] = builds
    return groups


def _harvested_at(framework: str, version: str) -> HarvestIndex:
    """The entries of :func:`_harvested_of` whose version is ``version`` (compared parsed), in the same order and
    with the same builds, for the price of that version alone: until the whole overlay is read, the overlay's files
    named for another release are not opened (a check asks for one release; issue 30)."""
    wanted = versions.parse(version)
    if wanted is None:
        return {key: builds for key, builds in _harvested_of(framework).items() if key[0] == version}
    if framework in _WHOLE:
        return _by_version(framework, True).get(wanted, {})
    one = _ONE.setdefault(framework, {})
    if wanted not in one:
        one[wanted] = _with_overlay(framework, _by_version(framework, False).get(wanted, {}), wanted)
    return one[wanted]


def forget_harvest() -> None:
    """Forget the builds read so far (shipped and overlay), so the next load reads the overlay as it is now."""
    _WHOLE.clear()
    _ONE.clear()
    _by_version.cache_clear()
    _shipped_harvest.cache_clear()


def _with_overlay(framework: str, index: HarvestIndex, version: Any) -> HarvestIndex:
    # -- hook: the user's overlay (gpuvet kb harvest), read only when it exists; it adds, never overrides. Each
    # (version, platform) is merged on its own (overlay.compare), so merging one version's builds gives that
    # version's entries of the whole merge.
    from gpuvet.kb import overlay

    keyed = {(framework, version, platform): builds for (version, platform), builds in index.items()}
    overlay.merge_into(keyed, framework=framework, version=version)
    return {(version, platform): builds for (name, version, platform), builds in keyed.items() if name == framework}


def _overlay_releases(framework: str, known: AbstractSet["Version"], spec: Optional[Mapping[str, Any]] = None,
                      harvested: Optional[HarvestIndex] = None) -> List[Release]:
    """Releases the shipped data lacks, made from the user's own readings of their wheels (``gpuvet kb harvest``).

    Only what the wheel itself says goes in: Requires-Python, the CUDA of its version module or of its pinned
    runtime (for a package that pins torch and ships no runtime of its own, the CUDA of that torch's PyPI build as
    the knowledge base knows it), the exact cuDNN / NCCL pins, the torch pin, and the SASS / PTX read from its
    binaries. A wheel whose CUDA cannot be told that way gives no release: unknown stays unknown. ``harvested``:
    the builds to make them from (one version's, :func:`_harvested_at`); all of the framework's by default."""
    by_version: Dict[str, List[Mapping[str, Any]]] = {}
    for (version, platform), builds in (_harvested_of(framework) if harvested is None else harvested).items():
        parsed = versions.parse(version)
        if platform != "x86_64" or parsed is None or parsed in known:
            continue
        usable = [b for b in builds if b.get("overlay_file")]
        if usable:
            by_version[version] = usable
    out = []
    for version, builds in by_version.items():
        variants: Dict[str, Variant] = {}
        requires: Dict[str, str] = {}
        for build in builds:
            variant = overlay_variant(framework, version, build, spec)
            if variant is not None:
                variants.setdefault(variant.name, variant)
            for pinned in build.get("requires", ()):  # torch and xformers pins, as the shipped records keep them
                name, _, version_pinned = str(pinned).split(";")[0].partition("==")
                if name.lower() in ("torch", "xformers") and version_pinned:
                    requires.setdefault(name.lower(), "==" + version_pinned)
            if build.get("requires_torch"):
                requires.setdefault("torch", "==" + str(build["requires_torch"]))
        if not variants:
            continue
        first = builds[0]
        where = f"the user overlay ({first['overlay_file']})"
        out.append(Release(
            version=version,
            released=None,
            python=str(first.get("requires_python") or ""),
            default_variant=next(iter(variants)),
            variants=variants,
            companions={},
            glibc_min=None,
            source="; ".join(dict.fromkeys(str(b["source"]) for b in builds)) + f"; learned into {where}",
            extra={"requires": requires, "overlay_file": first["overlay_file"],
                   "notes": f"learned from its wheel by gpuvet kb harvest ({where}); not in the shipped data"},
        ))
    return out


def pinned_torch_build(version: str, torch_file: Optional[Union[str, "Path"]] = None) -> Optional[Tuple[str, str]]:
    """(CUDA, source) of torch VERSION's plain-``pip install`` build as the torch file writes it: the CUDA of a
    package that pins torch and ships no CUDA runtime of its own (vLLM, SGLang). None when the file does not have
    that release or its default build has no CUDA. The one home of that rule (the loader's overlay releases and
    tools/import_overlay.py both ask here)."""
    path = torch_file or find_framework_file("torch")
    wanted = versions.parse(version)
    if path is None or wanted is None:
        return None
    for release in raw(path).get("release", ()):
        if versions.parse(str(release.get("version"))) == wanted:
            for variant in release.get("variant", ()):
                if variant.get("name") == release.get("default_variant") and variant.get("cuda"):
                    return str(variant["cuda"]), str(variant.get("source") or "")
    return None


def pinned_vllm_range_cuda(specifier: str, vllm_file: Optional[Union[str, "Path"]] = None,
                           torch_file: Optional[Union[str, "Path"]] = None) -> Optional[Tuple[str, str]]:
    """(CUDA, derivation) of a package that pins vLLM to SPECIFIER (``>=0.6.4.post1,<=0.7.2`` or ``==0.6.4.post1``)
    and no torch of its own (SGLang's [srt] extra before 0.4.6): pip may install any vLLM release inside the range,
    each pinning one torch whose plain build fixes the CUDA, so the CUDA is determined only when every one of them
    agrees. None when they disagree, when one has no recorded torch pin, or when the range reaches past the releases
    the vLLM file records (an open range takes every newer vLLM: the file cannot say it holds them all). The one
    home of that rule (tools/import_overlay.py asks here)."""
    spec = versions.specifier_set(specifier)
    if spec is None:
        return None
    path = vllm_file or find_framework_file("vllm")
    if path is None:
        return None
    records: List[Tuple["Version", Mapping[str, Any]]] = []
    for record in raw(path).get("release", ()):
        parsed = versions.parse(str(record.get("version")))
        if parsed is not None:
            records.append((parsed, record))
    if not records or not _bounded_within(spec, min(v for v, _ in records), max(v for v, _ in records)):
        return None
    cudas: Dict[str, List[str]] = {}
    for version, record in records:
        if not spec.contains(version, prereleases=False):
            continue
        torch_pin = str((record.get("requires") or {}).get("torch") or "")
        plain = pinned_torch_build(torch_pin[2:], torch_file) if torch_pin.startswith("==") else None
        if plain is None:
            return None
        cudas.setdefault(plain[0], []).append(f"vllm {record['version']} (torch{torch_pin})")
    if len(cudas) != 1:
        return None
    cuda, pins = next(iter(cudas.items()))
    return cuda, (f"every vLLM release the knowledge base records inside vllm{specifier} pins a torch whose PyPI "
                  f"default build is CUDA {cuda}: " + ", ".join(pins))


def _bounded_within(spec: Any, oldest: "Version", newest: "Version") -> bool:
    """Whether SPEC has a lower bound at or above OLDEST and an upper bound at or below NEWEST (``==`` is both)."""
    low = high = False
    for clause in spec:
        bound = versions.parse(clause.version)
        if bound is None or "*" in clause.version:
            return False
        if clause.operator in (">=", ">", "==") and bound >= oldest:
            low = True
        if clause.operator in ("<=", "<", "==") and bound <= newest:
            high = True
    return low and high


def overlay_variant(framework: str, version: str, build: Mapping[str, Any],
                    spec: Optional[Mapping[str, Any]] = None) -> Optional[Variant]:
    cuda = build.get("cuda")
    cuda_from = build.get("cuda_from")
    extra: Dict[str, Any] = {}
    if not cuda and build.get("requires_torch") and framework != "torch":
        plain = pinned_torch_build(str(build["requires_torch"]))
        if plain is not None:
            cuda = plain[0]
            cuda_from = f"torch {build['requires_torch']} (its PyPI default build, as the knowledge base knows it)"
            extra["cuda_from"] = "torch"
    if not cuda:
        from gpuvet.kb import overlay

        if overlay.libraries_of(build):
            return None  # CUDA code of an unknown CUDA: never passed as a CPU build
        name = "cpu"
    else:
        parsed = versions.cuda_major_minor(str(cuda))
        if parsed is None:
            return None
        cuda = "%d.%d" % parsed
        name = variant_key(str(cuda))
    libraries, full_sass, ptx, source = _harvested_archs([build], spec)
    extra.update({"libraries": libraries, "arch_source": source, "cuda_read_from": cuda_from})
    distribution = str(build.get("distribution") or framework)
    return Variant(
        name=name, cuda=str(cuda) if cuda else None, cudnn=build.get("cudnn"), nccl=build.get("nccl"),
        sass=full_sass, ptx=ptx, index_url=None, install=f"pip install {distribution}=={version}",
        source=str(build["source"]), extra=extra,
    )


def _same_cuda(variant: Variant, build: Mapping[str, Any]) -> bool:
    if not variant.cuda:
        return False
    have = versions.cuda_major_minor(str(build["cuda"])) if build.get("cuda") else None
    want = versions.cuda_major_minor(variant.cuda)
    if have is not None and want is not None:
        return have == want
    # a plugin wheel named for its CUDA major (jax-cuda12-plugin) says only the major
    digits = "".join(ch for ch in str(build.get("distribution", "")) if ch.isdigit())
    return bool(digits) and want is not None and str(want[0]) == digits


def _harvested_archs(builds: List[Mapping[str, Any]], spec: Optional[Mapping[str, Any]]
                     ) -> Tuple[Tuple[Any, ...], Tuple[str, ...], Tuple[str, ...], str]:
    """(libraries, sass, ptx, source) over the wheels of one build: every library as read, with the role the framework
    file gives it (gpuvet.kb.libraries), and for display the archs its kernel libraries carry. What runs where is
    derived from the libraries at check time (gpuvet.kb.compat), never from the two lists."""
    from gpuvet.kb import compat, overlay
    from gpuvet.kb import libraries as roles

    # an overlay written before libraries were read one by one: its sass / ptx lists as one unit
    records = [library for build in builds for library in overlay.libraries_of(build)]
    found = roles.from_records(spec, records)
    kernels = [lib for lib in found if lib.role == compat.KERNELS] or list(found)
    return (found, compat.sort_archs([a for lib in kernels for a in lib.sass]),
            compat.sort_archs([a for lib in kernels for a in lib.ptx]), "; ".join(b["source"] for b in builds))


def _with_harvest(framework: str, release: Release, spec: Optional[Mapping[str, Any]] = None) -> Release:
    """The release with the libraries read from its real wheels, where they were read: the binary wins."""
    release = _with_companions(release, spec)
    harvested = _harvested_at(framework, release.version)
    x86 = harvested.get((release.version, "x86_64"), [])
    arm = harvested.get((release.version, "aarch64"), [])
    if not x86 and not arm:
        return release
    variants = dict(release.variants)
    for name, variant in release.variants.items():
        # A wheel that does not say its CUDA is the one plain pip gives: the release's default variant.
        # So is the one build of a package that borrows torch's CUDA (xformers, bitsandbytes: no CUDA of its own here).
        plain = name == release.default_variant
        matching = [b for b in x86 if _same_cuda(variant, b) or (plain and (not b.get("cuda") or not variant.cuda))]
        extra = dict(variant.extra)
        changed = {}
        if matching:
            libraries, sass, ptx, source = _harvested_archs(matching, spec)
            companions = tuple(lib for lib in extra.get("libraries") or () if lib not in libraries)
            extra["libraries"] = libraries + companions
            extra["arch_source"] = source
            extra["overlay_disagrees"] = [b["overlay_disagrees"] for b in matching if b.get("overlay_disagrees")]
            built_with = next((str(b["cuda"]) for b in matching if b.get("cuda")), None)
            if built_with and not variant.cuda:
                extra["ptx_cuda"] = built_with  # the wheel's own CUDA wrote its PTX; it runs on torch's runtime
            extra["unverified"] = [u for u in extra.get("unverified", ()) if u not in ("sass", "ptx")]
            changed = {"sass": sass, "ptx": ptx, "source": variant.source + "; " + source}
        arm_matching = [b for b in arm if _same_cuda(variant, b) or (plain and (not b.get("cuda") or not variant.cuda))]
        if arm_matching:
            libraries, sass, ptx, source = _harvested_archs(arm_matching, spec)
            # A wheel read with no CUDA version and no CUDA code in any library is a CPU build on aarch64 (PyPI's
            # torch 2.5-2.10 for Arm): a fact of the platform, never an unknown arch list.
            cpu = not any(b.get("cuda") or b.get("library") or b.get("sass") or b.get("ptx") for b in arm_matching)
            extra["aarch64"] = {"sass": list(sass), "ptx": list(ptx), "libraries": libraries, "source": source,
                                "cpu": cpu}
        if changed or arm_matching:
            variants[name] = variant._replace(extra=extra, **changed)  # type: ignore[arg-type]  # changed: sass and ptx tuples, source str
    return release._replace(variants=variants)


def _with_companions(release: Release, spec: Optional[Mapping[str, Any]]) -> Release:
    """The release with the libraries of the kernel packages it pins exactly, as read from their own wheels: SGLang's
    kernels are sgl-kernel's, vLLM's attention on older GPUs is xFormers' (``companions`` of ``[libraries]``). A pin
    whose wheel was never read leaves a kernels companion's code unknown: never passed on another package's lists."""
    from gpuvet.kb import compat

    rules = (spec or {}).get("companions", ())
    pins = {normalize_name(str(k)): str(v) for k, v in (release.extra.get("requires") or {}).items()}
    if not rules or not pins:
        return release
    found: Dict[str, List[Any]] = {"x86_64": [], "aarch64": []}
    unread: List[str] = []
    for rule in rules:
        distribution = normalize_name(str(rule["distribution"]))
        pin = pins.get(distribution, "")
        if not pin.startswith("=="):
            continue
        role = compat.KERNELS if rule.get("role", "kernels") == "kernels" else compat.FEATURE
        for platform in found:
            builds = [b for b in _harvested_at(str(rule.get("harvested", distribution)), pin[2:]).get((pin[2:], platform), [])
                      if normalize_name(str(b.get("distribution"))) == distribution]
            if builds:
                # a rule that names the companion's own kernel and feature libraries gives each its role; else all
                # of the companion's libraries take the rule's role
                libraries, _sass, _ptx, _source = _harvested_archs(builds, rule if rule.get("kernels") else None)
                if not rule.get("kernels"):
                    libraries = tuple(lib._replace(role=role, feature=rule.get("feature")) for lib in libraries)
                found[platform] += list(libraries)
            elif platform == "x86_64" and role == compat.KERNELS:
                unread.append(f"{distribution}{pin}")
    if not found["x86_64"] and not found["aarch64"] and not unread:
        return release
    variants = {}
    for name, variant in release.variants.items():
        if not variant.cuda:
            variants[name] = variant
            continue
        extra = dict(variant.extra)
        kernels = [lib for lib in found["x86_64"] if lib.role == compat.KERNELS]
        # judged on the kernels it pins, never passed as a pure-Python package: also when a kernels companion's wheel
        # was never read, or was read with none of the libraries its rule calls kernels (unknown, not a pass)
        if kernels or unread or (found["x86_64"] and any(r.get("role", "kernels") == "kernels" for r in rules)):
            extra["companion_kernels"] = True
        extra["libraries"] = tuple(extra.get("libraries") or ()) + tuple(found["x86_64"])
        if found["aarch64"]:
            extra["aarch64"] = dict(extra.get("aarch64") or {}, libraries=tuple(found["aarch64"]))
        if unread:
            extra["companions_unread"] = unread
        sass = compat.sort_archs(list(variant.sass) + [a for lib in kernels for a in lib.sass])
        ptx = compat.sort_archs(list(variant.ptx) + [a for lib in kernels for a in lib.ptx])
        variants[name] = variant._replace(extra=extra, sass=tuple(sass) if not unread else (),
                                          ptx=tuple(ptx) if not unread else ())
    return release._replace(variants=variants)


def framework_paths() -> Dict[str, "Path"]:
    from pathlib import Path

    return {name: Path(path) for name, path in framework_files().items()}


def find_framework_path(name: str) -> Optional["Path"]:
    path = find_framework_file(name)
    if path is None:
        return None
    from pathlib import Path

    return Path(path)

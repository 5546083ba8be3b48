"""The knowledge base: sourced facts about drivers, CUDA, GPUs, cuDNN, NCCL and frameworks.

``load()`` returns a cached :class:`KnowledgeBase`; each data file is read only when a question needs it, so a
``check`` that asks about torch and one driver never parses the others. Every answer is a frozen record or None
("the KB does not know"), never a guess.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from gpuvet.kb import gpumatch, loader, versions
from gpuvet.kb.records import (
    CudnnRelease,
    DriverFloor,
    Framework,
    GpuDriverFloor,  # noqa: F401  (re-exported: the public record types)
    GpuModel,
    NcclRelease,
    Release,
    Variant,
)

if TYPE_CHECKING:
    from gpuvet.kb.mirrors import Mirrors

__all__ = [
    "load", "KnowledgeBase", "DriverFloor", "GpuModel", "CudnnRelease", "NcclRelease", "Framework", "Release", "Variant",
]


@lru_cache(maxsize=None)
def _file(name: str) -> Dict[str, Any]:
    # Cached by name: building and hashing a path on each of ~70 calls per snapshot showed in the 1,000-snapshot
    # profile (bench/bench_snapshots.py); loader.raw already caches the parse itself.
    return loader.raw(loader.data_path(f"{name}.toml"))


class KnowledgeBase:
    """Questions the checks ask. Versions are strings; comparisons use ``packaging.version.Version``."""

    def __init__(self) -> None:
        self._frameworks: Dict[str, Framework] = {}

    # ------------------------------------------------------------------------------------------------ meta
    @property
    def version(self) -> str:
        return str(_file("meta")["kb"]["version"])

    @property
    def updated(self) -> str:
        return str(_file("meta")["kb"]["updated"])

    def describe(self) -> Dict[str, object]:
        """The ``kb`` object of every JSON report: version, date and, when there is one, the user's overlay."""
        described: Dict[str, object] = {"version": self.version, "updated": self.updated}
        if self.overlay:
            described["overlay"] = dict(self.overlay)
        return described

    @property
    def stale_after_days(self) -> int:
        """Days after which reports warn that the shipped data is old: meta.toml's 90, or GPUVET_KB_STALE_DAYS
        (an image pinned to one gpuvet on purpose, or a test suite that must pass on any date, sets it higher)."""
        import os

        configured = os.environ.get("GPUVET_KB_STALE_DAYS", "").strip()
        if configured.isdigit():
            return int(configured)
        return int(_file("meta")["kb"].get("stale_after_days", 90))

    @property
    def overlay(self) -> Optional[Dict[str, object]]:
        """The user's overlay this knowledge base reads (``gpuvet kb harvest``): its folder and how many builds it
        holds; None when there is none (no folder, or it holds nothing). Every report names it."""
        cache: Dict[str, Optional[Dict[str, object]]] = self.__dict__
        if "_overlay" not in cache:
            from gpuvet.kb import overlay

            location = overlay.default_location()
            files = overlay.build_file_names(location) if location is not None else []
            cache["_overlay"] = {"path": overlay.spelled(location), "files": len(files)} if files and location else None
        return cache["_overlay"]

    # ------------------------------------------------------------------------------------------ driver/CUDA
    def min_driver_for_cuda(self, cuda: str, os: str = "linux") -> Optional[DriverFloor]:
        # Memoised: each answer scans every toolkit row, and the chain asks per candidate build (~25 per snapshot
        # when it searches for a build that fits); the record is immutable (bench/bench_snapshots.py profile).
        key = (str(cuda), str(os))
        cache: Dict[Tuple[str, str], Optional[DriverFloor]] = self.__dict__.setdefault("_min_driver", {})
        if key not in cache:
            cache[key] = self._min_driver_for_cuda(*key)
        return cache[key]

    def _min_driver_for_cuda(self, cuda: str, os: str) -> Optional[DriverFloor]:
        mm = versions.cuda_major_minor(cuda)
        if mm is None:
            return None
        data = _file("cuda_driver")
        rows = [t for t in data.get("toolkit", ()) if versions.cuda_major_minor(t["cuda"]) == mm]
        if not rows:
            return None
        column = "windows" if os.lower().startswith("win") else "linux"
        update = versions.cuda_update(cuda)
        exact = [t for t in rows if update is not None and versions.cuda_update(t["cuda"]) == update]
        released = [t for t in rows if "RC" not in t.get("label", "")]  # a release candidate is no toolkit release
        chosen = exact or released or rows
        packaged = [t[column] for t in chosen if t.get(column)]
        toolkit_driver = min(packaged, key=versions.parse) if packaged else None  # type: ignore[arg-type]  # KB driver versions all parse
        family = self._family(mm[0])
        if family is not None and family.get("minor_compat"):
            floor = family.get(f"{column}_min")
            if floor is None and column == "windows" and family.get("branch_min"):
                floor = f"{family['branch_min']}.0"  # the release notes give the branch (">= 580") only
            # 11.0 shipped with drivers older than the 11.x family floor: its own driver suffices for itself.
            candidates = [v for v in (floor, toolkit_driver) if v]
            minimum = min(candidates, key=versions.parse) if candidates else None  # type: ignore[arg-type]  # KB driver versions all parse
            minor_compat = True
            note = family.get("note", "")
            sources = [r["source"] for r in chosen] + [family["source"]]
        else:
            minimum, minor_compat, note = toolkit_driver, False, (family or {}).get("note", "")
            sources = [r["source"] for r in chosen]
        notes = [n for n in (note, *(r.get("note", "") for r in chosen)) if n]
        return DriverFloor(
            cuda=str(cuda).strip(),
            minimum=minimum,
            toolkit_driver=toolkit_driver,
            source="; ".join(dict.fromkeys(sources)),
            note=" ".join(dict.fromkeys(notes)),
            minor_compat=minor_compat,
        )

    def _family(self, major: int) -> Optional[Dict[str, Any]]:
        families: Sequence[Dict[str, Any]] = _file("cuda_driver").get("family", ())
        for family in families:
            if family["major"] == major:
                return family
        if major < 11:
            return next((f for f in families if not f.get("minor_compat")), None)
        return None

    def cuda_for_ptx_isa(self, isa: Optional[str]) -> Optional[str]:
        """The first CUDA release that writes PTX ISA ``isa`` ("8.7" -> "12.8"): its driver is the oldest that can
        JIT-compile that PTX (ptx_isa.toml). None for an ISA the table does not list."""
        if not isa:
            return None
        table = self.__dict__.get("_ptx_isa")
        if table is None:
            table = self.__dict__["_ptx_isa"] = {str(r["version"]): str(r["cuda"]) for r in _file("ptx_isa").get("isa", ())}
        return table.get(str(isa))

    @property
    def ptx_isa_source(self) -> str:
        return str(_file("ptx_isa").get("source", ""))

    def cuda_for_driver(self, driver: str) -> Optional[str]:
        """The newest CUDA a driver supports (nvidia-smi's "CUDA Version"); None when its branch is newer than the KB.

        A branch between two known branches gets the lower one's CUDA: branches never lose CUDA support.
        """
        branch = versions.driver_branch(driver)
        if branch is None:
            return None
        known = sorted(_file("cuda_driver").get("branch", ()), key=lambda b: b["branch"])
        if not known or branch > known[-1]["branch"] or branch < known[0]["branch"]:
            return None
        best = None
        for record in known:
            if record["branch"] <= branch:
                best = record
        return str(best["cuda"]) if best else None

    def driver_branch_for_cuda(self, cuda: Optional[str]) -> Optional[str]:
        mm = versions.cuda_major_minor(cuda)
        if mm is None:
            return None
        for record in sorted(_file("cuda_driver").get("branch", ()), key=lambda b: b["branch"]):
            if versions.cuda_major_minor(record["cuda"]) == mm:
                first = record.get("first_driver")
                return f"R{record['branch']} (>= {first})" if first else f"R{record['branch']}"
        return None

    # --------------------------------------------------------------------------------------------- archs
    def toolkit_sass(self, cuda: str) -> Optional[Tuple[str, ...]]:
        mm = versions.cuda_major_minor(cuda)
        for record in _file("cuda_arch").get("toolkit", ()):
            if mm is not None and versions.cuda_major_minor(record["cuda"]) == mm:
                return tuple(record["sm"])
        return None

    def cuda_supports_cc(self, cuda: str, cc: str) -> Optional[bool]:
        archs = self.toolkit_sass(cuda)
        if archs is None:
            return None
        sm = "sm_" + str(cc).strip().replace(".", "")
        return sm in archs

    # -------------------------------------------------------------------------- GPU driver floors, cuda-compat
    def gpu_driver_floor(
        self, name: Optional[str], cc: Optional[str], architecture: Optional[str] = None, os: str = "linux"
    ) -> Optional[GpuDriverFloor]:
        """The first driver of a GPU and the last branch of its architecture (gpuvet.kb.compat rule 5).

        A model row (its name or an alias of the same KB model) wins; otherwise the lowest floor recorded for the
        architecture, which can only be too lenient, never too strict. On Windows, without a Windows number, the
        branch is the floor (R570 is 57x.xx there)."""
        data = _file("gpu_driver")
        model = self.gpu(name) if name else None
        names = {model.name, *model.aliases} if model is not None else ({name} if name else set())
        arch = architecture or (model.architecture if model is not None else None)
        rows = [r for r in data.get("floor", ()) if names & set(r.get("models", ()))]
        if (not rows or all(r.get("unverified") for r in rows)) and arch:
            # An unverified model row is an upper bound (the first README that lists it): never stricter than the
            # lowest floor of its architecture, so an unconfirmed number cannot fail a machine.
            rows = rows + [r for r in data.get("floor", ()) if r.get("architecture") == arch]
        if not rows and cc:
            rows = [r for r in data.get("floor", ()) if not r.get("models") and cc in r.get("compute_capability", ())]
        ceiling = next((r for r in data.get("ceiling", ()) if (arch and arch in r.get("architecture", ()))
                        or (cc and cc in r.get("compute_capability", ()))), None)
        if not rows and ceiling is None:
            return None
        first = branch = None
        source, unverified, label = "", False, arch or name or "?"
        if rows:
            windows = os.lower().startswith("win")
            row = min(rows, key=lambda r: versions.parse(str(r["linux"])))  # type: ignore[arg-type, return-value]  # KB driver versions all parse
            branch = int(row["branch"])
            first = str(row.get("windows") or f"{branch}.0") if windows else str(row["linux"])
            source, unverified, label = row["source"], bool(row.get("unverified")), row.get("architecture") or row["label"]
        if ceiling is not None:
            source = "; ".join(s for s in (source, ceiling["source"]) if s)
        return GpuDriverFloor(label, first, branch, int(ceiling["last_branch"]) if ceiling else None, source, unverified)

    def library_cc_floor(self, library: str, version: str) -> Optional[Tuple[str, str]]:
        """(lowest compute capability, source) of a CUDA library release (gpuvet.kb.compat rule 6), or None.

        Where several rows match (one per CUDA build of the library), the lowest floor: never stricter than NVIDIA."""
        key = (library, str(version))
        cache: Dict[Tuple[str, str], Optional[Tuple[str, str]]] = self.__dict__.setdefault("_library_floors", {})
        if key not in cache:
            cache[key] = self._library_cc_floor(library, str(version))
        return cache[key]

    def _library_cc_floor(self, library: str, version: str) -> Optional[Tuple[str, str]]:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        have = versions.parse(version)
        if have is None:
            return None
        found = []
        for row in _file("library_floor").get("floor", ()):
            if row.get("library") != library:
                continue
            try:
                if SpecifierSet(row["versions"]).contains(have, prereleases=True):
                    found.append(row)
            except InvalidSpecifier:
                continue
        if not found:
            release = self.cudnn_release(version) if library == "cudnn" else None
            if release is None or not release.compute_capability:
                return None
            return min(release.compute_capability, key=versions.parse), release.source  # type: ignore[arg-type]  # KB compute capabilities all parse
        row = min(found, key=lambda r: versions.parse(r["min_cc"]))  # type: ignore[arg-type, return-value]  # KB compute capabilities all parse
        return str(row["min_cc"]), row["source"]

    def forward_compat_branches(self, cuda: Optional[str]) -> Optional[Tuple[Tuple[int, ...], str]]:
        """The driver branches a ``cuda-compat`` of this CUDA release supports on data-center GPUs, and the source
        that lists them (``[[compat_branches]]`` in cuda_driver.toml); None when no source lists them (unknown)."""
        want = versions.cuda_major_minor(cuda) if cuda else None
        if want is None:
            return None
        for row in _file("cuda_driver").get("compat_branches", ()):
            if versions.cuda_major_minor(row["cuda"]) == want:
                return tuple(int(b) for b in row["branches"]), str(row["source"])
        return None

    def forward_compat_eligible(self, segment: Optional[str], driver: Optional[str], cuda: Optional[str]) -> Optional[bool]:
        """Whether ``cuda-compat`` of CUDA release ``cuda`` can lift this GPU and driver: a data-center GPU on a branch
        NVIDIA lists for that release (at or above the branch's minimum where one is stated). None when the GPU and
        driver qualify but no source lists the branches of that release: unknown, never guessed."""
        forward = _file("cuda_driver").get("forward_compat", {})
        if not segment or segment not in forward.get("segments", ()) or not driver:
            return False
        have = versions.parse(driver)
        branch = versions.driver_branch(driver)
        if have is None or branch is None:
            return False
        listed = self.forward_compat_branches(cuda)
        if listed is None:
            return None
        if branch not in listed[0]:
            return False
        for minimum in forward.get("branch_minimums", ()):
            if branch == versions.driver_branch(minimum) and have < versions.parse(minimum):  # type: ignore[operator]  # KB driver versions all parse
                return False
        return True

    def forward_compat_source(self, cuda: Optional[str] = None) -> str:
        forward = _file("cuda_driver").get("forward_compat", {})
        listed = self.forward_compat_branches(cuda)
        return "; ".join(s for s in (forward.get("source"), listed[1] if listed else None, forward.get("branches_source")) if s)

    def jetson(self) -> Dict[str, Any]:
        """What the data says of Jetson hosts (cuda_driver.toml ``[jetson]``): where NVIDIA's builds for each JetPack
        release are (``wheels``) and the sources of the rules the chain applies there."""
        return dict(_file("cuda_driver").get("jetson") or {})

    # ---------------------------------------------------------------------------------------------- GPUs
    def gpu(self, name: str) -> Optional[GpuModel]:
        # Memoised per name: the chain asks for every GPU of every candidate build it weighs (alternatives too),
        # ~110 matches per snapshot; matching was 80% of evaluating 1,000 snapshots (bench/bench_snapshots.py).
        if not isinstance(name, str):
            return gpumatch.match(name, self.gpu_models())
        cache: Dict[str, Optional[GpuModel]] = self.__dict__.setdefault("_gpu_matches", {})
        if name not in cache:
            if len(cache) > 4096:  # snapshots from strangers: keep memory bounded
                cache.clear()
            cache[name] = gpumatch.match(name, self.gpu_models())
        return cache[name]

    def gpu_models(self) -> Tuple[GpuModel, ...]:
        return _gpu_models()

    def docker_rules(self) -> Dict[str, Any]:
        """What a Docker daemon needs for GPU containers (kb/data/containers.toml): the runtime name, the commands
        that register it, the version that brought ``--gpus``, the systemd cgroup caveat."""
        return dict(_file("containers")["docker"])

    def images(self) -> Dict[str, Any]:
        """Container images known by tag (kb/data/images.toml): ``nvidia_cuda`` (its releases, each with the
        NVIDIA_REQUIRE_CUDA clause set, OSes and flavors) and ``ngc`` (NGC framework container releases)."""
        return dict(_file("images"))

    def uv_torch_backends(self) -> Dict[str, Any]:
        """How ``uv pip install torch --torch-backend=auto`` picks a PyTorch index (kb/data/installers.toml):
        ``linux`` lists (backend, minimum driver) in uv's order, ``source`` says where uv's code has it."""
        return dict(_file("installers")["uv_torch_backend"])

    def prebuilt_wheels(self, distribution: str, version: str) -> Optional[Dict[str, Any]]:
        """The prebuilt wheels one release publishes outside the index and which one its setup.py asks for
        (kb/data/prebuilt_wheels.toml, written by tools/prebuilt_wheels.py from the release tag's files): flash-attn's
        torch x CUDA x C++11 ABI x Python matrix. None when the release has no such record."""
        record = _prebuilt_wheels().get((distribution, version))
        return dict(record) if record is not None else None

    def installer_forms(self, name: str) -> Dict[str, Any]:
        """What gpuvet knows of an installer's own forms (kb/data/installers.toml): ``conda_pytorch_channel`` (the
        torch releases and CUDA versions PyTorch published as conda packages) or ``pixi``; each with its ``source``."""
        return dict(_file("installers")[name])

    def platform(self, name: str) -> Optional[Dict[str, Any]]:
        """A GPU rental platform's profile (kb/data/platforms.toml): its disks, release rule and notes; None if unknown."""
        for record in _file("platforms").get("platform", []):
            if record["name"] == name:
                return dict(record)
        return None

    def platform_names(self) -> Tuple[str, ...]:
        return tuple(str(record["name"]) for record in _file("platforms").get("platform", []))

    def pci_device_name(self, device_id: str) -> Optional[str]:
        """pci.ids' name of an NVIDIA PCI device (``10de:2204`` or ``2204`` -> ``GA102 [GeForce RTX 3090]``), or None.

        What an lspci with an up-to-date database prints; gpuvet ships the NVIDIA part (kb/data/pci_ids.toml)."""
        device = device_id.lower()
        if device.startswith("10de:"):
            device = device[5:]
        name = _file("pci_ids")["pci"]["devices"].get(device)
        return str(name) if name is not None else None

    def pci_ids_source(self) -> str:
        table = _file("pci_ids")["pci"]
        return "pci.ids %s (%s)" % (table["version"], table["source"])

    # ------------------------------------------------------------------------------------------ cuDNN/NCCL
    def cudnn_release(self, version: str) -> Optional[CudnnRelease]:
        record = _library_release("cudnn", version)
        if record is None:
            return None
        return CudnnRelease(
            version=str(record["version"]),
            cuda=tuple(record.get("cuda", ())),
            source=record["source"],
            compute_capability=tuple(record.get("compute_capability", ())),
            note=record.get("note", ""),
        )

    def nccl_native_since(self, compute_capability: str) -> Optional[Dict[str, str]]:
        """The first NCCL whose default build carries SASS for this GPU's architecture family ({"sass", "first",
        "cuda", "source"}): a cubin of sm_X0 runs on every X.y GPU; None for a family the data does not list."""
        try:
            major = int(str(compute_capability).split(".")[0])
        except ValueError:
            return None
        family = "sm_%d0" % major
        for row in _file("nccl").get("native_sass", []):
            if row["sass"] == family:
                return {key: str(row[key]) for key in ("sass", "first", "cuda", "source")}
        return None

    def nccl_gencode(self, cuda: str) -> Optional[Dict[str, Any]]:
        """What NCCL's default build for a CUDA version carries ({"sass": [...], "ptx": [...], "source"}): its
        makefile picks the architectures by the CUDA it is built with (kb/data/nccl.toml ``gencode``); None for a
        CUDA no record covers."""
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            version = Version(str(cuda))
        except InvalidVersion:
            return None
        for row in _file("nccl").get("gencode", []):
            try:
                if version in SpecifierSet(str(row["cuda"])):
                    return {"sass": list(row.get("sass", ())), "ptx": list(row.get("ptx", ())), "source": row["source"]}
            except InvalidSpecifier:
                continue
        return None

    def nccl_release(self, version: str) -> Optional[NcclRelease]:
        record = _library_release("nccl", version)
        if record is None:
            return None
        return NcclRelease(version=str(record["version"]), cuda=tuple(record.get("cuda", ())), source=record["source"],
                           note=record.get("note", ""))

    # ------------------------------------------------------------------------------------------ frameworks
    def framework(self, name: str) -> Optional[Framework]:
        """By target name or any PyPI distribution name, case- and separator-insensitive."""
        path = loader.find_framework_file(name)
        if path is not None:
            framework = self._framework_at(path)
            if loader.normalize_name(framework.name) == loader.normalize_name(name):
                return framework
        wanted = loader.normalize_name(name)
        for framework in self.frameworks():
            names = [framework.name, *framework.distributions]
            if wanted in (loader.normalize_name(n) for n in names):
                return framework
        return None

    def frameworks(self) -> Tuple[Framework, ...]:
        return tuple(self._framework_at(path) for path in loader.framework_files().values())

    def _framework_at(self, path: str) -> Framework:
        if path not in self._frameworks:
            self._frameworks[path] = loader.framework_from(path)
        return self._frameworks[path]

    # ------------------------------------------------------------------------------------------- network
    def mirrors(self) -> Mirrors:
        """Network endpoints, their public mirrors and the slow thresholds (``kb/data/mirrors.toml``)."""
        from gpuvet.kb.mirrors import mirrors

        return mirrors()

    # ------------------------------------------------------------------------------------------- sources
    def sources(self) -> List[Tuple[str, str]]:
        """(record id, source) for every record in every data file, e.g. ("torch:release[2.1.2]", "https://...")."""
        found: List[Tuple[str, str]] = []
        for name, path in loader.data_files().items():
            for record_id, record in loader.records(loader.raw(path)):
                for source in loader.sources_of(record.get("source")):
                    # one string may cite several sources separated by "; "
                    for part in (p.strip() for p in source.split("; ")):
                        if part:
                            found.append((f"{name}:{record_id}", part))
        return found


@lru_cache(maxsize=None)
def _gpu_models() -> Tuple[GpuModel, ...]:
    models = []
    for record in _file("gpus").get("gpu", ()):
        models.append(GpuModel(
            name=record["name"],
            aliases=tuple(record.get("aliases", ())),
            architecture=record["architecture"],
            compute_capability=str(record["compute_capability"]),
            memory_gib=record.get("memory_gib"),
            bandwidth_gbs=record.get("bandwidth_gbs"),
            tflops=dict(record.get("tflops", {})),
            nvlink=bool(record.get("nvlink", False)),
            segment=record.get("segment", ""),
            platform=record.get("platform", ""),
            pcie_gen=record.get("pcie_gen"),
            source=record["source"],
            unverified=tuple(record.get("unverified", ())),
            note=record.get("note", ""),
        ))
    return tuple(models)


def _library_release(name: str, version: str) -> Optional[Dict[str, Any]]:
    """The record of ``version`` (compared on its first three parts: 9.1.0.70 == 9.1.0), or None."""
    wanted = versions.parse(version)
    if wanted is None:
        return None
    head = wanted.release[:3]
    records: Sequence[Dict[str, Any]] = _file(name).get("release", ())
    for record in records:
        known = versions.parse(str(record["version"]))
        if known is not None and known.release[:3] == head:
            return record
    return None


@lru_cache(maxsize=None)
def _prebuilt_wheels() -> Dict[Tuple[str, str], Dict[str, Any]]:
    """kb/data/prebuilt_wheels.toml by (distribution, version), read once per process."""
    return {(str(r.get("distribution")), str(r.get("version"))): r for r in _file("prebuilt_wheels").get("release", ())}


@lru_cache(maxsize=1)
def load() -> KnowledgeBase:
    """The shipped knowledge base (one per process)."""
    return KnowledgeBase()

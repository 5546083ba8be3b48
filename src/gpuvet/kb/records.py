"""The knowledge base's record types: frozen, plain data built from the TOML files by ``gpuvet.kb.loader``."""

from __future__ import annotations

import re
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
    overload,
)

from gpuvet.kb import versions

if TYPE_CHECKING:
    from packaging.version import Version


class DriverFloor(NamedTuple):
    """What a CUDA version needs from the driver.

    ``minimum`` is the real floor (the family minimum through minor-version compatibility for CUDA >= 11, the
    packaged driver before); ``toolkit_driver`` the driver packaged with that exact toolkit (None when NVIDIA no
    longer bundles one).
    """

    cuda: str
    minimum: Optional[str]
    toolkit_driver: Optional[str]
    source: str
    note: str = ""
    minor_compat: bool = True


class GpuDriverFloor(NamedTuple):
    """The drivers that can drive a GPU: from ``first`` on, up to branch ``last_branch`` (None: still supported)."""

    label: str
    first: Optional[str]
    branch: Optional[int]
    last_branch: Optional[int]
    source: str
    unverified: bool = False


class GpuModel(NamedTuple):
    """A GPU model: its names, architecture, compute capability, memory and speeds."""

    name: str
    aliases: Tuple[str, ...]
    architecture: str
    compute_capability: str
    memory_gib: Optional[float]
    bandwidth_gbs: Optional[float]
    tflops: Mapping[str, float]
    nvlink: bool
    segment: str
    pcie_gen: Optional[int]
    source: str
    unverified: Tuple[str, ...] = ()
    note: str = ""
    platform: str = ""  # "sbsa" for Grace superchips (the host is always aarch64); "" when it varies

    @property
    def sm(self) -> str:
        return "sm_" + self.compute_capability.replace(".", "")


class CudnnRelease(NamedTuple):
    """A cuDNN release and the CUDA versions it is built for."""

    version: str
    cuda: Tuple[str, ...]  # CUDA majors ("12") or exact toolkits ("11.4") the release is built for
    source: str
    compute_capability: Tuple[str, ...] = ()
    note: str = ""


class NcclRelease(NamedTuple):
    """An NCCL release and the CUDA versions it is built for."""

    version: str
    cuda: Tuple[str, ...]
    source: str
    note: str = ""


class Variant(NamedTuple):
    """One build of a framework release (cpu, cuXYZ, rocmX.Y): its CUDA, cuDNN, NCCL, archs and install command."""

    name: str  # cpu | cuXYZ | rocmX.Y
    cuda: Optional[str]
    cudnn: Optional[str]
    nccl: Optional[str]
    sass: Tuple[str, ...]
    ptx: Tuple[str, ...]
    index_url: Optional[str]
    install: Optional[str]
    source: str
    extra: Mapping[str, Any] = {}  # one shared empty dict: never mutated (a NamedTuple has no default_factory)

    @property
    def is_cuda(self) -> bool:
        return self.cuda is not None

    @property
    def unverified(self) -> Tuple[str, ...]:
        return tuple(self.extra.get("unverified", ()))

    @property
    def own_index(self) -> Optional[str]:
        """The index URL pip must be given for this build (``--index-url URL``); None for pip's default index. The
        data names PyPI's default index in words ("PyPI (pip's default index)"): a phrase to show, never an argument
        to put in a command (a printed command stays valid shell)."""
        url = str(self.index_url or "").strip()
        return url if url.startswith(("https://", "http://")) else None


_CU_NAME = re.compile(r"^cu(\d+)(\d)$")


def variant_key(name_or_cuda: str) -> str:
    """``"+cu121"``/``"cu121"``/``"12.1"``/``"12.1.105"`` -> ``"cu121"``; other names lower-cased as they are."""
    text = name_or_cuda.strip().lstrip("+").lower()
    if re.match(r"^\d+\.\d+", text):
        major, minor = text.split(".")[:2]
        return "cu%s%s" % (major, minor)
    return text


def variant_cuda(name: str) -> Optional[str]:
    """``"cu128"`` -> ``"12.8"`` (``variant_key`` the other way); None for a name that is not a CUDA build label."""
    match = _CU_NAME.match(name.strip().lstrip("+").lower())
    return "%s.%s" % match.groups() if match else None


class Release(NamedTuple):
    """One release of a framework: its date, Python range, variants and companions."""

    version: str
    released: Optional[str]
    python: str  # a PEP 440 specifier, e.g. ">=3.8,<3.12"; "" when the data does not say
    default_variant: Optional[str]
    variants: Mapping[str, Variant]
    companions: Mapping[str, str]
    glibc_min: Optional[str]
    source: str
    extra: Mapping[str, Any] = {}  # one shared empty dict: never mutated (a NamedTuple has no default_factory)

    def variant(self, name_or_cuda: str) -> Optional[Variant]:
        """A variant by name (``cu121``, ``+cu121``, ``cpu``, ``rocm6.2``) or by CUDA version (``12.1``)."""
        key = variant_key(name_or_cuda)
        for name, variant in self.variants.items():
            if name.lower() == key:
                return variant
        return None

    @property
    def default(self) -> Optional[Variant]:
        return self.variants.get(self.default_variant) if self.default_variant else None

    def supports_python(self, python_version: str) -> Optional[bool]:
        if not self.python:
            return None
        return versions.in_specifier(python_version, self.python)


class Releases(Sequence[Release]):
    """A framework's releases, newest first, each made when it is first asked for (issue 30).

    Making a release checks its record and joins it with the libraries read from its wheels (the shipped harvested
    file and the user's overlay, ``gpuvet.kb.loader``), about 0.1 ms each, and the overlay's releases need the
    overlay's files parsed. A check asks for one release: :meth:`find` makes only that one, and reads only the overlay files named
    for its version. Walking, counting or indexing the sequence makes every release once, in the order and with the
    content the eager tuple had (the shipped records first among equal versions, then the overlay's)."""

    def __init__(self, shipped: List[Tuple["Version", Callable[[], Release]]],
                 overlay_at: Callable[["Version"], Optional[Release]], overlay_all: Callable[[], List[Release]]):
        # shipped: (version, the maker of its release) for each release record, as the file writes them
        self._shipped_makers = sorted(shipped, key=lambda pair: pair[0], reverse=True)  # stable: file order kept
        self._overlay_at = overlay_at
        self._overlay_all = overlay_all
        self._made: Dict[int, Release] = {}
        self._added: Dict["Version", Optional[Release]] = {}
        self._all: Optional[Tuple[Release, ...]] = None

    def _shipped(self, index: int) -> Release:
        if index not in self._made:
            self._made[index] = self._shipped_makers[index][1]()
        return self._made[index]

    def _every(self) -> Tuple[Release, ...]:
        if self._all is None:
            added = self._overlay_all()  # first: it reads the whole overlay once, which the shipped ones then share
            made = [self._shipped(i) for i in range(len(self._shipped_makers))] + added
            made.sort(key=lambda r: versions.parse(r.version), reverse=True)  # type: ignore[arg-type, return-value]  # as above
            self._all = tuple(made)
        return self._all

    def find(self, wanted: "Version") -> Optional[Release]:
        """The first release whose version parses to ``wanted`` (as a walk over the sequence finds it), made alone."""
        if self._all is not None:
            return next((r for r in self._all if versions.parse(r.version) == wanted), None)
        for index, (version, _make) in enumerate(self._shipped_makers):
            if version == wanted:
                return self._shipped(index)
        if wanted not in self._added:
            self._added[wanted] = self._overlay_at(wanted)  # the overlay adds only versions the shipped data lacks
        return self._added[wanted]

    @overload
    def __getitem__(self, index: int) -> Release: ...

    @overload
    def __getitem__(self, index: slice) -> Tuple[Release, ...]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[Release, Tuple[Release, ...]]:  # as a tuple takes
        return self._every()[index]

    def __len__(self) -> int:
        return len(self._every())

    def __iter__(self) -> Iterator[Release]:
        return iter(self._every())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (tuple, Releases)) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # as a tuple of releases (their variants are dicts): not hashable

    def __repr__(self) -> str:  # never makes what was not asked for: a repr must not change what it shows
        if self._all is not None:
            return f"Releases({self._all!r})"
        return (f"Releases({len(self._shipped_makers)} shipped records, {len(self._made)} made; "
                "overlay releases made as asked)")


class FrameworkHead(NamedTuple):
    """The ``[framework]`` table's names: what finding the installed frameworks needs (``places.framework_heads``)."""

    name: str
    distributions: Tuple[str, ...]


class Framework(NamedTuple):
    """A framework the knowledge base covers: its names, distributions and releases."""

    name: str
    display: str
    distributions: Tuple[str, ...]
    releases: Union[Tuple[Release, ...], Releases]  # newest first; the loader's are made as asked (Releases)
    source: str
    extra: Mapping[str, Any] = {}  # one shared empty dict: never mutated (a NamedTuple has no default_factory)

    def release(self, version: str) -> Optional[Release]:
        """The release ``version`` names; the local label (``+cu121``) is ignored. Nightlies, pre-releases and
        versions the KB does not list give None (the caller reports ``unknown_version``)."""
        wanted = versions.parse(version)
        if wanted is None or wanted.is_prerelease or wanted.is_devrelease:
            return None
        public = versions.parse(wanted.public)
        if isinstance(self.releases, Releases):
            return self.releases.find(public)  # type: ignore[arg-type]  # a public version parses
        for release in self.releases:
            if versions.parse(release.version) == public:
                return release
        return None

    @property
    def newest(self) -> Release:
        return self.releases[0]

    @property
    def binaries_are_framework(self) -> bool:
        """Its wheels' binaries are the framework's own kernels (``binaries = "framework"`` in its file): a GPU
        they carry no code for fails the framework layer, not a package's."""
        return self.extra.get("binaries") == "framework"

    @property
    def extensions_built_locally(self) -> bool:
        """Its users compile CUDA extensions against it with the local nvcc (``extensions_built_locally``), so a
        local toolkit of another CUDA major is worth a warning."""
        return bool(self.extra.get("extensions_built_locally"))

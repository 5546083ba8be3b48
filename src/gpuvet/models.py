"""The data that flows from checks to formatters: messages, findings, chain links, target results, reports.

Titles and details are :class:`Message` objects (a catalog id plus parameters), not strings, so one result renders
in English or Chinese (``gpuvet.i18n``). Everything here is frozen, plain data: ``typing.NamedTuple`` classes,
which are created ~6x faster than frozen dataclasses and need no ``dataclasses`` import (start-up, issue 15);
change one with ``x._replace(...)``.
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Iterable, Iterator, Mapping, NamedTuple, Optional, Tuple, Union

# docs/CONTRACT.md §4: the one vocabulary for check findings and diagnose causes. Add, never rename.
FINDING_CODES = (
    "no_driver",
    "driver_too_old",
    "nvml_driver_mismatch",
    "gpu_unsupported_by_cuda",
    "arch_not_in_build",
    "feature_arch_unsupported",
    "cpu_only_build",
    "cuda_library_missing",
    "cudnn_mismatch",
    "nccl_mismatch",
    "toolkit_mismatch",
    "abi_mismatch",
    "python_unsupported",
    "package_conflict",
    "insufficient_vram",
    "container_gpu_not_exposed",
    "virtualization_limit",
    "interconnect_slow",
    "health_problem",
    "nccl_comm_failure",
    "unknown_version",
    "not_a_stack_problem",
    # added after the first contract (adding is allowed, renaming is not):
    "platform_unsupported",  # host glibc, CPU instruction set (AVX) or OS below what the build needs
    "index_unreachable",  # the configured pip index (or PyPI, pip's default) does not answer within a short timeout
    "arch_list_unknown",  # the build's compiled arch list is not known: the arch link is unknown, never passed
    "disk_full",  # no space left where an install, a cache or a checkpoint is written
    "shm_too_small",  # /dev/shm too small for DataLoader workers or NCCL (a container's 64 MB default)
    "network_unreachable",  # Hugging Face, conda channels, git or another server the job needs does not answer
    "damaged_install",  # a distribution a broken install left behind: missing or cut-short libraries, no metadata, two copies
    "kb_stale",  # the shipped knowledge base is older than stale_after_days (meta.toml) on the day of the reading
    "container_runtime_missing",  # the Docker daemon has no nvidia runtime registered (a pasted docker info)
    "feature_no_kernels",  # a bundled library serving one feature has no kernels for this GPU: that feature fails
    "ptx_jit",  # the framework's own kernels reach the GPU only through PTX the driver JIT-compiles at first launch
    "distribution_removed",  # the distribution the target names installs nothing at that release (tensorflow-gpu >= 2.12)
    "pin_unavailable",  # a release pins an exact version of a package the index it installs from does not serve
    "no_prebuilt_wheel",  # no prebuilt wheel of the release fits torch: pip compiles it from source (flash-attn)
    # info-level notes have their own codes, never a failure code at info severity:
    "prebuilt_wheel",  # the prebuilt wheel a package downloads for this torch, named exactly (flash-attn)
    "minor_version_compat",  # the driver serves a newer CUDA minor through minor-version compatibility
    "forward_compat",  # a newer CUDA runs through the cuda-compat package on a data-center GPU
    "kb_overlay_disagrees",  # the user's overlay (gpuvet kb harvest) read this build's archs differently
    "gpu_features",  # what a GPU cannot do (bf16, FlashAttention 2 ...), said once for the machine
    "install_note",  # what a plain install would give instead of the build gpuvet chose
    "shared_driver",  # several targets share the one host driver
    "kb_binary_disagreement",  # the installed binary carries other archs than the knowledge base lists
    "gpu_setting",  # a GPU setting worth knowing that costs nothing now (persistence mode off)
    "link_note",  # how the GPUs are linked, when it is no fault (PCIe at a lower gen while idle, no NVLink)
    "virtualization_note",  # the host itself runs vGPU (a note, not a limit of this machine's target)
    "container_note",  # how the container engine runs GPU containers, when it is no fault (systemd cgroups, pre-19.03)
    "platform_note",  # what the rental platform's disks keep on a stop, in a saved image, after a release
    "installer_note",  # what an installer would choose on its own here (uv --torch-backend=auto), when it runs
    "jetson_note",  # on a Jetson, what decides whether a build runs: JetPack's CUDA, the CUDA 13 bridge for SBSA builds
)

# Codes whose findings mean "cannot be judged" rather than pass or fail.
UNKNOWN_CODES = frozenset({"unknown_version", "arch_list_unknown"})

# A target that names a container image (``image:nvidia/cuda:12.4.1-runtime-ubuntu22.04``) rather than a build.
IMAGE_PREFIX = "image:"

# The chain, checked in this order (the mission statement), plus the GPU itself.
LAYERS = ("driver", "cuda", "cudnn", "nccl", "framework", "python", "packages", "gpu", "host")


class Severity(str, enum.Enum):
    FAIL = "fail"
    WARN = "warn"
    INFO = "info"


class Verdict(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"
    SKIP = "skip"


# Worst first: a target's verdict is the worst of its parts.
_VERDICT_ORDER = (Verdict.FAIL, Verdict.UNKNOWN, Verdict.WARN, Verdict.PASS, Verdict.SKIP)


def worst(verdicts) -> Verdict:
    """The worst verdict of an iterable (PASS when empty)."""
    present = set(verdicts)
    for verdict in _VERDICT_ORDER:
        if verdict in present:
            return verdict
    return Verdict.PASS


class Message(NamedTuple):
    """A catalog message id and its parameters; rendered by ``gpuvet.i18n.render(message, lang)``."""

    id: str
    # The default is one shared empty dict (a NamedTuple has no default_factory): it renders, serialises, compares
    # and redacts as the fresh ``{}`` of a dataclass did; nothing in gpuvet mutates a message's params.
    params: Mapping[str, Any] = {}


def msg(message_id: str, **params: Any) -> Message:
    return Message(message_id, params)


class Fix(NamedTuple):
    """What to change: a one-line summary and the commands that do it."""

    summary: Message
    commands: Tuple[str, ...] = ()


class Facts(Mapping[str, Any]):
    """The structured facts a finding was made with (``gpu_index=3``, ``driver_floor="525.60.13"``), as given: ints
    stay ints, lists stay lists. Code that acts on a finding reads these, never its rendered labels or its messages'
    parameters, which are the catalog sentences' strings ("GPU 3 (NVIDIA A10)") and may change with the wording.

    Read-only (no item assignment), and unlike ``types.MappingProxyType`` it pickles, as a Finding does."""

    __slots__ = ("_facts",)

    def __init__(self, facts: Optional[Mapping[str, Any]] = None) -> None:
        self._facts: Dict[str, Any] = dict(facts) if facts else {}

    def __getitem__(self, key: str) -> Any:
        return self._facts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Facts):
            return self._facts == other._facts
        return isinstance(other, Mapping) and self._facts == dict(other)

    __hash__ = None  # type: ignore[assignment]  # as a dict: the values may be lists

    def __repr__(self) -> str:
        return f"Facts({self._facts!r})"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (Facts, (self._facts,))


# The default of every finding made without facts: one shared instance, as Message's empty params.
NO_FACTS = Facts()


class _FindingFields(NamedTuple):
    code: str  # one of FINDING_CODES
    severity: Severity
    layer: str  # one of LAYERS
    title: Message
    detail: Message
    expected: Optional[Union[str, Message]] = None  # a value, or a Message when it is a phrase ("a known ...")
    actual: Optional[Union[str, Message]] = None
    fix: Optional[Fix] = None
    sources: Tuple[str, ...] = ()
    facts: Facts = NO_FACTS  # what the finding was made with, for code to act on (the messages' params are for words)


class Finding(_FindingFields):
    """One thing a check found: its code, severity and layer, what it says, and the fix."""

    __slots__ = ()

    def __new__(cls, code: str, severity: Severity, layer: str, title: Message, detail: Message,
                expected: Optional[Union[str, Message]] = None, actual: Optional[Union[str, Message]] = None,
                fix: Optional[Fix] = None,
                sources: Tuple[str, ...] = (), facts: Facts = NO_FACTS) -> "Finding":
        if code not in FINDING_CODES:
            raise ValueError(f"unknown finding code {code!r}")
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}")
        return super().__new__(cls, code, severity, layer, title, detail, expected, actual, fix, sources, facts)

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> "Finding":  # type: ignore[override]  # mypy types _make generically
        # _replace builds through _make: validate there too, as dataclasses.replace() did through __post_init__.
        return cls(*iterable)

    @property
    def verdict(self) -> Verdict:
        if self.code in UNKNOWN_CODES:
            return Verdict.UNKNOWN
        return {Severity.FAIL: Verdict.FAIL, Severity.WARN: Verdict.WARN}.get(self.severity, Verdict.PASS)


class Link(NamedTuple):
    """One link of the chain driver → CUDA → cuDNN/NCCL → framework build → Python for one target."""

    layer: str
    verdict: Verdict
    actual: Any  # a value string, or a Message when it is a phrase ("comes with the build")
    expected: Any = None
    source: Optional[str] = None  # where ``actual`` came from (snapshot fact source)


class TargetResult(NamedTuple):
    """One target's verdict: the build judged, its chain of layers and its findings."""

    target: str  # as the user wrote it
    resolved: Optional[str]  # the exact build judged, e.g. torch==2.1.2+cu121
    chain: Tuple[Link, ...]
    findings: Tuple[Finding, ...]

    @property
    def verdict(self) -> Verdict:
        parts = [f.verdict for f in self.findings] + [link.verdict for link in self.chain]
        return worst(v for v in parts if v is not Verdict.SKIP)


class CheckReport(NamedTuple):
    """What ``gpuvet check`` found: the snapshot, each target's result and the machine's findings."""

    snapshot: Mapping[str, Any]
    targets: Tuple[TargetResult, ...]
    machine: Tuple[Finding, ...] = ()  # findings about the machine that belong to no target (no driver, health)
    together: Tuple[Finding, ...] = ()  # several targets in one environment (can TensorFlow and PyTorch share it?)
    kb_version: str = ""
    kb_updated: str = ""
    kb_overlay: Optional[Mapping[str, Any]] = None  # the user's overlay the knowledge base read, when it has one
    project: Optional[Mapping[str, Any]] = None  # check --project: the files read and the targets they declared

    @property
    def verdict(self) -> Verdict:
        parts = [t.verdict for t in self.targets] + [f.verdict for f in self.machine + self.together]
        return worst(parts)

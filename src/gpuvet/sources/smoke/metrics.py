"""Pure arithmetic behind smoke results: TFLOPS, bandwidths, nccl-tests bus bandwidth, PCIe link rates.

No I/O and no framework imports, so the GPU-only maths is unit-tested on recorded numbers.
"""

from __future__ import annotations

from typing import Iterable, Optional

# nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor, so that busbw is comparable with the hardware's
# unidirectional link rate whatever the number of ranks.
BUSBW_SOURCE = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
COLLECTIVES = ("all_reduce", "all_gather", "broadcast")

# PCIe per-lane raw rate (GT/s) and line-code efficiency, per direction. Gen1/2 use 8b/10b, Gen3-5 128b/130b.
# Gen6 (PAM4, FLIT mode) is left out on purpose: its effective rate depends on FLIT overheads we have not sourced.
_PCIE_LANE = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130), 5: (32.0, 128 / 130)}
PCIE_SOURCE = "PCI-SIG base specifications (lane rate x encoding: Gen3 x16 15.75, Gen4 31.5, Gen5 63 GB/s); https://pcisig.com/specifications"


def busbw_factor(collective: str, ranks: int) -> float:
    """The nccl-tests factor that turns algorithm bandwidth into bus bandwidth."""
    if ranks < 1:
        raise ValueError("ranks must be >= 1")
    if collective == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    if collective in ("broadcast", "reduce", "send_recv"):
        return 1.0
    raise ValueError("unknown collective %r" % collective)


def algbw_gbs(collective: str, bytes_per_rank: int, seconds: float, ranks: int) -> float:
    """Algorithm bandwidth in GB/s (1e9) the way nccl-tests counts it.

    all_gather counts the gathered output (bytes_per_rank x ranks), as ``AllGatherGetBw`` does; all_reduce and
    broadcast count the buffer itself.
    """
    if seconds <= 0:
        raise ValueError("seconds must be > 0")
    size = bytes_per_rank * ranks if collective == "all_gather" else bytes_per_rank
    return size / seconds / 1e9


def busbw_gbs(collective: str, algbw: float, ranks: int) -> float:
    return algbw * busbw_factor(collective, ranks)


def matmul_tflops(m: int, n: int, k: int, seconds: float) -> float:
    """2·m·n·k floating point operations per matmul (one multiply and one add per term)."""
    return 2.0 * m * n * k / seconds / 1e12


def copy_bandwidth_gbs(nbytes: int, seconds: float, read_and_write: bool = True) -> float:
    """A device-to-device copy reads and writes every byte; datasheet bandwidth counts both directions."""
    return (2 if read_and_write else 1) * nbytes / seconds / 1e9


def pcie_bandwidth_gbs(gen: Optional[int], width: Optional[int]) -> Optional[float]:
    """Theoretical one-direction PCIe bandwidth in GB/s for a link, or None when gen/width are unknown."""
    if not gen or not width or gen not in _PCIE_LANE:
        return None
    rate, efficiency = _PCIE_LANE[gen]
    return rate * efficiency * width / 8.0


def median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of nothing")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def fraction(value: Optional[float], reference: Optional[float]) -> Optional[float]:
    if value is None or not reference:
        return None
    return value / reference

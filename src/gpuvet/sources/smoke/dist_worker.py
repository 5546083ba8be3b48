"""Child process launched by torchrun (one per rank): collective sweeps and P2P send/recv, timed on every rank.

Rank 0 prints raw timings (bytes, seconds, ranks) as result lines; ``gpuvet.sources.smoke.distributed`` turns them into
algbw/busbw. NCCL on GPUs, gloo on CPUs. The process-group timeout bounds a hang inside one collective; the
parent's wall-clock limit bounds everything else (rendezvous, a rank that never starts).
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from typing import List, Optional

from gpuvet.sources.smoke.child import emit

COLLECTIVES = ("all_reduce", "all_gather", "broadcast")


def sweep_sizes(max_bytes: int, min_bytes: int = 8, step: int = 8) -> List[int]:
    """8 B, 64 B, 512 B, ... up to max_bytes (included when the series lands on it)."""
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= step
    return sizes


def _iters(nbytes: int, quick: bool) -> int:
    if nbytes >= 64 << 20:
        return 3 if quick else 5
    return 5 if quick else 20


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuvet.sources.smoke.dist_worker")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    parser.add_argument("--max-bytes", type=int, default=None)
    parser.add_argument("--op-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)

    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = args.backend != "gloo" and torch.cuda.is_available() and local_rank < torch.cuda.device_count()
    backend = "nccl" if use_cuda else "gloo"
    if use_cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    timeout = datetime.timedelta(seconds=args.op_timeout)
    init_start = time.perf_counter()
    if use_cuda:
        dist.init_process_group(backend, timeout=timeout, device_id=device)
    else:
        dist.init_process_group(backend, timeout=timeout)
    dist.barrier()
    init_seconds = time.perf_counter() - init_start

    def sync() -> None:
        if use_cuda:
            torch.cuda.synchronize()

    def slowest(seconds: float) -> float:
        """The time of the slowest rank: a collective is only as fast as its last participant."""
        value = torch.tensor([seconds], dtype=torch.float64, device=device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return float(value.item())

    if args.max_bytes:
        max_bytes = args.max_bytes
    elif use_cuda:
        free, _ = torch.cuda.mem_get_info(device)
        cap = (64 << 20) if args.quick else (1 << 30)
        max_bytes = min(cap, free // (world + 3))  # all_gather needs world x the buffer, plus the input
    else:
        max_bytes = (1 << 20) if args.quick else (16 << 20)
    if rank == 0:
        emit({"kind": "dist_setup", "backend": backend, "ranks": world, "torch_version": torch.__version__,
              "nccl_version": ".".join(str(x) for x in torch.cuda.nccl.version()) if use_cuda else None,
              "init_seconds": round(init_seconds, 3), "max_bytes": max_bytes,
              "local_world_size": int(os.environ.get("LOCAL_WORLD_SIZE", "1"))})

    for collective in COLLECTIVES:
        for nbytes in sweep_sizes(max_bytes):
            count = max(1, nbytes // 4)
            tensor = torch.ones(count, dtype=torch.float32, device=device)
            if collective == "all_reduce":
                op = lambda: dist.all_reduce(tensor)  # noqa: E731
            elif collective == "all_gather":
                outputs = [torch.empty_like(tensor) for _ in range(world)]
                op = lambda: dist.all_gather(outputs, tensor)  # noqa: E731
            else:
                op = lambda: dist.broadcast(tensor, src=0)  # noqa: E731
            for _ in range(2):
                op()
            sync()
            dist.barrier()
            iters = _iters(nbytes, args.quick)
            start = time.perf_counter()
            for _ in range(iters):
                op()
            sync()
            seconds = slowest((time.perf_counter() - start) / iters)
            if rank == 0:
                emit({"kind": "collective", "collective": collective, "bytes": count * 4, "seconds": seconds,
                      "ranks": world, "backend": backend})

    # Point-to-point bandwidth between rank pairs (on one node: GPU pairs). Quick mode: rank 0 with each peer.
    p2p_bytes = min(max_bytes, (64 << 20) if use_cuda else (1 << 20))
    pairs = [(0, peer) for peer in range(1, world)]
    if not args.quick:
        pairs = [(a, b) for a in range(world) for b in range(a + 1, world)][:28]
    count = max(1, p2p_bytes // 4)
    received = torch.zeros(count, dtype=torch.float32, device=device)
    for src, dst in pairs:
        # A pattern of its own per pair (integers below 2**24 are exact in float32), checked where it arrives:
        # a copy that returns wrong data (a broken P2P path, an IOMMU in the way) fails with the pair named.
        pattern = (torch.arange(count, dtype=torch.int64, device=device) * 7 + src * 131 + dst * 17) % 16777213
        pattern = pattern.to(torch.float32)
        dist.barrier()
        elapsed = 0.0
        if rank in (src, dst):
            for repeat in range(4):  # the first exchange sets up the connection; time the last three
                if rank == dst:
                    received.zero_()
                sync()
                start = time.perf_counter()
                if rank == src:
                    dist.send(pattern, dst)
                else:
                    dist.recv(received, src)
                sync()
                if repeat:
                    elapsed += time.perf_counter() - start
            elapsed /= 3
        seconds = slowest(elapsed)
        wrong = torch.zeros(1, dtype=torch.float32, device=device)
        if rank == dst:
            wrong += float((received != pattern).sum().item())
        dist.broadcast(wrong, src=dst)
        if rank == 0:
            emit({"kind": "p2p", "src": src, "dst": dst, "bytes": count * 4, "seconds": seconds,
                  "ranks": world, "backend": backend, "mismatched": int(wrong.item()), "values": count})
    train = ddp_training(torch, dist, device, rank, world, local_rank if use_cuda else None, args.quick, sync)
    if rank == 0:
        train.update(kind="ddp_train", ranks=world, backend=backend)
        emit(train)
    dist.barrier()
    if rank == 0:
        # Every rank is past its last measurement: a crash from here on is the teardown (process group, threads,
        # interpreter exit), not the collectives. Seen on 2 loaded cores: rank 1 aborting with "terminate called
        # without an active exception" after every result was printed.
        emit({"kind": "finished", "ranks": world})
    dist.destroy_process_group()
    return 0


def ddp_training(torch, dist, device, rank: int, world: int, device_index: Optional[int], quick: bool,
                 sync) -> dict:
    """A short data-parallel training run (DistributedDataParallel): the phase whose rhythm the utilization
    sampler judges, and a check of what DDP promises: after each step the replicas are exactly the same
    (gradients are all-reduced), so every rank must end with the same weights."""
    from torch.nn.parallel import DistributedDataParallel

    torch.manual_seed(1234)
    width = 1024 if device.type == "cuda" else 256
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width),
                                torch.nn.ReLU(), torch.nn.Linear(width, 16)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device_index] if device_index is not None else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(rank + 1)  # each rank its own batch, as a sampler would give it
    inputs = torch.randn(256, width, generator=generator).to(device)
    teacher = torch.randn(width, 16, generator=torch.Generator().manual_seed(99)).to(device)
    targets = (inputs @ teacher).argmax(dim=1)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> float:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(inputs), targets)
        loss.backward()
        optimizer.step()
        return float(loss.detach().item())

    # Calibrate: every rank must run the same number of steps, sized so the run lasts about the budget.
    first_loss = step()
    sync()
    start = time.perf_counter()
    for _ in range(4):
        step()
    sync()
    per_step = torch.tensor([(time.perf_counter() - start) / 4], dtype=torch.float64, device=device)
    dist.all_reduce(per_step, op=dist.ReduceOp.MAX)
    budget = 2.0 if quick else 8.0
    steps = int(min(5000, max(10, budget / max(float(per_step.item()), 1e-6))))
    sync()
    start = time.perf_counter()
    last_loss = first_loss
    for _ in range(steps):
        last_loss = step()
    sync()
    seconds = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=device)
    dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
    # The replicas: a checksum of every weight, compared across ranks.
    checksum = torch.stack([p.detach().double().sum() for p in model.parameters()]).sum().reshape(1)
    sums = [torch.zeros_like(checksum) for _ in range(world)]
    dist.all_gather(sums, checksum)
    values = [float(v.item()) for v in sums]
    spread = max(values) - min(values)
    return {"steps": steps, "seconds": float(seconds.item()), "loss_first": round(first_loss, 4),
            "loss_last": round(last_loss, 4), "replica_spread": spread,
            "replicas_identical": spread <= 1e-9 * max(1.0, max(abs(v) for v in values))}


if __name__ == "__main__":
    raise SystemExit(main())

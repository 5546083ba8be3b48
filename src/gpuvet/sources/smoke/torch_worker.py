"""Child process: PyTorch smoke workloads. Prints one result per line (``gpuvet.sources.smoke.child.MARKER`` + JSON).

Run as ``python -m gpuvet.sources.smoke.torch_worker [--quick] [--device auto|cpu]``. It reports raw measurements
(value + unit + what was measured); the parent scores them against the knowledge base, so this file stays
free of thresholds. Each workload is guarded: one failing (out of memory, no kernel image) never stops the rest.
"""

from __future__ import annotations

import argparse
import math
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

from gpuvet.sources.smoke.child import emit
from gpuvet.sources.smoke.metrics import copy_bandwidth_gbs, matmul_tflops, median

# Sizes per (device kind, quick). CPU sizes are tiny on purpose: the CPU path proves the harness, not the CPU.
SIZES = {
    ("cuda", True): dict(matmul_n=8192, matmul_reps=10, copy_mib=256, pinned_mib=256, cnn_steps=60,
                         cnn_batch=256, tf_steps=60, tf_batch=64, tf_dim=512, tf_seq=128, infer_batch=1024),
    ("cuda", False): dict(matmul_n=8192, matmul_reps=30, copy_mib=1024, pinned_mib=1024, cnn_steps=300,
                          cnn_batch=256, tf_steps=300, tf_batch=64, tf_dim=512, tf_seq=128, infer_batch=1024),
    ("cpu", True): dict(matmul_n=256, matmul_reps=3, copy_mib=32, pinned_mib=0, cnn_steps=12, cnn_batch=16,
                        tf_steps=12, tf_batch=8, tf_dim=32, tf_seq=16, infer_batch=32),
    ("cpu", False): dict(matmul_n=512, matmul_reps=5, copy_mib=128, pinned_mib=0, cnn_steps=40, cnn_batch=32,
                         tf_steps=40, tf_batch=16, tf_dim=64, tf_seq=32, infer_batch=64),
}
DTYPES = ("fp32", "tf32", "bf16", "fp16")
LOSS_FALL_RATIO = 0.8  # the last steps' mean loss must be below 80 % of the first steps' mean


def _say(message_id: str, **params: Any) -> Dict[str, Any]:
    """The detail as a catalog message (gpuvet's i18n, ``smoke.detail.*``): the report says it in its language; the
    English ``detail`` beside it is for anything that reads this worker's lines alone."""
    return {"id": message_id, "params": params}


def _result(name: str, kind: str, device: Dict[str, Any], **fields: Any) -> Dict[str, Any]:
    record = {"name": name, "kind": kind, "framework": "torch", "device_index": device["index"],
              "gpu_name": device["name"], "value": None, "unit": None, "detail": ""}
    record.update(fields)
    return record


class Timer(object):
    """Wall time on CPU; CUDA events on a GPU (kernel launches are asynchronous)."""

    def __init__(self, torch: Any, device: Any) -> None:
        self.torch = torch
        self.cuda = device.type == "cuda"

    def time(self, fn: Callable[[], Any]) -> float:
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()


def matmul(torch: Any, device: Any, info: Dict[str, Any], dtype_name: str, sizes: Dict[str, int]) -> Dict[str, Any]:
    name = "matmul_" + dtype_name
    cuda = device.type == "cuda"
    cc = info.get("cc_tuple") or (0, 0)
    if dtype_name == "tf32" and (not cuda or cc < (8, 0)):
        return _result(name, "matmul", info, dtype=dtype_name, status="skip",
                       detail="tf32 needs tensor cores of sm_80+ (Ampere or newer)" if cuda else
                       "tf32 is a GPU tensor-core mode",
                       say=_say("smoke.detail.tf32_old_gpu" if cuda else "smoke.detail.tf32_cpu"))
    if dtype_name == "bf16" and cuda and cc < (8, 0):
        return _result(name, "matmul", info, dtype=dtype_name, status="skip",
                       detail="bf16 is emulated before sm_80 (about 10x slower); fp16 is the fair test here",
                       say=_say("smoke.detail.bf16_emulated"))
    if dtype_name == "fp16" and not cuda:
        return _result(name, "matmul", info, dtype=dtype_name, status="skip",
                       detail="fp16 matmul on CPU says nothing about a GPU", say=_say("smoke.detail.fp16_cpu"))
    torch_dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    n = sizes["matmul_n"]
    a = torch.randn(n, n, device=device, dtype=torch_dtype)
    b = torch.randn(n, n, device=device, dtype=torch_dtype)
    timer = Timer(torch, device)
    for _ in range(2):  # warm-up: cuBLAS heuristics, clocks ramping up
        torch.matmul(a, b)
    timer.sync()
    times = [timer.time(lambda: torch.matmul(a, b)) for _ in range(sizes["matmul_reps"])]
    value = matmul_tflops(n, n, n, median(times))
    return _result(name, "matmul", info, dtype=dtype_name, value=round(value, 3), unit="TFLOPS",
                   detail="%dx%d @ %dx%d, median of %d" % (n, n, n, n, len(times)),
                   say=_say("smoke.detail.matmul", n=n, runs=len(times)))


def memcpy(torch: Any, device: Any, info: Dict[str, Any], sizes: Dict[str, int]) -> Dict[str, Any]:
    nbytes = sizes["copy_mib"] << 20
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    timer = Timer(torch, device)
    dst.copy_(src)
    timer.sync()
    times = [timer.time(lambda: dst.copy_(src)) for _ in range(5)]
    value = copy_bandwidth_gbs(nbytes, median(times))
    return _result("memory_copy", "memcpy", info, value=round(value, 2), unit="GB/s",
                   detail="%d MiB copy in %s memory, read + write counted, median of %d" % (sizes["copy_mib"], device.type, len(times)),
                   say=_say("smoke.detail.copy", mib=sizes["copy_mib"], device=device.type, runs=len(times)))


def host_transfers(torch: Any, device: Any, info: Dict[str, Any], sizes: Dict[str, int]) -> List[Dict[str, Any]]:
    if device.type != "cuda":
        detail = "no GPU: host<->device bandwidth needs a CUDA device"
        return [_result(n, k, info, status="skip", detail=detail, say=_say("smoke.detail.no_gpu_transfer"))
                for n, k in (("host_to_device", "host_to_device"), ("device_to_host", "device_to_host"))]
    nbytes = sizes["pinned_mib"] << 20
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(nbytes, dtype=torch.uint8, device=device)
    timer = Timer(torch, device)
    out = []
    for name, fn in (("host_to_device", lambda: dev.copy_(host, non_blocking=True)),
                     ("device_to_host", lambda: host.copy_(dev, non_blocking=True))):
        fn()
        timer.sync()
        times = [timer.time(fn) for _ in range(5)]
        value = nbytes / median(times) / 1e9
        out.append(_result(name, name, info, value=round(value, 2), unit="GB/s",
                           detail="%d MiB pinned copy, median of 5" % sizes["pinned_mib"],
                           say=_say("smoke.detail.pinned", mib=sizes["pinned_mib"])))
    link = _pcie_current(info)
    if link:  # read right after the copies: an idle GPU may have downshifted its link
        for record in out:
            record["pcie_current"] = link
    return out


def _loss_falls(losses: List[float]) -> bool:
    k = max(2, len(losses) // 5)
    first, last = sum(losses[:k]) / k, sum(losses[-k:]) / k
    return all(math.isfinite(x) for x in losses) and last < LOSS_FALL_RATIO * first


def _autocast(torch: Any, device: Any, info: Dict[str, Any]) -> Any:
    import contextlib

    if device.type == "cuda" and (info.get("cc_tuple") or (0, 0)) >= (8, 0):
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _train(torch: Any, device: Any, info: Dict[str, Any], name: str, model: Any, batch: Any, target: Any,
           steps: int, batch_size: int) -> Dict[str, Any]:
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    timer = Timer(torch, device)
    warmup = max(2, steps // 10)
    start: Optional[float] = None
    for step in range(steps):
        if step == warmup:
            timer.sync()
            start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with _autocast(torch, device, info):
            logits = model(batch)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    timer.sync()
    assert start is not None, "warmup < steps: the timer starts inside the loop"
    elapsed = time.perf_counter() - start
    samples_per_s = (steps - warmup) * batch_size / elapsed
    falls = _loss_falls(losses)
    return _result(name, "training", info, value=round(samples_per_s, 1), unit="samples/s",
                   status="pass" if falls else "fail", loss_first=round(losses[0], 4), loss_last=round(losses[-1], 4),
                   detail="%d steps, batch %d, loss %.3f -> %.3f%s" % (
                       steps, batch_size, losses[0], losses[-1], "" if falls else " (did not fall)"),
                   say=_say("smoke.detail.train" if falls else "smoke.detail.train_no_fall", steps=steps,
                            batch=batch_size, first="%.3f" % losses[0], last="%.3f" % losses[-1]))


def _cnn(torch: Any) -> Any:
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10),
    )


def _class_images(torch: Any, device: Any, batch: int) -> Any:
    """Synthetic but learnable images: each class is a fixed pattern plus noise, so a working stack learns it."""
    generator = torch.Generator().manual_seed(0)
    prototypes = torch.randn(10, 3, 32, 32, generator=generator)
    labels = torch.arange(batch) % 10
    images = prototypes[labels] + 0.5 * torch.randn(batch, 3, 32, 32, generator=generator)
    return images.to(device), labels.to(device)


def train_cnn(torch: Any, device: Any, info: Dict[str, Any], sizes: Dict[str, int]) -> Dict[str, Any]:
    torch.manual_seed(0)
    images, labels = _class_images(torch, device, sizes["cnn_batch"])
    model = _cnn(torch).to(device)
    return _train(torch, device, info, "train_cnn", model, images, labels, sizes["cnn_steps"], sizes["cnn_batch"])


class _TinyTransformer(object):
    """Built lazily so that importing this module does not import torch."""

    @staticmethod
    def build(torch: Any, vocab: int, dim: int) -> Any:
        nn: Any = torch.nn

        class Model(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.embed = nn.Embedding(vocab, dim)
                self.block = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=2 * dim, dropout=0.0,
                                                        batch_first=True)
                self.head = nn.Linear(dim, vocab)

            def forward(self, tokens: Any) -> Any:
                return self.head(self.block(self.embed(tokens)))

        return Model()


def train_transformer(torch: Any, device: Any, info: Dict[str, Any], sizes: Dict[str, int]) -> Dict[str, Any]:
    torch.manual_seed(0)
    vocab = 64
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, vocab, (sizes["tf_batch"], sizes["tf_seq"]), generator=generator).to(device)
    model = _TinyTransformer.build(torch, vocab, sizes["tf_dim"]).to(device)
    # Copy task: predict each input token. Any working attention block + optimizer learns it within steps.
    return _train(torch, device, info, "train_transformer", model, tokens, tokens, sizes["tf_steps"], sizes["tf_batch"])


def inference(torch: Any, device: Any, info: Dict[str, Any], sizes: Dict[str, int]) -> Dict[str, Any]:
    torch.manual_seed(0)
    model = _cnn(torch).to(device).eval()
    images, _ = _class_images(torch, device, sizes["infer_batch"])
    timer = Timer(torch, device)
    with torch.no_grad():
        out = model(images)
        timer.sync()
        times = [timer.time(lambda: model(images)) for _ in range(5)]
    finite = bool(torch.isfinite(out).all())
    value = sizes["infer_batch"] / median(times)
    return _result("inference", "inference", info, value=round(value, 1), unit="samples/s",
                   status="pass" if finite else "fail",
                   detail="CNN forward, batch %d, median of 5%s" % (sizes["infer_batch"], "" if finite else ", NaN/Inf in output"),
                   say=_say("smoke.detail.inference" if finite else "smoke.detail.inference_nan", batch=sizes["infer_batch"]))


def _nvml_links(torch: Any, count: int) -> Dict[int, Dict[str, Any]]:
    """PCIe max gen/width per CUDA device, through NVML when nvidia-ml-py is importable (matched by PCI bus id)."""
    links: Dict[int, Dict[str, Any]] = {}
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return links
    for index in range(count):
        try:
            props = torch.cuda.get_device_properties(index)
            bus_id = "%08x:%02x:%02x.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode())
            links[index] = {
                "handle": handle,
                "gen_max": pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle),
                "width_max": pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle),
            }
        except Exception:
            continue
    return links


def _pcie_current(info: Dict[str, Any]) -> Optional[Dict[str, int]]:
    handle = info.get("nvml_handle")
    if handle is None:
        return None
    try:
        import pynvml

        return {"gen": pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle),
                "width": pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)}
    except Exception:
        return None


def discover(torch: Any, device_choice: str) -> List[Dict[str, Any]]:
    """The devices to test, and one discovery result describing what torch sees."""
    cuda_build = getattr(torch.version, "cuda", None)
    available = device_choice != "cpu" and torch.cuda.is_available()
    count = torch.cuda.device_count() if available else 0
    devices: List[Dict[str, Any]] = []
    if count:
        links = _nvml_links(torch, count)
        for index in range(count):
            props = torch.cuda.get_device_properties(index)
            link = links.get(index, {})
            devices.append({"index": index, "name": props.name, "cc_tuple": (props.major, props.minor),
                            "memory_mib": props.total_memory >> 20, "nvml_handle": link.get("handle"),
                            "pcie_gen_max": link.get("gen_max"), "pcie_width_max": link.get("width_max")})
    emit({"name": "device_discovery", "kind": "discovery", "framework": "torch", "device_index": None,
          "gpu_name": None, "value": count, "unit": "GPUs", "status": "pass",
          "torch_version": torch.__version__, "torch_cuda": cuda_build, "cuda_available": bool(available),
          "devices": [{k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items() if k != "nvml_handle"}
                      for d in devices],
          "detail": "torch %s (%s): %s" % (
              torch.__version__, "CUDA " + cuda_build if cuda_build else "CPU-only build",
              ", ".join("cuda:%d %s" % (d["index"], d["name"]) for d in devices) or "no CUDA device, running on CPU"),
          "say": (_say("smoke.detail.discovery_cpu", version=torch.__version__) if not cuda_build
                  else _say("smoke.detail.discovery_cuda_no_gpu", version=torch.__version__, cuda=cuda_build))
          if not devices else None})
    if not devices:
        devices.append({"index": None, "name": None, "cc_tuple": None})
    return devices


def run_device(torch: Any, info: Dict[str, Any], quick: bool) -> None:
    device = torch.device("cuda", info["index"]) if info["index"] is not None else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    sizes = SIZES[(device.type, quick)]
    steps: List[Callable[..., Any]] = [lambda d=d: matmul(torch, device, info, d, sizes) for d in DTYPES]
    steps += [lambda: memcpy(torch, device, info, sizes), lambda: host_transfers(torch, device, info, sizes),
              lambda: train_cnn(torch, device, info, sizes), lambda: train_transformer(torch, device, info, sizes),
              lambda: inference(torch, device, info, sizes)]
    public_info = {"index": info["index"], "name": info["name"]}
    for step in steps:
        try:
            produced = step()
        except Exception as exc:  # one failing workload is a result, not the end of the run
            name = getattr(step, "__name__", "workload")
            produced = _result("error", "error", public_info, status="fail",
                               detail="%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""),
                               trace=traceback.format_exc(limit=3)[-800:], step=name)
        for record in produced if isinstance(produced, list) else [produced]:
            if device.type == "cuda":
                record.setdefault("pcie_gen_max", info.get("pcie_gen_max"))
                record.setdefault("pcie_width_max", info.get("pcie_width_max"))
            emit(record)
        if device.type == "cuda":
            torch.cuda.empty_cache()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuvet.sources.smoke.torch_worker")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", choices=("auto", "cpu"), default="auto")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
    for info in discover(torch, args.device):
        run_device(torch, info, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

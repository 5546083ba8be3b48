"""Child process: smoke workloads for TensorFlow, JAX and PaddlePaddle (run only when the framework is installed).

``python -m gpuvet.sources.smoke.other_workers --framework tensorflow|jax|paddle [--quick]``. Device discovery and a
matmul in fp32/bf16; the training/inference workloads are torch-only for now and reported as skipped, said
plainly rather than left out.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Dict, List, Optional

from gpuvet.sources.smoke.child import emit
from gpuvet.sources.smoke.metrics import matmul_tflops, median


def _time(fn: Callable[[], Any], block: Callable[[Any], Any], reps: int) -> float:
    block(fn())  # warm-up / compile
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        block(fn())
        times.append(time.perf_counter() - start)
    return median(times)


def _tensorflow(quick: bool) -> List[Dict[str, Any]]:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    n = (8192 if not quick else 4096) if gpus else 256
    out = [{"name": "device_discovery", "kind": "discovery", "value": len(gpus), "unit": "GPUs", "status": "pass",
            "cuda_available": bool(gpus), "detail": "tensorflow %s: %d GPU(s)" % (tf.__version__, len(gpus))}]
    name = None
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        name = details.get("device_name")
    for dtype_name, dtype in (("fp32", tf.float32), ("bf16", tf.bfloat16)):
        with tf.device("/GPU:0" if gpus else "/CPU:0"):
            a = tf.random.normal((n, n), dtype=dtype)
            b = tf.random.normal((n, n), dtype=dtype)
            seconds = _time(lambda: tf.linalg.matmul(a, b), lambda r: r.numpy(), 5)
        out.append({"name": "matmul_" + dtype_name, "kind": "matmul", "dtype": dtype_name, "gpu_name": name,
                    "device_index": 0 if gpus else None, "value": round(matmul_tflops(n, n, n, seconds), 3),
                    "unit": "TFLOPS", "detail": "%dx%d, median of 5 (includes the copy back to host)" % (n, n)})
    return out


def _jax(quick: bool) -> List[Dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    devices = [d for d in jax.devices() if d.platform == "gpu"]
    n = (8192 if not quick else 4096) if devices else 256
    out = [{"name": "device_discovery", "kind": "discovery", "value": len(devices), "unit": "GPUs", "status": "pass",
            "cuda_available": bool(devices), "detail": "jax %s: %s" % (jax.__version__, jax.devices())}]
    name = getattr(devices[0], "device_kind", None) if devices else None
    key = jax.random.PRNGKey(0)
    for dtype_name, dtype in (("fp32", jnp.float32), ("bf16", jnp.bfloat16)):
        a = jax.random.normal(key, (n, n), dtype=dtype)
        b = jax.random.normal(key, (n, n), dtype=dtype)
        f = jax.jit(jnp.matmul)
        seconds = _time(lambda: f(a, b), lambda r: r.block_until_ready(), 5)
        out.append({"name": "matmul_" + dtype_name, "kind": "matmul", "dtype": dtype_name, "gpu_name": name,
                    "device_index": 0 if devices else None, "value": round(matmul_tflops(n, n, n, seconds), 3),
                    "unit": "TFLOPS", "detail": "%dx%d jit, median of 5" % (n, n)})
    return out


def _paddle(quick: bool) -> List[Dict[str, Any]]:
    import paddle

    cuda = paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    paddle.set_device("gpu:0" if cuda else "cpu")
    n = (8192 if not quick else 4096) if cuda else 256
    out = [{"name": "device_discovery", "kind": "discovery", "value": paddle.device.cuda.device_count() if cuda else 0,
            "unit": "GPUs", "status": "pass", "cuda_available": bool(cuda),
            "detail": "paddle %s (%s)" % (paddle.__version__, "CUDA" if cuda else "CPU")}]
    name = paddle.device.cuda.get_device_name(0) if cuda else None
    for dtype_name in ("fp32", "bf16"):
        dtype = "float32" if dtype_name == "fp32" else "bfloat16"
        a = paddle.randn([n, n]).astype(dtype)
        b = paddle.randn([n, n]).astype(dtype)
        block = (lambda r: paddle.device.cuda.synchronize()) if cuda else (lambda r: r.numpy())
        seconds = _time(lambda: paddle.matmul(a, b), block, 5)
        out.append({"name": "matmul_" + dtype_name, "kind": "matmul", "dtype": dtype_name, "gpu_name": name,
                    "device_index": 0 if cuda else None, "value": round(matmul_tflops(n, n, n, seconds), 3),
                    "unit": "TFLOPS", "detail": "%dx%d, median of 5" % (n, n)})
    return out


RUNNERS = {"tensorflow": _tensorflow, "jax": _jax, "paddle": _paddle}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuvet.sources.smoke.other_workers")
    parser.add_argument("--framework", choices=sorted(RUNNERS), required=True)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    for record in RUNNERS[args.framework](args.quick):
        record["framework"] = args.framework
        emit(record)
    for name in ("train_cnn", "train_transformer", "inference"):
        emit({"name": name, "kind": "training", "framework": args.framework, "status": "skip", "value": None,
              "unit": None, "detail": "implemented for torch only in this gpuvet version"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Validation by real runs: matmul, copy bandwidth, training and inference through the installed frameworks,
and collectives through torchrun. Every workload runs in a child process with a timeout, so a hang or crash of
a framework never takes gpuvet down (``gpuvet.sources.smoke.child``)."""

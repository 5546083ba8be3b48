#!/bin/sh
# Slurm prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/gpuvet.sh, PrologFlags=Alloc): take a GPU node out of service
# when gpuvet finds a failure on it. gpuvet check --prolog prints nothing on success and one line on stderr on a
# failure (the drain reason); a non-zero exit makes Slurm drain the node and requeue the job.
# GPUVET_TARGETS: the builds this cluster's jobs use, e.g. "torch==2.5.1 vllm==0.6.3"; empty checks the machine and
# the installed frameworks.
exec timeout 60 gpuvet check --prolog ${GPUVET_TARGETS:-} 2>>/var/log/slurm/gpuvet-prolog.log

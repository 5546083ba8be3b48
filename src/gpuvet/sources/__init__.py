"""Inputs beyond the stdlib probe: pasted files and saved snapshots gathered into one snapshot, the network
reachability of package indexes, remote hosts (SSH, Slurm) and the measured smoke runs."""

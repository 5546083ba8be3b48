"""Fleets: probe many hosts over SSH or Slurm without installing anything there, and show the nodes that differ."""

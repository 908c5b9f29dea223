"""Pilots: run a workload on whatever torch device is present and record what a PoC must show.

Importing this package does not import torch; only the device layer, workloads and runners do.
"""

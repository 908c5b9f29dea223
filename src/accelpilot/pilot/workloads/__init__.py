"""Workloads: the protocol a user's model plugs into, and the built-in reference workloads."""

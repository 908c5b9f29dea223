"""Where a pilot ran, from local sources only: no network call, no metadata service.

- EC2 (Nitro): ``/sys/devices/virtual/dmi/id/sys_vendor`` reads "Amazon EC2" and ``product_name`` holds the
  instance type.
- SkyPilot: ``SKYPILOT_CLUSTER_INFO`` (JSON with cloud, region, zone), ``SKYPILOT_NUM_NODES``,
  ``SKYPILOT_NODE_RANK``, ``SKYPILOT_NODE_IPS`` (only their count is kept: addresses say nothing about the
  platform and map a private network).
- ``accelpilot launch``: ``ACCELPILOT_OPTIONS`` (the scenario options the task was written for),
  ``ACCELPILOT_TASK``, ``ACCELPILOT_SCENARIO``, so ``collect`` knows what the result was launched to measure.

Torch-free and pure (environment and folder are arguments), so tests feed it fakes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DMI_DIR = Path("/sys/devices/virtual/dmi/id")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def cloud_identity(env: Mapping[str, str] | None = None, dmi_dir: Path = DMI_DIR) -> dict[str, Any]:
    """Instance type, cloud, region, zone and node layout where the machine tells them locally."""
    env = os.environ if env is None else env
    out: dict[str, Any] = {}
    sources: list[str] = []
    if _read(dmi_dir / "sys_vendor") == "Amazon EC2":
        product = _read(dmi_dir / "product_name")
        out["cloud"] = "aws"
        if product and "." in product:  # Nitro: the instance type, e.g. trn1.32xlarge
            out["instance_type"] = product
        sources.append("dmi")
    info = env.get("SKYPILOT_CLUSTER_INFO")
    if info:
        try:
            data = json.loads(info)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            for key in ("cloud", "region", "zone"):
                if data.get(key):
                    out[key] = str(data[key]).lower() if key == "cloud" else str(data[key])
            sources.append("skypilot")
    for var, key in (("SKYPILOT_NUM_NODES", "num_nodes"), ("SKYPILOT_NODE_RANK", "node_rank")):
        if env.get(var, "").strip().isdigit():
            out[key] = int(env[var])
    ips = [ip for ip in env.get("SKYPILOT_NODE_IPS", "").split() if ip]
    if ips:
        out["node_ips_count"] = len(ips)
    if out:
        out["sources"] = sources or ["skypilot"]
    return out


def launch_labels(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What `accelpilot launch` wrote the task for (empty when the pilot was started by hand)."""
    env = os.environ if env is None else env
    out: dict[str, Any] = {}
    raw = env.get("ACCELPILOT_OPTIONS")
    if raw:
        try:
            names = json.loads(raw)
        except json.JSONDecodeError:
            names = [raw]
        if isinstance(names, list):
            out["options"] = [str(n) for n in names]
    for var, key in (("ACCELPILOT_TASK", "task"), ("ACCELPILOT_SCENARIO", "scenario")):
        if env.get(var):
            out[key] = env[var]
    return out


def location_fields(env: Mapping[str, str] | None = None, dmi_dir: Path = DMI_DIR) -> dict[str, Any]:
    """Extra Platform fields: ``cloud`` and ``launch``, each only when there is something to say."""
    out: dict[str, Any] = {}
    cloud = cloud_identity(env, dmi_dir)
    if cloud:
        out["cloud"] = cloud
    labels = launch_labels(env)
    if labels:
        out["launch"] = labels
    return out

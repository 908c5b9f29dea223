"""Which EC2 quota an instance type draws on, found by QuotaName, never by a hard-coded quota code.

EC2 counts running instances in vCPUs per instance class: "Running On-Demand P instances", "Running On-Demand
Trn instances", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", and for spot "All P Spot
Instance Requests". The class is the letters before the generation digit of the family (p5en -> P, trn2 -> Trn,
g6e -> G, vt1 -> VT); codes differ by quota and AWS may add classes, so the name is parsed, not a table of codes.
Service Quotas prints ``"Unit": "None"`` for these and says vCPU in ``UsageMetric.MetricDimensions.Resource``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from accelpilot.errors import InputFileError
from accelpilot.evidence.model import Quota

_ON_DEMAND = re.compile(r"^Running On-Demand (?P<cls>.+) instances$", re.IGNORECASE)
_SPOT = re.compile(r"^All (?P<cls>.+) Spot Instance Requests$", re.IGNORECASE)
_COUNT_UNITS = {"", "none", "count"}
# Pricing models that run as on-demand instances as far as EC2's quota is concerned: a reservation or a
# Savings Plan is a billing discount, the instances still count against the On-Demand quota.
ON_DEMAND_QUOTA_PRICING = {"on_demand", "reserved_1y", "reserved_3y"}


def instance_class(instance_type: str) -> str:
    """``p5en.48xlarge`` -> ``p``; ``trn2.48xlarge`` -> ``trn``; ``u-6tb1.metal`` -> ``u``."""
    family = instance_type.lower().split(".", 1)[0]
    m = re.match(r"[a-z]+", family)
    return m.group(0) if m else family


def _classes(text: str) -> set[str]:
    """The instance classes a quota's class phrase covers: "Standard (A, C, D)" -> {a, c, d}; "G and VT"."""
    text = text.strip()
    if text.lower() == "high memory":
        return {"u"}
    inner = re.search(r"\(([^)]*)\)", text)
    body = inner.group(1) if inner else text
    return {t.strip().lower() for t in re.split(r",|\band\b", body) if t.strip()}


def kind_of(q: Quota) -> str | None:
    """``on_demand`` or ``spot`` when the quota counts running instances of a class; else None."""
    if _ON_DEMAND.match(q.quota_name.strip()):
        return "on_demand"
    if _SPOT.match(q.quota_name.strip()):
        return "spot"
    return None


def covers(q: Quota, instance_type: str) -> bool:
    m = _ON_DEMAND.match(q.quota_name.strip()) or _SPOT.match(q.quota_name.strip())
    return bool(m) and instance_class(instance_type) in _classes(m.group("cls"))  # type: ignore[union-attr]


def find_quota(quotas: Iterable[Quota], instance_type: str, pricing: str, region: str) -> Quota | None:
    """The quota an instance type draws on in a region for a pricing model; the last file read wins."""
    want = "spot" if pricing == "spot" else "on_demand"
    found = [
        q
        for q in quotas
        if q.service_code.lower() == "ec2" and q.region == region and kind_of(q) == want and covers(q, instance_type)
    ]
    return found[-1] if found else None


def check_quota_unit(q: Quota, usage_metric: Any, where: str) -> None:
    """Running-instance quotas must count vCPUs; anything else is refused rather than compared wrongly."""
    if kind_of(q) is None:
        return
    resource = None
    if isinstance(usage_metric, dict) and isinstance(usage_metric.get("MetricDimensions"), dict):
        resource = usage_metric["MetricDimensions"].get("Resource")
    if q.unit.strip().lower() not in _COUNT_UNITS or (resource is not None and resource != "vCPU"):
        got = f"Unit {q.unit!r}" + (f", UsageMetric Resource {resource!r}" if resource is not None else "")
        raise InputFileError(
            f"quota {q.quota_code} {q.quota_name!r} is in an unexpected unit ({got}); expected a vCPU count "
            '(Unit "None", Resource "vCPU")',
            file=q.file,
            field=where,
            fix="export the EC2 quotas with `aws service-quotas list-service-quotas --service-code ec2`",
        )

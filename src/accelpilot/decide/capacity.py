"""What each priced option asks of the AWS account, gathered once for the capacity gate.

The scenario names where the workload must run (``[evidence] regions`` and ``zones``, else each option's
region); the catalog holds vCPUs per instance (EC2 quotas count vCPUs); the bill holds how long a run keeps
its instances (a capacity block must cover it). ``evidence.capacity.check_capacity`` does the judging.
"""

from __future__ import annotations

from decimal import Decimal

from accelpilot.bill.model import Bill
from accelpilot.bill.scenario import Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.evidence.capacity import CLOUD_PRICING, CapacityCheck, Need, check_capacity
from accelpilot.evidence.model import EvidenceSet


def needs(scenario: Scenario, bill: Bill, catalog: Catalog | None) -> list[Need]:
    out = []
    for opt in scenario.options:
        if opt.pricing not in CLOUD_PRICING or not opt.instance:
            continue  # owned, rental and measured spend: nothing to obtain from an AWS account
        row = catalog.instance(opt.instance) if catalog is not None else None
        ob = next((o for o in bill.options if o.name == opt.name), None)
        hours: Decimal | None = None
        if ob is not None and ob.workload == "training" and ob.hours_per_run is not None:
            hours = ob.hours_per_run.value
        regions = tuple(scenario.evidence.regions) or ((opt.region,) if opt.region else ())
        out.append(
            Need(
                option=opt.name,
                instance_type=opt.instance,
                instances=opt.instances,
                pricing=opt.pricing,
                regions=regions,
                zones=tuple(scenario.evidence.zones),
                vcpus_per_instance=row.vcpus if row else None,
                vcpus_source=(row.vcpus_source or row.source) if row else "",
                run_hours=hours,
            )
        )
    return out


def capacity_checks(
    scenario: Scenario, bill: Bill, catalog: Catalog | None, evidence: EvidenceSet | None
) -> list[CapacityCheck]:
    ev = evidence or EvidenceSet()
    return [check_capacity(ev, n) for n in needs(scenario, bill, catalog)]

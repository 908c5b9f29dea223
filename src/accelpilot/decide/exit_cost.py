"""The exit cost of each option, seed 000's "exit test": how long, and at what cost, to run the workload elsewhere?

For each option the destination is the other side of the decision: leaving a Neuron option means running on
GPUs again; leaving a GPU option (cloud, rental, owned) means another GPU site or cloud. The engineering time
comes from the portability log's effort classes, mapped to engineer-days by the documented assumptions below,
plus a fixed re-validation; the scenario's day rate prices it. Data stored in AWS adds a one-off egress fee
priced with AWS's transfer tiers. Every number is a Figure, so the report shows where each one comes from.

Assumptions (shown as such in every report):
- an item sized by the log's effort model (``porting/effort.py``: engineer-days as a range per item): the midpoint
  of the relevant items' summed ranges, the range in a note (issue 27).
- an item or finding without a range (a log written before the effort model), by its effort class: ``hours``: 0.5
  engineer-day; ``days``: 3; ``weeks``: 10 (two working weeks).
- re-validation on the destination (quality parity, checkpoint/restart, the pilot's checks): 2 engineer-days.
- leaving Neuron: every finding that concerns the Neuron target is assumed to need the same work again to go
  back (the port's workarounds are undone), plus Neuron-only code the log found (rules that concern GPUs).
- leaving a GPU option for another GPU site: only operational, container and data-movement findings count;
  CUDA code runs on the destination's GPUs.
- one engineer, five working days a week, for the calendar estimate.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.bill.model import Bill, OptionBill
from accelpilot.bill.scenario import Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.decide.portability import NEURON_FAMILY, FindingView, LogView, family_of
from accelpilot.figures import Figure, FigureRef, Kind, assumption, fig_ref

ASSUMPTION_SOURCE = "accelpilot exit-test assumption (decide/exit_cost.py)"
EFFORT_DAYS: dict[str, Decimal] = {"hours": Decimal("0.5"), "days": Decimal(3), "weeks": Decimal(10)}
REVALIDATION_DAYS = Decimal(2)
DAYS_PER_WEEK = Decimal(5)
SITE_SPECIFIC_CATEGORIES = frozenset({"operational", "container", "data_movement"})


class ExitTest(BaseModel):
    """One option's exit: destination, engineer-days, calendar weeks, cost, fees, and the findings behind it."""

    model_config = ConfigDict(frozen=True)

    option: str
    family: str
    destination: str
    engineer_days: FigureRef
    weeks: FigureRef
    cost: FigureRef | None  # None when the scenario gives no day rate
    egress_fee: FigureRef | None = None
    total: FigureRef | None = None
    finding_ids: list[str] = Field(default_factory=list)
    by_effort: dict[str, int] = Field(default_factory=dict)
    artefacts: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    from_log: bool = False


def effort_figure(effort: str) -> Figure:
    days = EFFORT_DAYS.get(effort, EFFORT_DAYS["days"])
    return assumption(days, "day", ASSUMPTION_SOURCE, label=f"engineer-days per '{effort}' finding")


def _relevant(findings: list[FindingView], family: str) -> list[FindingView]:
    if family in NEURON_FAMILY:
        return [f for f in findings if f.concerns(family) or "gpu" in f.targets]
    return [f for f in findings if f.category in SITE_SPECIFIC_CATEGORIES or f.dimension == "operational"]


def _stored_gb(sc: Scenario, opt_name: str) -> Decimal:
    opt = next((o for o in sc.options if o.name == opt_name), None)
    ex = opt.extras if opt is not None and opt.extras is not None else sc.extras
    return ex.object_storage_gb_months + ex.storage_gb_months + ex.snapshot_gb_months


def exit_cost(ob: OptionBill, sc: Scenario, log: LogView | None, catalog: Catalog | None = None) -> ExitTest:
    """The exit test for one priced option."""
    family = family_of(ob.accelerator, ob.instance)
    notes: list[str] = []
    if family in NEURON_FAMILY:
        destination = "GPUs (cloud, hosted or owned)"
    elif ob.pricing in ("owned", "buy_and_host"):
        destination = "another GPU site or cloud (the hardware itself can be redeployed or resold)"
    else:
        destination = "another GPU cloud or an owned/hosted GPU site"
    revalidate = assumption(REVALIDATION_DAYS, "day", ASSUMPTION_SOURCE, label="re-validation on the destination")
    parts: list[Figure] = [revalidate]
    ids: list[str] = []
    by_effort: dict[str, int] = {}
    artefacts = ["checkpoints and tokeniser/model artefacts", "training/evaluation data the workload reads"]
    if log is not None:
        rel = _relevant(log.findings, family)
        ids = [f.id for f in rel]
        ranged = [f for f in rel if f.days_low is not None and f.days_high is not None]
        if ranged:
            # items sized by the log's effort model (issue 27): the midpoint of their summed ranges, range in a note
            low = sum(f.days_low or 0.0 for f in ranged)
            high = sum(f.days_high or 0.0 for f in ranged)
            parts.append(
                assumption(
                    Decimal(str(round((low + high) / 2, 2))),
                    "day",
                    f"effort model of the portability log {log.path or ''}".strip(),
                    label=f"{len(ranged)} items, midpoint of {low:g}-{high:g} engineer-days (the log's effort model)",
                )
            )
            notes.append(f"porting items by the log's effort model: {low:g}-{high:g} engineer-days, midpoint counted")
        for eff in ("hours", "days", "weeks"):
            n = sum(1 for f in rel if f.effort == eff)
            if n:
                by_effort[eff] = n
            n = sum(1 for f in rel if f.effort == eff and f.days_high is None)
            if n:
                count = Figure(
                    value=n,
                    unit="",
                    kind=Kind.MEASURED,
                    source=f"portability log {log.path or ''}".strip(),
                    label=f"findings with effort '{eff}'",
                )
                parts.append((count * effort_figure(eff)).with_label(f"{n} '{eff}' findings"))
        for f in rel:
            if f.category == "data_movement":
                artefacts.append(f"{f.message or f.rule} ({f.where})")
    else:
        notes.append("no portability log: run `accelpilot scan` for an exit estimate from the code itself")
        if family in NEURON_FAMILY and ob.one_off_cost.value:
            port = next((o for o in sc.options if o.name == ob.name), None)
            if port is not None and port.porting_days:
                parts.append(
                    assumption(
                        port.porting_days,
                        "day",
                        f"scenario porting_days of {ob.name!r}, mirrored",
                        label="undoing the port (mirror of the porting days)",
                    )
                )
    days = parts[0]
    for p in parts[1:]:
        days = days + p
    days = days.with_label("engineer-days to run elsewhere")
    weeks = days / assumption(DAYS_PER_WEEK, "day/week", ASSUMPTION_SOURCE, label="working days a week, one engineer")
    weeks = weeks.with_label("calendar weeks, one engineer")
    cost = total = egress = None
    if sc.engineering.day_rate:
        rate = assumption(sc.engineering.day_rate, f"{sc.currency}/day", "scenario engineering", "engineer day rate")
        cost = (days * rate).with_label("exit engineering cost")
        total = cost
    else:
        notes.append("the scenario gives no engineering day_rate: days are shown, cost is not")
    gb = _stored_gb(sc, ob.name)
    if gb and catalog is not None and ob.pricing not in ("owned", "buy_and_host", "rental"):
        from accelpilot.bill.common import dto_monthly

        stored = assumption(gb, "GB/month", "scenario extras (stored GB)", label="data stored in AWS")
        egress = dto_monthly(stored, catalog).with_label("one-off egress of the stored data")
        egress = egress.model_copy(update={"unit": sc.currency})
        total = (cost + egress).with_label("exit cost") if cost is not None else None
        artefacts.append(f"{gb} GB stored in AWS (egress priced at AWS's transfer tiers)")
    elif ob.pricing not in ("owned", "buy_and_host", "rental"):
        notes.append("no stored data in the scenario's extras: egress is not priced")
    return ExitTest(
        option=ob.name,
        family=family,
        destination=destination,
        engineer_days=fig_ref(days),
        weeks=fig_ref(weeks),
        cost=fig_ref(cost) if cost is not None else None,
        egress_fee=fig_ref(egress) if egress is not None else None,
        total=fig_ref(total) if total is not None else None,
        finding_ids=ids,
        by_effort=by_effort,
        artefacts=artefacts,
        notes=notes,
        from_log=log is not None,
    )


def exit_costs(bill: Bill, sc: Scenario, log: LogView | None, catalog: Catalog | None = None) -> list[ExitTest]:
    return [exit_cost(o, sc, log, catalog) for o in bill.options]

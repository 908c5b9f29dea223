"""The bill's output: plain data the CLI, decide/ and report/ read. Every number is a Figure."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.catalog.model import ClaimRow
from accelpilot.figures import Figure, Kind, fig_ref, money

# The figure the seeds compare options by ("cost per accepted output"), one per workload kind.
PER_OUTPUT: dict[str, tuple[str, str]] = {
    "training": ("cost_per_accepted_run", "cost per accepted run"),
    "serving": ("cost_per_1k_accepted_requests", "cost per 1,000 accepted requests"),
}


def per_output_field(workload: str) -> str:
    """The OptionBill (and report OptionView) field holding the cost per accepted output."""
    return PER_OUTPUT[workload][0]


def per_output_name(workload: str) -> str:
    return PER_OUTPUT[workload][1]


class LineItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    per: Literal["run", "month", "once", "request"]
    figure: Figure
    internal: bool = False  # internal pay (owned staff), not bought from a vendor: taxed only with [extras] tax_staff


class FleetMode(BaseModel):
    """One way of running a serving fleet for the scenario's traffic (issue 10, section 4)."""

    model_config = ConfigDict(frozen=True)

    mode: str  # always_on, scheduled
    instances: int  # at peak (always on) or the most in any hour (scheduled)
    instance_hours: Figure  # billed a month
    idle_share: Figure  # derived from the traffic profile
    monthly_cost: Figure
    cost_per_1k_accepted_requests: Figure


class FleetInputs(BaseModel):
    """The exact inputs of a serving fleet's monthly cost, kept for the flip points (issue 10, section 5).

    monthly = (instance_hour x instance-hours x (1 + support) + overhead) x (1 + tax), where instance-hours
    is, per share of the day, max(1, ceil(mean rate x share x (1 + headroom) / capacity)) x hours_per_month /
    len(shares): one share (the peak-to-mean ratio) always on, 24 hourly shares scheduled.
    """

    model_config = ConfigDict(frozen=True)

    instance_hour: Figure  # one fleet unit's price an hour (``instances`` instances)
    capacity_rps: Figure  # one fleet unit's accepted requests/s at peak under the SLO
    instances: int  # instances in one fleet unit (the option's ``instances``)
    accepted: Figure
    overhead: Figure  # monthly extras before tax
    support_share: Decimal
    tax_share: Decimal
    headroom: Figure
    peak_to_mean: Figure
    shares: list[Decimal]  # multiples of the mean rate, each billed hours_per_month / len(shares)
    hours_per_month: Figure
    demand: Figure  # requests a month


class OptionBill(BaseModel):
    """One way of buying compute for the workload, priced."""

    model_config = ConfigDict(frozen=True)

    name: str
    pricing: str
    instance: str | None
    accelerator: str | None = None
    accelerator_count: int | None = None
    workload: Literal["training", "serving"]
    hours_per_run: Figure | None = None
    line_items: list[LineItem] = Field(default_factory=list)  # per run (training) or per month (serving)
    cost_per_run: Figure | None = None
    accepted_share: Figure
    cost_per_accepted_run: Figure | None = None
    cost_per_1k_accepted_requests: Figure | None = None
    cost_per_million_accepted_tokens: Figure | None = None
    monthly_cost: Figure
    one_off_cost: Figure  # porting
    maintenance_per_month: Figure
    total_months: Figure  # over the scenario's months, one-off and maintenance included
    total_36_months: Figure
    # Capacity paid for whether used or not (reserved, owned, leased, capacity blocks, always-on serving):
    # the share this workload uses (derived), and a commitment still owed after the horizon.
    paid_capacity_share: Figure | None = None
    outstanding_commitment: Figure | None = None
    accepted_requests_per_month: Figure | None = None  # serving
    instances_needed: int | None = None  # serving: instances billed for the volume
    fixed_per_month: Figure | None = None  # training: paid whatever the runs (term, boxes, extras)
    # The price the option is billed at (an hour, or a second for serverless; None: owned), and the part of the
    # cost per accepted output the comparison uses (with what a term still owes) that scales with it: the price
    # flip point solves on these (issue 26).
    rate: Figure | None = None
    rated_part: Decimal | None = None
    fleet: list[FleetMode] = Field(default_factory=list)  # serving with [traffic]: each way of running it
    fleet_curve: dict[str, Any] = Field(default_factory=dict)  # float inputs of bill.fleet.cost_per_1k_curve
    fleet_inputs: FleetInputs | None = None  # serving with [traffic], not serverless: exact, for flip points
    result_file: str | None = None
    measured: bool = False  # hours or rates come from a verified pilot result (not one marked result_unverified)
    result_unverified: str | None = None  # why the result priced is unverified (collect --accept-unverified)
    # Linear coefficients for vectorised sweeps: cost_per_run(u, r) = a / u + b + c / r (u: utilisation).
    sweep_coefficients: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    @property
    def per_output(self) -> Figure | None:
        """Cost per accepted run (training) or per 1,000 accepted requests (serving); None: nothing accepted."""
        f: Figure | None = getattr(self, per_output_field(self.workload))
        return f


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    baseline: str
    candidate: str
    saving_per_run: Figure | None = None
    saving_percent: Decimal | None = None
    saving_per_month: Figure | None = None
    one_off_cost: Figure
    break_even_runs: int | None = None  # None: never pays back
    break_even_months: Decimal | None = None
    # How far the inputs may move before the decision flips (derived; None where no such point exists).
    flip_hours_per_run: Figure | None = None
    flip_utilisation: Figure | None = None
    flip_runs_per_month: Figure | None = None
    # training: where the verdict's own rule flips (the saving per accepted run, with what a term still owes,
    # reaches the [decision] margin), holding the rest fixed; None: no value of that input flips it (issue 26)
    margin_flip_hours_per_run: Figure | None = None
    margin_flip_runs_per_month: Figure | None = None
    # the candidate's price (an hour; a second for serverless) and, training, its accepted share at which the
    # verdict's rule flips; serving with [traffic]: the lowest monthly volume above today's at which it does
    margin_flip_price: Figure | None = None
    margin_flip_accepted_share: Figure | None = None
    margin_flip_requests_per_month: Figure | None = None
    # serving with [traffic]: the lowest monthly volume above today's at which the cost per 1,000 accepted
    # requests crosses the baseline's, and the lowest candidate peak rate at which the saving reaches the margin
    flip_requests_per_month: Figure | None = None
    flip_peak_qps: Figure | None = None


def payback_curve(
    c: Comparison, base: OptionBill, cand: OptionBill, runs_per_month: Decimal
) -> list[tuple[int, Decimal, Decimal]]:
    """Cumulative cost of ``c``'s baseline and candidate, the port included: (step, baseline, candidate).

    By accepted run for training options priced per accepted run (to twice the break-even, at least 12 runs),
    else by month over 36 months. Made where it is drawn (the report's payback chart), not stored for every
    comparison: a bill of a catalog's 1,000 options never draws them (issue 10's speed).
    """
    one_off = c.one_off_cost.value
    if base.workload == "training" and base.cost_per_accepted_run is not None and cand.cost_per_accepted_run:
        runs = c.break_even_runs
        horizon = max(12, 2 * runs if runs else 12)
        b_run, b_maint = base.cost_per_accepted_run.value, base.maintenance_per_month.value
        c_run, c_maint = cand.cost_per_accepted_run.value, cand.maintenance_per_month.value
        rpm = runs_per_month
        return [
            (n, b_run * n + b_maint * n / rpm, one_off + c_run * n + c_maint * n / rpm) for n in range(0, horizon + 1)
        ]
    b_month, b_maint = base.monthly_cost.value, base.maintenance_per_month.value
    c_month = cand.monthly_cost.value + cand.maintenance_per_month.value
    return [(m, b_month * m + b_maint * m, one_off + c_month * m) for m in range(0, 37)]


class Bill(BaseModel):
    model_config = ConfigDict(frozen=True)

    scenario: str
    scenario_path: str = ""
    workload: Literal["training", "serving"]
    currency: str
    months: int
    runs_per_month: Decimal
    baseline: str
    options: list[OptionBill]
    comparisons: list[Comparison]
    catalog_files: list[str] = Field(default_factory=list)
    vendor_claims: list[ClaimRow] = Field(default_factory=list)  # shown apart, never in the arithmetic
    statements: list[str] = Field(default_factory=list)  # what every reader must know (taxes excluded, ...)

    def option(self, name: str) -> OptionBill:
        return next(o for o in self.options if o.name == name)

    def figures(self) -> list[Figure]:
        """Every figure the bill holds: option fields, line items, comparisons."""
        out: list[Figure] = []
        line_items = [li for o in self.options for li in o.line_items]
        for models, names in (
            (self.options, _OPTION_FIGURES),
            (line_items, _LINE_FIGURES),
            (self.comparisons, _COMPARISON_FIGURES),
        ):
            for m in models:
                fields = vars(m)
                out += [f for n in names if (f := fields[n]) is not None]
        return out

    def claims_in_arithmetic(self) -> set[str]:
        """Ids of vendor claims found among the inputs of any figure in the bill.

        Figure arithmetic refuses claims, so this is empty unless a figure was built around that refusal; the
        bill's and report's ``used_in_arithmetic`` are read from here, not written as a constant.
        """
        # One walk over the figure graph, each node once: options share subtrees (prices, [extras], the
        # baseline in every comparison), and listing every figure's leaves repeated them (issue 10's speed).
        found: set[str] = set()
        seen: set[int] = set()
        stack = self.figures()
        while stack:
            f = stack.pop()
            if f.inputs:
                if id(f) not in seen:
                    seen.add(id(f))
                    stack.extend(f.inputs)
            elif f.kind is Kind.VENDOR_CLAIM:
                found.add(f.label)
        return found


def _figure_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The names of ``model``'s fields that hold a Figure (or None), in field order: read by name, a bill's ~17,000
    figures are listed without testing each of its ~60,000 field values (issue 10's speed)."""
    return tuple(n for n, f in model.model_fields.items() if f.annotation is Figure or Figure in get_args(f.annotation))


_OPTION_FIGURES = _figure_fields(OptionBill)
_LINE_FIGURES = _figure_fields(LineItem)
_COMPARISON_FIGURES = _figure_fields(Comparison)
_KIND_TEXT = {k: k.value for k in Kind}  # ``kind.value`` is a descriptor call on every figure projected


_PLACES = {places: Decimal(1).scaleb(-places) for places in range(7)}  # the roundings bill_to_json uses


def _num(f: Figure | None, places: int = 2) -> float | None:
    """``float(money(f.value, places))``: the quantize inlined, as bill_to_json rounds ~26 numbers an option."""
    if f is None:
        return None
    try:
        return float(f.value.quantize(_PLACES[places], ROUND_HALF_UP))
    except InvalidOperation:
        return float(money(f.value, places))  # too many digits to round: money() says so, with its fix


def _fig(f: Figure | None) -> dict[str, Any] | None:
    return None if f is None else fig_ref(f).flat_json()


def _head(f: Figure) -> dict[str, Any]:
    """``fig_ref(f).flat_json(with_leaves=False)`` written out: the same keys and values, no model."""
    return {
        "label": f.label,
        "value": float(f.value),
        "unit": f.unit,
        "kind": _KIND_TEXT[f.kind],
        "source": f.source,
        "as_of": f.as_of.isoformat() if f.as_of else None,
        "region": f.region,
        "note": f.note,
    }


class _Leaves:
    """The leaves of one bill's figures, each projected once: the same leaves (a price row, a catalog default)
    recur in every option (issue 10's speed).

    A leaf is known by its index in ``json``; equal leaves (same fields, so the same projection) share one. A
    class, not closures: recursive closures form a reference cycle, and their memo (tens of thousands of lists at
    catalog scale) then waited for the cycle collector instead of being freed when ``bill_to_json`` returns.
    """

    __slots__ = ("claims", "index_of_key", "index_of_leaf", "json", "memo")

    def __init__(self) -> None:
        self.json: list[dict[str, Any]] = []
        self.index_of_key: dict[tuple[Any, ...], int] = {}
        # id(figure) -> its leaf index, or its leaves as indices; every figure stays alive in the bill meanwhile,
        # so ids are not reused.
        self.index_of_leaf: dict[int, int] = {}
        self.memo: dict[int, list[int]] = {}
        self.claims: set[str] = set()  # vendor claims among the leaves: Bill.claims_in_arithmetic, on the way

    def leaf_index(self, lf: Figure) -> int:
        i = self.index_of_leaf.get(id(lf))
        if i is None:
            key = (lf.value, lf.unit, lf.kind, lf.source, lf.as_of, lf.region, lf.label, lf.note)
            i = self.index_of_key.get(key)
            if i is None:
                i = self.index_of_key[key] = len(self.json)
                self.json.append(_head(lf))
                if lf.kind is Kind.VENDOR_CLAIM:
                    self.claims.add(lf.label)
            self.index_of_leaf[id(lf)] = i
        return i

    def leaves(self, f: Figure) -> list[int]:
        """``f.leaves()`` as leaf indices (depth first, first of equal leaves kept), memoised over shared subtrees."""
        memo = self.memo
        key = id(f)
        got = memo.get(key)
        if got is None:
            ins = f.inputs
            if not ins:
                got = [self.leaf_index(f)]
            elif len(ins) == 1:
                got = self.leaves(ins[0])  # already without duplicates; memo lists are never changed
            else:
                index_of_leaf = self.index_of_leaf
                merged: list[int] = []
                for x in ins:
                    if x.inputs:
                        known = memo.get(id(x))
                        merged += known if known is not None else self.leaves(x)
                    else:
                        i = index_of_leaf.get(id(x))  # a leaf seen before (most are: prices, [extras])
                        merged.append(i if i is not None else self.leaf_index(x))
                got = list(dict.fromkeys(merged))
            memo[key] = got
        return got

    def leaf_list(self, f: Figure) -> list[dict[str, Any]]:
        js = self.json
        return [js[i] for i in self.leaves(f)]

    def fig(self, f: Figure | None) -> dict[str, Any] | None:
        """Equal to ``_fig(f)``, with leaf projections shared."""
        if f is None:
            return None
        out = _head(f)
        out["leaves"] = self.leaf_list(f) if f.inputs else []
        return out


def bill_to_json(bill: Bill) -> dict[str, Any]:
    """Scripts get plain numbers at the top and each figure's provenance beside it."""
    lv = _Leaves()
    leaf_list, fig, memo = lv.leaf_list, lv.fig, lv.memo
    opts = []
    for o in bill.options:
        opts.append(
            {
                "name": o.name,
                "pricing": o.pricing,
                "instance": o.instance,
                "accelerator": o.accelerator,
                "workload": o.workload,
                "measured": o.measured,
                "result_file": o.result_file,
                "result_unverified": o.result_unverified,
                "hours_per_run": _num(o.hours_per_run, 4),
                "cost_per_run": _num(o.cost_per_run),
                "accepted_share": _num(o.accepted_share, 4),
                "cost_per_accepted_run": _num(o.cost_per_accepted_run),
                "cost_per_1k_accepted_requests": _num(o.cost_per_1k_accepted_requests, 4),
                "cost_per_million_accepted_tokens": _num(o.cost_per_million_accepted_tokens, 4),
                "monthly_cost": _num(o.monthly_cost),
                "one_off_cost": _num(o.one_off_cost),
                "maintenance_per_month": _num(o.maintenance_per_month),
                "total_months": _num(o.total_months),
                "total_36_months": _num(o.total_36_months),
                "paid_capacity_share": _num(o.paid_capacity_share, 4),
                "outstanding_commitment": _num(o.outstanding_commitment),
                "accepted_requests_per_month": _num(o.accepted_requests_per_month, 0),
                "instances_needed": o.instances_needed,
                "fleet": [
                    {
                        "mode": m.mode,
                        "instances": m.instances,
                        "instance_hours": _num(m.instance_hours, 1),
                        "idle_share": _num(m.idle_share, 4),
                        "monthly_cost": _num(m.monthly_cost),
                        "cost_per_1k_accepted_requests": _num(m.cost_per_1k_accepted_requests, 4),
                    }
                    for m in o.fleet
                ],
                "line_items": [
                    {
                        "name": li.name,
                        "per": li.per,
                        "value": _num(li.figure, 4),
                        "unit": li.figure.unit,
                        "kind": _KIND_TEXT[li.figure.kind],
                        "source": li.figure.source,
                        "leaves": leaf_list(li.figure),
                    }
                    for li in o.line_items
                ],
                "figures": {
                    k: fig(getattr(o, k))
                    for k in (
                        "hours_per_run",
                        "cost_per_run",
                        "cost_per_accepted_run",
                        "cost_per_1k_accepted_requests",
                        "cost_per_million_accepted_tokens",
                        "total_36_months",
                    )
                },
                "notes": o.notes,
            }
        )
    comps = [
        {
            "baseline": c.baseline,
            "candidate": c.candidate,
            "saving_per_run": _num(c.saving_per_run),
            "saving_percent": None if c.saving_percent is None else float(round(c.saving_percent, 2)),
            "saving_per_month": _num(c.saving_per_month),
            "one_off_cost": _num(c.one_off_cost),
            "break_even_runs": c.break_even_runs,
            "break_even_months": None if c.break_even_months is None else float(round(c.break_even_months, 2)),
            "flip_hours_per_run": _num(c.flip_hours_per_run, 2),
            "flip_utilisation": _num(c.flip_utilisation, 4),
            "flip_runs_per_month": _num(c.flip_runs_per_month, 2),
            "margin_flip_hours_per_run": _num(c.margin_flip_hours_per_run, 4),
            "margin_flip_runs_per_month": _num(c.margin_flip_runs_per_month, 4),
            "margin_flip_price": _num(c.margin_flip_price, 6),
            "margin_flip_accepted_share": _num(c.margin_flip_accepted_share, 6),
            "margin_flip_requests_per_month": _num(c.margin_flip_requests_per_month, 0),
            "flip_requests_per_month": _num(c.flip_requests_per_month, 0),
            "flip_peak_qps": _num(c.flip_peak_qps, 4),
        }
        for c in bill.comparisons
    ]
    # ``bill.claims_in_arithmetic()`` without walking the bill twice: the projected figures' leaves were indexed
    # (claims noted on the way); the rest (totals over the horizon, comparisons) are only searched, not listed.
    stack = bill.figures()
    searched: set[int] = set()
    while stack:
        f = stack.pop()
        if not f.inputs:
            if f.kind is Kind.VENDOR_CLAIM:
                lv.claims.add(f.label)
        elif id(f) not in memo and id(f) not in searched:
            searched.add(id(f))
            stack.extend(f.inputs)
    used = lv.claims
    return {
        "scenario": bill.scenario,
        "scenario_path": bill.scenario_path,
        "workload": bill.workload,
        "currency": bill.currency,
        "months": bill.months,
        "runs_per_month": float(bill.runs_per_month),
        "baseline": bill.baseline,
        "options": opts,
        "comparisons": comps,
        "catalog_files": bill.catalog_files,
        "statements": bill.statements,
        "vendor_claims": [
            c.model_dump(mode="json") | {"kind": "vendor_claim", "used_in_arithmetic": c.id in used}
            for c in bill.vendor_claims
        ],
    }

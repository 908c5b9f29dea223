"""The seed's decision gates (seed 000 "The decision in one page", seed 002's software gate and payback rule).

Two groups. *Choose Trainium when ALL hold*: AWS is the production home; model, operators and precision are
validated on the target instance and Neuron release; the team accepts AWS tooling; capacity is available; the
commercial model still works. *Prefer portable GPU when ANY holds*: the workload must move between sites;
research churns frameworks and kernels; the organisation must own or redeploy hardware; a second cloud or DR
site must run the same build; operations centre on CUDA/ROCm and a second toolchain's cost is material.

The scenario's ``[gates]`` answers the qualitative questions; evidence fills what it can: the portability log's
blocking findings answer "validated", the bill answers "the commercial model still works", and a pilot result
measured on the target platform is what turns an assumed saving into a qualified one. Each gate returns
``holds`` (True / False / None = not enough evidence), a reason in words, the evidence it rests on, and, when
unknown, what is missing and how to supply it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from accelpilot.bill.compare import compare, decision_margin
from accelpilot.bill.model import Bill, Comparison, OptionBill, per_output_name
from accelpilot.bill.scenario import Scenario
from accelpilot.decide.evidence import Evidence
from accelpilot.decide.exit_cost import ExitTest
from accelpilot.decide.flips import flip_refs
from accelpilot.decide.portability import LogView, family_of, target_key
from accelpilot.evidence.capacity import CapacityCheck
from accelpilot.figures import Figure, FigureRef, fig_ref, fmt_number, plain_ref

Group = Literal["trainium_all", "portable_any"]


class Missing(BaseModel):
    """What a gate needs and how to supply it."""

    model_config = ConfigDict(frozen=True)

    gate: str
    what: str
    fix: str


class GateResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    group: Group
    question: str
    holds: bool | None
    reason: str
    evidence: Evidence = Evidence()
    missing: Missing | None = None
    caveats: list[str] = []

    @property
    def status(self) -> str:
        if self.holds is None:
            return "unknown"
        if self.group == "trainium_all":
            return "pass" if self.holds else "fail"
        return "holds" if self.holds else "does not hold"


@dataclass
class ResultInfo:
    """A pilot result as the gates see it: where it came from and what it says."""

    path: str
    kind: str
    family: str  # trainium, inferentia, gpu, cpu
    device: str
    accepted: bool | None


@dataclass
class Context:
    """Everything the gates read, gathered once by ``decide``: no gate reads a file or prices anything itself."""

    scenario: Scenario
    bill: Bill
    log: LogView | None = None
    results: list[ResultInfo] = field(default_factory=list)
    exits: list[ExitTest] = field(default_factory=list)
    capacity: list[CapacityCheck] = field(default_factory=list)  # one per cloud option, from [evidence] files

    @property
    def target(self) -> str:
        return target_key(self.scenario.gates.target_platform)

    @property
    def lifetime_months(self) -> tuple[int, bool]:
        """The workload's lifetime and whether the scenario answered it (else the scenario's horizon)."""
        g = self.scenario.gates.workload_lifetime_months
        return (g, True) if g is not None else (self.scenario.volumes.months, False)

    def target_options(self) -> list[OptionBill]:
        return [o for o in self.bill.options if family_of(o.accelerator, o.instance) == self.target]

    def gpu_baseline(self) -> OptionBill | None:
        """The scenario's baseline unless it is itself on the target platform; then the cheapest other option."""
        base = self.bill.option(self.bill.baseline)
        if family_of(base.accelerator, base.instance) != self.target:
            return base
        # A Trainium baseline cannot be the yardstick for moving to Trainium: compare with the cheapest
        # option off the target that has an accepted output at all.
        priced = [
            o
            for o in self.bill.options
            if family_of(o.accelerator, o.instance) != self.target and o.per_output is not None
        ]
        return min(priced, key=_output_cost) if priced else None

    def result_for(self, path: str | None) -> ResultInfo | None:
        if not path:
            return None
        return next((r for r in self.results if r.path == path), None)

    def exit_of(self, name: str) -> ExitTest | None:
        return next((e for e in self.exits if e.option == name), None)


QUESTIONS: dict[str, tuple[Group, str]] = {
    "aws_production_home": ("trainium_all", "AWS is the intended production home, not only the first test environment"),
    "validated_on_target": (
        "trainium_all",
        "The model, framework, operators and precision are validated on the target instance and Neuron release",
    ),
    "accepts_aws_tooling": (
        "trainium_all",
        "The team accepts AWS-specific tooling for an integrated managed environment",
    ),
    "capacity_available": ("trainium_all", "Capacity can be obtained in the required regions and availability zones"),
    "commercial": (
        "trainium_all",
        "The commercial model still works after transfer, storage, support and idle time, and the saving repays "
        "the port and its maintenance within the workload's lifetime",
    ),
    "must_move_between_sites": (
        "portable_any",
        "The workload must move between on-premises, hosted and cloud capacity",
    ),
    "research_churn": (
        "portable_any",
        "Researchers frequently change frameworks, kernels, model architectures or serving engines",
    ),
    "must_own_hardware": ("portable_any", "The organisation needs to own, finance, resell or redeploy the equipment"),
    "second_cloud_or_dr": (
        "portable_any",
        "A second cloud or a disaster-recovery site must run the same build without a major port",
    ),
    "ops_centred_on_cuda": (
        "portable_any",
        "Operations are centred on CUDA or ROCm and the cost of a second accelerator toolchain is material",
    ),
}


def _output_cost(o: OptionBill) -> Decimal:
    """Sort key: the cost per accepted output; an option with nothing accepted sorts last."""
    f = o.per_output
    return f.value if f is not None else Decimal("Infinity")


def _gate(
    gid: str,
    holds: bool | None,
    reason: str,
    evidence: Evidence | None = None,
    missing: Missing | None = None,
    caveats: list[str] | None = None,
) -> GateResult:
    """The one constructor: group and question come from QUESTIONS, so a gate id cannot drift from its text."""
    group, question = QUESTIONS[gid]
    return GateResult(
        id=gid,
        group=group,
        question=question,
        holds=holds,
        reason=reason,
        evidence=evidence or Evidence(),
        missing=missing,
        caveats=caveats or [],
    )


def _answer_gate(
    ctx: Context, gid: str, extra_figs: list[FigureRef] | None = None, extra: str = "", ids: list[str] | None = None
) -> GateResult:
    """A gate answered by the scenario alone; evidence figures, when given, are shown beside the answer."""
    ans = getattr(ctx.scenario.gates, gid)
    ev = Evidence(scenario_field=f"gates.{gid}", scenario_answer=ans, figures=extra_figs or [], finding_ids=ids or [])
    where = Path(ctx.scenario.path).name if ctx.scenario.path else "the scenario"
    tail = f"; {extra}" if extra else ""
    if ans is None:
        return _gate(
            gid,
            None,
            f"not answered ([gates] {gid} in {where}){tail}",
            ev,
            Missing(gate=gid, what=f"scenario answer gates.{gid}", fix=f"set {gid} = true or false under [gates]"),
        )
    said = "yes" if ans else "no"
    return _gate(gid, bool(ans), f"the scenario answers {said} ([gates] {gid} = {str(ans).lower()}){tail}", ev)


def gate_validated(ctx: Context) -> GateResult:
    """Validated on the target: a blocking finding in the log outweighs any answer; a passing pilot on the target
    or a "yes" answer passes only once a log that covers the target shows nothing blocking."""
    gid = "validated_on_target"
    t = ctx.target
    ans = ctx.scenario.gates.validated_on_target
    on_target = [r for r in ctx.results if r.family == t]
    passed = [r for r in on_target if r.accepted]
    failed = [r for r in on_target if r.accepted is False]
    log = ctx.log

    def res(
        holds: bool | None, reason: str, ids: list[str] | None = None, missing: Missing | None = None
    ) -> GateResult:
        ev = Evidence(
            scenario_field=f"gates.{gid}",
            scenario_answer=ans,
            finding_ids=ids or [],
            results=[r.path for r in on_target],
        )
        return _gate(gid, holds, reason, ev, missing)

    # Code that cannot run on the target is a fact; an answer of "yes" cannot override it.
    if log is not None and log.covers(t):
        blocking = log.blocking_for(t)
        if blocking:
            shown = ", ".join(f"{f.id} ({f.rule} at {f.where})" for f in blocking[:6])
            more = f" and {len(blocking) - 6} more" if len(blocking) > 6 else ""
            return res(
                False,
                f"the portability log has {len(blocking)} blocking finding(s) for {t}: {shown}{more}",
                ids=[f.id for f in blocking],
            )
    if ans is False:
        return res(False, f"the scenario answers no ([gates] {gid} = false)")
    # One pilot that reached its target is enough: failures then are runs, not the platform.
    if failed and not passed:
        return res(False, f"the pilot on {t} did not reach its quality target ({', '.join(r.path for r in failed)})")
    if ans is None and not passed:
        note = ""
        if log is not None and log.covers(t):
            note = f"the log shows no blocking finding for {t}, but a static scan is not a validation; "
        return res(
            None,
            note + f"not answered ([gates] {gid}) and no pilot result measured on {t} reached its target",
            missing=Missing(
                gate=gid,
                what=f"validation on {t}: a pilot result measured on {t}, or the scenario answer gates.{gid}",
                fix=f"run `accelpilot run train` on a {t} instance and pass it with --results, or set {gid} = true",
            ),
        )
    why = (
        f"the pilot on {t} reached its target ({', '.join(r.path for r in passed)})"
        if passed
        else f"the scenario answers yes ([gates] {gid} = true)"
    )
    # A pass needs the absence of blocking code shown, not assumed: without a log covering the target, unknown.
    if log is None:
        return res(
            None,
            why + ", but no portability log was given to check for blocking findings",
            missing=Missing(
                gate=gid,
                what="a portability log of the workload's code",
                fix="run `accelpilot scan PATH --json > log.json` and pass --scan-log log.json",
            ),
        )
    if not log.covers(t):
        return res(
            None,
            why + f", but the portability log was filtered to {', '.join(log.targets or [])} and says nothing of {t}",
            missing=Missing(
                gate=gid, what=f"a portability log that covers {t}", fix=f"re-run `accelpilot scan --target {t}`"
            ),
        )
    return res(
        True, why + f"; the portability log has no blocking finding for {t} ({len(log.findings)} findings in all)"
    )


class Candidate(NamedTuple):
    """One target option weighed against the GPU baseline by the commercial gate."""

    option: OptionBill
    metric: Figure | None  # its cost per accepted output; None when nothing was accepted
    comparison: Comparison
    cheaper: bool
    repays: bool  # cheaper, and the port pays back within the workload's lifetime


def _candidate(
    c: OptionBill, base: OptionBill, base_metric: Figure, sc: Scenario, lifetime: int, bill: Bill
) -> Candidate:
    m = c.per_output
    # the bill's own comparison when it has this baseline: its flip points were solved with the catalog and the
    # results at hand (an option priced again at trial values); another baseline is compared here
    comp = next((x for x in bill.comparisons if x.baseline == base.name and x.candidate == c.name), None)
    comp = comp or compare(base, c, sc)
    cheaper = m is not None and m.value < base_metric.value
    be = comp.break_even_months
    return Candidate(c, m, comp, cheaper, cheaper and be is not None and be <= lifetime)


def _commercial_figures(
    ctx: Context, best: Candidate, base: OptionBill, base_metric: Figure, lifetime: int, answered: bool
) -> list[FigureRef]:
    """The numbers the commercial reason rests on, in the order a reader checks them."""
    c, m, comp = best.option, best.metric, best.comparison
    metric_name = per_output_name(ctx.scenario.workload)
    figs = [fig_ref(base_metric, f"{base.name}: {metric_name}")]
    if m is not None:
        figs.append(fig_ref(m, f"{c.name}: {metric_name}"))
    if comp.saving_per_month is not None:
        figs.append(fig_ref(comp.saving_per_month, "saving per month"))
    figs.append(fig_ref(c.one_off_cost, f"{c.name}: porting (one-off)"))
    if c.maintenance_per_month.value:
        figs.append(fig_ref(c.maintenance_per_month, f"{c.name}: maintenance per month"))
    if comp.break_even_months is not None:
        figs.append(
            plain_ref(
                float(comp.break_even_months),
                "month",
                "derived",
                "porting ÷ (saving per month − extra maintenance), from the bill",
                label="break-even",
            )
        )
    figs.append(
        plain_ref(
            lifetime,
            "month",
            "assumption",
            f"scenario {'gates.workload_lifetime_months' if answered else 'volumes.months (lifetime not answered)'}",
            label="workload lifetime",
        )
    )
    return figs


def gate_commercial(ctx: Context) -> GateResult:
    """Seed 002's payback rule: cheaper per accepted output than the GPU baseline AND the port (plus maintenance)
    repaid within the workload's lifetime; a saving only counts as qualified when measured on the target."""
    gid = "commercial"
    sc, t = ctx.scenario, ctx.target
    metric_name = per_output_name(sc.workload)
    cands = ctx.target_options()
    base = ctx.gpu_baseline()
    if not cands:
        return _gate(
            gid,
            None,
            f"the scenario prices no option on {t}",
            missing=Missing(gate=gid, what=f"an option on {t}", fix=f"add an [[options]] entry with a {t} instance"),
        )
    base_metric = base.per_output if base is not None else None
    if base is None or base_metric is None:
        return _gate(
            gid,
            None,
            "the scenario prices no GPU baseline with an accepted output",
            missing=Missing(gate=gid, what="a GPU baseline option", fix="add the working GPU deployment as an option"),
        )
    lifetime, answered = ctx.lifetime_months
    caveats: list[str] = []
    if not answered:
        caveats.append(
            f"the workload's lifetime is not answered ([gates] workload_lifetime_months): "
            f"the scenario's {lifetime}-month horizon stands in"
        )
    rows = [_candidate(c, base, base_metric, sc, lifetime, ctx.bill) for c in cands]
    # Judge the best case: the cheapest option that repays if any does, else the cheapest priced one, so a
    # failing reason names the strongest candidate rather than an arbitrary one.
    pool = [r for r in rows if r.repays] or [r for r in rows if r.metric is not None] or rows
    best = min(pool, key=lambda r: r.metric.value if r.metric is not None else Decimal("Infinity"))
    c, m, comp = best.option, best.metric, best.comparison
    figs = _commercial_figures(ctx, best, base, base_metric, lifetime, answered)
    # Transfer, storage, support and idle time can erase a thin margin; say so when the bill has none of them.
    if all(_extras_empty(sc, o.name) for o in (c, base)):
        caveats.append(
            "the bill includes no data transfer, storage, support or idle time: add them under [extras] "
            "before trusting the margin"
        )
    ev = Evidence(figures=figs, results=[r for r in (c.result_file, base.result_file) if r])
    cur = sc.currency

    def res(holds: bool | None, reason: str, missing: Missing | None = None) -> GateResult:
        return _gate(gid, holds, reason, ev, missing, caveats)

    if m is None:
        return res(False, f"{c.name} has no accepted output to price (no pilot run reached its target)")
    price_text = (
        f"{c.name} costs {fmt_number(float(m.value), 2)} {cur} {metric_name} against "
        f"{fmt_number(float(base_metric.value), 2)} {cur} on {base.name}"
    )
    if not best.cheaper:
        return res(False, price_text + ": not cheaper than the GPU baseline")
    if not best.repays:
        be = comp.break_even_months
        why = (
            "the saving never covers the added maintenance"
            if be is None
            else f"break-even after {fmt_number(float(be), 1)} months, beyond the {lifetime}-month lifetime"
        )
        return res(False, price_text + f", but {why}: keep the working GPU deployment")
    # Seed 004: "if the answer is close, it is a no". A saving inside the margin (wider on assumed hours) keeps
    # the working deployment, and the flip points say how far the inputs may move (issue 10, section 5).
    assumed = not (c.measured and base.measured)
    margin_fig = decision_margin(base, c, sc)
    margin = margin_fig.value
    if comp.saving_percent is not None and comp.saving_percent < margin * 100:
        flips = flip_refs(comp)
        close = Evidence(
            figures=[*figs, fig_ref(margin_fig), *(r for _, r in flips if r is not None)], results=ev.results
        )
        return _gate(
            gid,
            False,
            price_text
            + f" ({fmt_number(float(comp.saving_percent), 1)}% less), within the {margin:.0%} margin for "
            + ("assumed" if assumed else "measured")
            + (" rates" if sc.workload == "serving" else " hours")
            + " ([decision] margin): too close: keep the working deployment; it flips at "
            + ("; ".join(t for t, _ in flips) or "no point within reach"),
            close,
            None,
            caveats,
        )
    be_text = (
        f"the port repays in {fmt_number(float(comp.break_even_months or 0), 1)} months (run {comp.break_even_runs})"
        if comp.break_even_runs
        else f"the port repays in {fmt_number(float(comp.break_even_months or 0), 1)} months"
    )
    good = (
        price_text + f" ({fmt_number(float(comp.saving_percent or 0), 1)}% less); {be_text}, within {lifetime} months"
    )
    # Assumed hours, or hours measured on another platform, price a hope: unknown until a pilot on the target.
    info = ctx.result_for(c.result_file)
    if c.result_unverified and info is not None:  # priced from a result nothing proves unedited (collect)
        return res(
            None,
            good + f"; but the hours of {c.name} come from an unverified result ({c.result_unverified}): the saving "
            "is not yet a pilot result",
            Missing(
                gate=gid,
                what=f"a verified pilot result (its .sha256 matching) for option {c.name!r}",
                fix="copy the result again with its .sha256 from the machine or bucket and run `accelpilot collect`",
            ),
        )
    if not c.measured or info is None or info.family != t:
        measured_on = f"measured on {info.family} ({info.device})" if info is not None else "assumed"
        return res(
            None,
            good + f"; but the hours of {c.name} are {measured_on}, not measured on {t}: the saving is not yet a "
            "pilot result",
            Missing(
                gate=gid,
                what=f"a pilot result measured on {t} for option {c.name!r}",
                fix=f'run `accelpilot run train` on the {c.instance} instance and set result = "<file>.json" '
                f"in that option",
            ),
        )
    return res(True, good + " (measured on the target)")


def _extras_empty(sc: Scenario, name: str) -> bool:
    opt = next((o for o in sc.options if o.name == name), None)
    ex = opt.extras if opt is not None and opt.extras is not None else sc.extras
    return ex.is_empty


def _exit_figs(ctx: Context) -> tuple[list[FigureRef], list[str], str]:
    """The exit cost of leaving the target: what moving sites or running a second cloud would cost after a port.

    Shown beside the scenario's answer, never deciding it: whether the workload must move is the owner's call.
    """
    opts = ctx.target_options()
    if not opts:
        return [], [], ""
    ex = ctx.exit_of(opts[0].name)
    if ex is None:
        return [], [], ""
    figs = [ex.engineer_days.model_copy(update={"label": f"exit from {ex.option}: engineer-days"})]
    if ex.total is not None:
        figs.append(ex.total.model_copy(update={"label": f"exit from {ex.option}: cost"}))
    text = f"leaving {ex.option} would take about {fmt_number(ex.engineer_days.value, 1)} engineer-days"
    return figs, ex.finding_ids, text


def portable_gates(ctx: Context) -> list[GateResult]:
    """The seed's "prefer portable GPU when ANY holds" group. Each is the scenario's answer; the log and the bill
    add the evidence a reader needs to challenge the answer (exit cost, owned options, CUDA code paths)."""
    exit_figs, exit_ids, exit_text = _exit_figs(ctx)
    out = [
        _answer_gate(ctx, "must_move_between_sites", exit_figs, exit_text, exit_ids),
        _answer_gate(ctx, "research_churn"),
    ]
    owned = [o for o in ctx.bill.options if o.pricing in ("owned", "buy_and_host")]
    own_text = f"the scenario prices owned options: {', '.join(o.name for o in owned)}" if owned else ""
    out.append(
        _answer_gate(
            ctx, "must_own_hardware", [fig_ref(o.total_36_months, f"{o.name}: 36 months") for o in owned], own_text
        )
    )
    out.append(_answer_gate(ctx, "second_cloud_or_dr", exit_figs, exit_text, exit_ids))
    # "A second toolchain's cost is material": the target's maintenance per month is that cost, as priced.
    figs: list[FigureRef] = []
    text = ""
    cands = ctx.target_options()
    if cands:
        maint = cands[0].maintenance_per_month
        figs.append(fig_ref(maint, f"{cands[0].name}: second-toolchain maintenance per month"))
        if not maint.value:
            text = "the scenario prices no maintenance for a second toolchain (maintenance_per_month = 0)"
    cuda_ids: list[str] = []
    if ctx.log is not None:
        cuda_ids = [
            f.id for f in ctx.log.findings if f.category in ("device_code", "custom_kernel") and f.concerns(ctx.target)
        ]
        if cuda_ids:
            text = (text + "; " if text else "") + f"{len(cuda_ids)} CUDA-specific code path(s) in the portability log"
    out.append(_answer_gate(ctx, "ops_centred_on_cuda", figs, text, cuda_ids))
    return out


def gate_capacity(ctx: Context) -> GateResult:
    """Capacity from the account's evidence (offerings, quotas, capacity blocks) for the options on the target.

    The user's explicit answer still wins, and the evidence is shown beside it; without an answer the evidence
    decides: pass when some target option passes, fail when every one fails (shortfalls named), else unknown.
    """
    gid = "capacity_available"
    ans = ctx.scenario.gates.capacity_available
    names = {o.name for o in ctx.target_options()}
    checks = [c for c in ctx.capacity if c.option in names]
    have_files = any(c.evidence_given for c in ctx.capacity)
    # The reason says pass/fail per option; the lines say what it rests on, each citing its file.
    lines = [f"{c.option}: {ln.text} ({Path(ln.file).name})" for c in checks for ln in c.lines if ln.file]
    files = sorted({f for c in checks for f in c.files})
    ev = Evidence(scenario_field=f"gates.{gid}", scenario_answer=ans, lines=lines, files=files)
    if any(c.status == "pass" for c in checks):
        found: bool | None = True
    elif checks and all(c.status == "fail" for c in checks):
        found = False
    else:
        found = None
    said = {True: "pass", False: "fail", None: "unknown"}[found]
    if ans is not None:
        # The person who knows the account answered; the evidence is reported, not substituted.
        base = _answer_gate(ctx, gid)
        tail = f"; the account evidence says {said}" + (f" ({checks[0].reason})" if checks and found is False else "")
        return _gate(gid, bool(ans), base.reason + (tail if checks and have_files else ""), ev)
    if found is not None:
        why = "; ".join(f"{c.option}: {c.reason}" for c in checks if c.status == said) or said
        return _gate(gid, found, f"from the account's evidence: {why}", ev)
    reason = (
        "; ".join(f"{c.option}: {c.reason}" for c in checks)
        if checks and have_files
        else f"not answered ([gates] {gid}) and no capacity evidence ([evidence] files)"
    )
    return _gate(
        gid,
        None,
        reason,
        ev,
        Missing(
            gate=gid,
            what="capacity evidence from the AWS account, or the scenario answer gates.capacity_available",
            fix="run `accelpilot evidence collect --region R --instances ...` (or export the AWS CLI JSON) and list "
            "the files under [evidence] files, or set capacity_available under [gates]",
        ),
    )


def trainium_gates(ctx: Context) -> list[GateResult]:
    return [
        _answer_gate(ctx, "aws_production_home"),
        gate_validated(ctx),
        _answer_gate(ctx, "accepts_aws_tooling"),
        gate_capacity(ctx),
        gate_commercial(ctx),
    ]


def evaluate(ctx: Context) -> list[GateResult]:
    """Every gate, Trainium group first, in the seed's order."""
    return trainium_gates(ctx) + portable_gates(ctx)

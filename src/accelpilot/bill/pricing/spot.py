"""Spot: the on-demand shape plus the expected re-work of interruptions (geometric by default, or linear)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from accelpilot.bill.common import SECONDS_PER_HOUR, _a
from accelpilot.bill.measured import handed
from accelpilot.bill.model import LineItem
from accelpilot.bill.scenario import Option, Scenario
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.figures import Figure, constant

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult


def _restart_cost(opt: Option, sc: Scenario, where: str, results: Mapping[str, PilotResult]) -> Figure:
    """The measured cost of one interruption: steps lost x step time + restart time (run train --interrupt-at)."""
    assert opt.spot is not None
    src = opt.spot.restart_result or opt.result
    if src is not None:
        path = str(sc.resolve(src))
        res = handed(results, path)
        figs = res.figures
        need = ("interrupt_steps_lost", "step_time_mean_s", "restart_s")
        missing = [k for k in need if k not in figs]
        if missing:
            raise InputFileError(
                f"result holds no {missing[0]} to price an interruption",
                file=str(path),
                field=f"figures.{missing[0]}",
                fix="re-run the training pilot with --interrupt-at STEP, or give restart_s in [options.spot]",
            )
        lost = figs["interrupt_steps_lost"].model_copy(update={"unit": ""})
        step = figs["step_time_mean_s"]
        return (lost * step + figs["restart_s"]).with_label("measured cost of one interruption")
    if opt.spot.restart_s is None:
        raise ConfigError(
            "spot needs the cost of one interruption",
            file=sc.path or None,
            field=f"{where}.spot.restart_s",
            fix='add restart_result = "<training result run with --interrupt-at>" or restart_s = <seconds>',
        )
    return _a(opt.spot.restart_s, "s", "cost of one interruption (assumed)", where)


def _spot_items(
    opt: Option,
    sc: Scenario,
    where: str,
    price: Figure,
    billed: Figure,
    results: Mapping[str, PilotResult],
    advisor: Figure | None = None,
) -> list[LineItem]:
    assert opt.spot is not None
    if opt.spot.interruptions_per_hour is not None:  # stated: it wins over the Spot Advisor (bill.spot)
        rate = _a(opt.spot.interruptions_per_hour, "1/h", "spot interruptions per hour", where)
    else:
        assert advisor is not None  # bill.spot.spot_rates refused the option otherwise
        rate = advisor
    restart = _restart_cost(opt, sc, where, results)
    if rate.value * restart.value / SECONDS_PER_HOUR.value >= 1:
        # each hour would lose an hour or more to re-work: the run never finishes, whatever it is billed
        stated = opt.spot.interruptions_per_hour is not None
        raise ConfigError(
            f"{rate.value} interruptions an hour x {restart.value:,.0f} s lost each is an hour or more of re-work "
            "per hour: the run would never finish on spot",
            file=sc.path or None,
            field=f"{where}.spot." + ("interruptions_per_hour" if stated else "restart_s"),
            fix=f"checkpoint more often so one interruption loses under {3600 / rate.value:,.0f} s, or price the "
            "option on_demand",
        )
    # q: hours lost per hour run. Geometric (default): the re-work is interrupted too, billed x (q + q^2 + ...)
    # = billed x q / (1 - q) (DESIGN.md, "Spot re-work"); linear: the first term, billed x q.
    q = (rate * restart / SECONDS_PER_HOUR).with_label("hours lost per hour run (interruptions x cost of one)")
    if opt.spot.rework == "geometric":
        lost = (billed * q / (constant(1) - q)).with_label("re-work hours per run (geometric: re-work interrupted too)")
    else:
        lost = (billed * q).with_label("re-work hours per run (linear)")
    return [
        LineItem(
            name=f"spot interruptions: {lost.value:,.2f} h expected re-work ({opt.spot.rework})",
            per="run",
            figure=(price * constant(opt.instances) * lost).with_label("spot re-work"),
        )
    ]

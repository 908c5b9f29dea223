"""Join a multi-node result to the one-node ``--scaling`` result launched beside it (issue 25).

``accelpilot launch`` writes, beside each multi-node training task, a one-node task measuring ``--scaling
1,2,...,N`` for the same options. Both results are matched to those options; here the scaling result is taken
out of the option's runs (a one-node world-1 throughput is not a run of the multi-node option) and written as the
option's ``scaling_result``, from which the bill reads the efficiency at the nearest world size.
"""

from __future__ import annotations

from dataclasses import replace

from accelpilot.collect.match import Assignment
from accelpilot.collect.read import Collected
from accelpilot.pilot.result import measured_topology


def is_scaling_run(c: Collected) -> bool:
    """A one-node result that measured world 1 and at least one larger world size (``--scaling 1,...``)."""
    figs = c.result.figures
    return (
        c.result.kind == "training"
        and measured_topology(c.result).nnodes == 1
        and "tokens_per_s_world1" in figs
        and any(k.startswith("scaling_efficiency_world") for k in figs)
    )


def split_scaling(asg: Assignment) -> tuple[Assignment, Collected | None]:
    """(the option's runs, its scaling result): split only where a multi-node run is there to scale.

    Results come best first (``match_results``), so the best scaling run is joined; without a multi-node run the
    option keeps its one-node scaling result as its own result, as before.
    """
    scaling = [c for c in asg.results if is_scaling_run(c)]
    multi = [c for c in asg.results if measured_topology(c.result).nnodes > 1]
    if not scaling or not multi:
        return asg, None
    runs = [c for c in asg.results if not is_scaling_run(c)]
    return replace(asg, results=runs), scaling[0]

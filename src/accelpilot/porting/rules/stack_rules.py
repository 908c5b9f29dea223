"""Rules on the software stack a repository was written for (issue 27: held-out public repositories).

TorchNeuron native needs a current torch 2.x (and the numpy that goes with it); code written for torch 1.x uses
APIs removed since. The sites and when they block are read in ``scan/stack_upgrade.py``."""

from __future__ import annotations

from accelpilot.porting.rules.schema import NEURON, Rule

STACK_RULES: tuple[Rule, ...] = (
    Rule(
        id="stack-upgrade",
        category="container",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="stack upgrade: APIs removed since the code was written",
        why="The code uses APIs a current stack no longer has: `torch._six` (removed in torch 2.0), numpy's aliases "
        "of builtins `np.float`, `np.int`, `np.object`, `np.str`, `np.complex`, `np.unicode` (removed in numpy 1.24; "
        "`np.bool` came back in numpy 2.0), or a hard assert on a library's exact version. TorchNeuron native needs "
        "a current torch 2.x, so each site fails there: at import when it runs at module level (the entry point "
        "stops before it does anything), else when its function runs. Replace the removed APIs (`math.inf` for "
        "`torch._six.inf`, the builtins or `np.float64` for the aliases), lift the version pin, and re-run on the "
        "torch 2.x stack.",
    ),
)

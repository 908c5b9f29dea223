"""Scenario options -> launch targets: where each option's pilot runs and how it gets there.

Options that price the same hardware (trn1.32xlarge on demand and reserved for 3 years) share one target:
the pilot measures the machine, not the contract. Cloud instances SkyPilot knows become SkyPilot tasks;
rentals from providers SkyPilot supports too; owned boxes and other rentals get a plain shell script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from accelpilot.bill.scenario import Option, Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.errors import ConfigError
from accelpilot.launch.stacks import Stack, stack_for

# Rental providers SkyPilot 0.14.1 can launch on (sky/clouds/__init__.py), by the provider name the
# catalog's rental rows use, lower-cased, -> SkyPilot's infra name.
SKYPILOT_PROVIDERS = {
    "runpod": "runpod",
    "lambda": "lambda",
    "lambda labs": "lambda",
    "fluidstack": "fluidstack",
    "paperspace": "paperspace",
    "vast": "vast",
    "vast.ai": "vast",
    "cudo": "cudo",
    "cudo compute": "cudo",
    "nebius": "nebius",
    "hyperbolic": "hyperbolic",
    "digitalocean": "do",
    "primeintellect": "primeintellect",
    "prime intellect": "primeintellect",
    "shadeform": "shadeform",
    "mithril": "mithril",
    "verda": "verda",
    "yotta": "yotta",
    "seeweb": "seeweb",
    "aws": "aws",
}

# Pricing models piloted on an on-demand instance of the same type: the contract changes the price, not the chip.
_ON_DEMAND_STAND_INS = ("reserved_1y", "reserved_3y", "capacity_block")


@dataclass(slots=True)
class LaunchTarget:
    """One machine (or group of nodes) to run the pilot on, and the options its result prices."""

    slug: str  # file name stem
    options: list[str]
    accelerator: str
    accelerators_per_node: int
    stack: Stack
    launcher: str  # "skypilot" or "script"
    num_nodes: int = 1
    instance_type: str | None = None  # cloud instance type
    infra: str | None = None  # SkyPilot infra: aws/us-east-1, runpod, ...
    use_spot: bool = False
    provider: str = ""
    notes: list[str] = field(default_factory=list)
    # "pilot", or "scaling": the one-node `--scaling` task written beside a multi-node one (issue 25), whose
    # result `collect` joins to the multi-node result of the same options as their scaling_result
    role: str = "pilot"

    @property
    def device(self) -> str:
        return self.stack.device


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "option"


def _accelerator_from_label(label: str, stacks: list[Stack]) -> str | None:
    """An owned system's label names its accelerator ("owned 8xH100" -> H100); longest name wins."""
    names = sorted({a for s in stacks for a in s.accelerators}, key=len, reverse=True)
    low = re.sub(r"\d+\s*x\s*", " ", label.lower())  # "8xH100" -> " h100"
    for n in names:
        if re.search(rf"(?<![a-z0-9]){re.escape(n.lower())}(?![a-z0-9])", low):
            return n
    return None


def _count_from_label(label: str) -> int:
    m = re.search(r"(\d+)\s*x", label.lower())
    return int(m.group(1)) if m else 1


def _no_platform(opt: Option, sc: Scenario, why: str, fix: str) -> ConfigError:
    return ConfigError(
        f"option {opt.name!r} has no launchable platform: {why}",
        file=sc.path or None,
        field=f"options.{opt.name}",
        fix=f"{fix}, or leave it out with --skip {opt.name!r}",
    )


def _target_for(opt: Option, sc: Scenario, cat: Catalog, stacks: list[Stack]) -> LaunchTarget:
    if opt.pricing in ("owned", "buy_and_host"):
        label = opt.instance or opt.name
        accel = _accelerator_from_label(label, stacks)
        if accel is None:
            raise _no_platform(
                opt, sc, f"its label {label!r} names no accelerator a stack serves", 'set instance = "8xH100"-style'
            )
        stack = stack_for(accel, stacks)
        assert stack is not None
        return LaunchTarget(
            slug=slugify(opt.name),
            options=[opt.name],
            accelerator=accel,
            accelerators_per_node=_count_from_label(label),
            stack=stack,
            launcher="script",
            num_nodes=opt.instances,
            notes=["owned hardware: run the script on the machine itself (SkyPilot cannot provision it)"],
        )
    assert opt.instance is not None  # the scenario's own validation guarantees it
    rows = cat.price_rows(instance=opt.instance)
    inst = cat.instance(opt.instance)
    if not rows and inst is None:
        raise _no_platform(opt, sc, f"instance {opt.instance!r} is not in the catalog", "add it with --catalog FILE")
    accel = inst.accelerator if inst else rows[0].accelerator
    count = (inst.accelerator_count if inst else rows[0].accelerator_count) or 1
    stack = stack_for(accel, stacks)
    if stack is None:
        served = sorted({a for s in stacks for a in s.accelerators})
        raise _no_platform(
            opt,
            sc,
            f"no platform stack serves its accelerator {accel!r} (stacks serve: {', '.join(served)})",
            "add a [[stack]] for it with --stacks FILE",
        )
    notes: list[str] = []
    if opt.pricing == "rental":
        provider = rows[0].provider if rows else ""
        infra = SKYPILOT_PROVIDERS.get(provider.lower())
        if infra is None:
            return LaunchTarget(
                slug=slugify(opt.name),
                options=[opt.name],
                accelerator=accel,
                accelerators_per_node=count * opt.instances,  # a rental of N GPUs is one machine with N GPUs
                stack=stack,
                launcher="script",
                provider=provider,
                notes=[f"{provider or 'this provider'} is not a SkyPilot cloud: rent the machine, then run the script"],
            )
        return LaunchTarget(
            slug=slugify(opt.name),
            options=[opt.name],
            accelerator=accel,
            accelerators_per_node=count * opt.instances,  # a rental of N GPUs is one node with N GPUs
            stack=stack,
            launcher="skypilot",
            infra=infra,
            provider=provider,
        )
    region = opt.region or next((r.region for r in rows if r.region), None)
    if opt.pricing in _ON_DEMAND_STAND_INS:
        notes.append(f"{opt.pricing} is a contract, not a machine: piloted on an on-demand {opt.instance}")
    return LaunchTarget(
        slug=slugify(opt.name),
        options=[opt.name],
        accelerator=accel,
        accelerators_per_node=count,
        stack=stack,
        launcher="skypilot",
        num_nodes=opt.instances,
        instance_type=opt.instance,
        infra=f"aws/{region}" if region else "aws",
        use_spot=opt.pricing == "spot",
        provider="AWS",
        notes=notes,
    )


def plan_launch(
    sc: Scenario, cat: Catalog, stacks: list[Stack], skip: list[str] | None = None, distributed: bool = False
) -> list[LaunchTarget]:
    """One target per distinct machine; options on the same machine share it (and its result).

    Without a distributed pilot (``distributed``), a multi-instance option is piloted on one node: launching
    the others would bill idle machines; the bill scales the one node's throughput to the option's instances.
    """
    names = [o.name for o in sc.options]
    for s in skip or []:
        if s not in names:
            from accelpilot.errors import did_you_mean

            raise ConfigError(f"--skip {s!r} names no option; {did_you_mean(s, names)}", file=sc.path or None)
    targets: list[LaunchTarget] = []
    for opt in sc.options:
        if opt.name in (skip or []):
            continue
        t = _target_for(opt, sc, cat, stacks)
        if t.num_nodes > 1 and not (distributed and sc.workload == "training"):
            t.notes.append(
                f"the option uses {t.num_nodes} instances; the pilot runs on one (a multi-node pilot needs "
                "`run train --nnodes`): the bill scales its throughput by chips x instances x scaling_efficiency"
            )
            t.num_nodes = 1
        same = next(
            (
                x
                for x in targets
                if x.launcher == t.launcher
                and x.launcher == "skypilot"
                and (x.instance_type or "").lower() == (t.instance_type or "").lower()
                and x.infra == t.infra
                and x.num_nodes == t.num_nodes
                and x.use_spot == t.use_spot
                and x.accelerators_per_node == t.accelerators_per_node
                and x.accelerator == t.accelerator
            ),
            None,
        )
        if same is not None:
            same.options.append(opt.name)
            same.notes += [n for n in t.notes if n not in same.notes]
        else:
            targets.append(t)
    if distributed and sc.workload == "training":
        targets += [scaling_companion(t) for t in targets if t.num_nodes > 1]
    used: set[str] = set()
    for t in targets:  # unique file names
        base, i = t.slug, 2
        while t.slug in used:
            t.slug, i = f"{base}-{i}", i + 1
        used.add(t.slug)
    return targets


def scaling_companion(t: LaunchTarget) -> LaunchTarget:
    """One node of a multi-node target, measuring ``--scaling 1,2,4,...,<processes per node>``.

    ``--scaling`` runs on one node; the multi-node task measures its own world size. ``collect`` joins the two
    results (``result`` and ``scaling_result`` of the same options), and the bill takes the scaling efficiency
    at the world size nearest the one it prices from both.
    """
    return replace(
        t,
        slug=f"{t.slug}-scaling",
        options=list(t.options),
        num_nodes=1,
        role="scaling",
        notes=[
            *t.notes,
            f"{t.slug}-scaling measures scaling on one node of {t.slug}; collect joins its result to {t.slug}'s "
            "as scaling_result",
        ],
    )

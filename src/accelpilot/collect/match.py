"""Which scenario options does each result measure? The fingerprint decides; contradictions are refused.

A result launched by ``accelpilot launch`` names the options it was launched for (``launch.options`` in its
platform fingerprint); its instance type (DMI on EC2 Nitro, or SkyPilot's cluster info) and accelerator must
agree with those options. A result without those names is matched by platform: the same EC2 instance type, or
(for owned and rental options) the same accelerator. ``--as OPTION`` assigns results by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from accelpilot.bill.scenario import Option, Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.collect.read import Collected
from accelpilot.errors import ConfigError, InputFileError, did_you_mean


@dataclass(slots=True)
class OptionPlatform:
    instance_type: str | None  # a cloud instance type the result must have run on, when it says
    accelerator: str | None  # catalog accelerator name; None when unknown


@dataclass(slots=True)
class Assignment:
    """The results one option gets, best first (accepted, more runs, newest)."""

    option: str
    results: list[Collected] = field(default_factory=list)
    how: str = ""  # "launched for it", "same instance type", "same accelerator", "--as"


def _extra(c: Collected, key: str) -> dict[str, Any]:
    v = (c.result.platform.model_extra or {}).get(key)
    return v if isinstance(v, dict) else {}


def measured_on(c: Collected) -> tuple[str | None, str]:
    """(instance type or None, accelerator or the device type) of a result."""
    p = c.result.platform
    it = _extra(c, "cloud").get("instance_type")
    return (str(it) if it else None), (p.accelerator or p.device_type or p.device)


def option_platform(opt: Option, cat: Catalog) -> OptionPlatform:
    if opt.pricing in ("owned", "buy_and_host"):
        label = re.sub(r"\d+\s*x\s*", " ", (opt.instance or opt.name).lower())  # "8xH100" -> " h100"
        names = sorted({r.accelerator for r in cat.prices} | {s.accelerator for s in cat.specs}, key=len, reverse=True)
        for n in names:
            if re.search(rf"(?<![a-z0-9]){re.escape(n.lower())}(?![a-z0-9])", label):
                return OptionPlatform(None, n)
        return OptionPlatform(None, None)
    assert opt.instance is not None
    inst = cat.instance(opt.instance)
    rows = cat.price_rows(instance=opt.instance)
    accel = inst.accelerator if inst else (rows[0].accelerator if rows else None)
    cloud_type = opt.instance if opt.pricing != "rental" else None
    return OptionPlatform(cloud_type, accel)


def contradiction(c: Collected, plat: OptionPlatform) -> str | None:
    """Why this result cannot measure an option on ``plat``, or None."""
    it, accel = measured_on(c)
    if it and plat.instance_type and it.lower() != plat.instance_type.lower():
        return f"measured on {it}, the option prices {plat.instance_type}"
    if plat.accelerator and accel.lower() != plat.accelerator.lower():
        return f"measured on {accel}, the option prices {plat.accelerator}"
    return None


def _rank(c: Collected) -> tuple[int, int, int, float]:
    """Verified before unverified (an edited copy never wins over the original), then accepted, runs, newest."""
    t = c.result.training
    runs = t.runs if t else 0
    return (1 if c.checksum == "verified" else 0, 1 if c.result.accepted else 0, runs, c.result.created.timestamp())


def match_results(
    collected: list[Collected], sc: Scenario, cat: Catalog, as_option: str | None = None
) -> tuple[list[Assignment], list[tuple[Collected, str]]]:
    """Assign results to options; returns the assignments and the results left out, each with why."""
    names = [o.name for o in sc.options]
    by_name = {o.name: o for o in sc.options}
    plats = {o.name: option_platform(o, cat) for o in sc.options}
    got: dict[str, Assignment] = {}
    left: list[tuple[Collected, str]] = []
    if as_option is not None and as_option not in by_name:
        raise ConfigError(f"--as {as_option!r} names no option; {did_you_mean(as_option, names)}", file=sc.path)
    for c in collected:
        if c.result.kind != sc.workload:
            if as_option is not None:
                raise InputFileError(
                    f"a {c.result.kind} result cannot price option {as_option!r} of a {sc.workload} scenario",
                    file=str(c.path),
                    field="kind",
                )
            left.append((c, f"a {c.result.kind} result; the scenario is {sc.workload}"))
            continue
        if as_option is not None:
            got.setdefault(as_option, Assignment(as_option, how="--as")).results.append(c)
            continue
        labelled = [n for n in _extra(c, "launch").get("options", []) if isinstance(n, str) and n in by_name]
        if labelled:
            for n in labelled:
                why = contradiction(c, plats[n])
                if why:
                    raise InputFileError(
                        f"launched for option {n!r} but {why}",
                        file=str(c.path),
                        field="platform",
                        fix=f"collect it with --as {n!r} if it should price that option anyway",
                    )
                got.setdefault(n, Assignment(n, how="launched for it")).results.append(c)
            continue
        it, accel = measured_on(c)
        hits = []
        for n in names:
            pl = plats[n]
            if pl.instance_type:
                if it and it.lower() == pl.instance_type.lower():
                    hits.append((n, "same instance type"))
            elif pl.accelerator and accel.lower() == pl.accelerator.lower():
                hits.append((n, "same accelerator"))
        if not hits:
            left.append((c, f"measured on {it or accel}: no option prices that platform (use --as OPTION)"))
        for n, how in hits:
            got.setdefault(n, Assignment(n, how=how)).results.append(c)
    for a in got.values():
        a.results.sort(key=_rank, reverse=True)
    return [got[n] for n in names if n in got], left

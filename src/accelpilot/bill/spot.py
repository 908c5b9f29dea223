"""Spot interruption rates read from the Spot Instance Advisor's data (issue 10, section 3).

The bill's spot model prices interruptions per billed instance-hour (``interruptions_per_hour``) times the
measured cost of one restart. The Advisor publishes, per region and instance type, a band of its "frequency of
interruption": the share of Spot instances AWS interrupted in the trailing month. We take the band's upper
bound (the conservative end: "<5%" reads as 5%) and read it as interruptions per instance-month, so
per hour = share / hours a month (730). That assumes an instance runs the month and is interrupted at most
once; the label says so. A rate stated in ``[options.spot] interruptions_per_hour`` wins, as an answer given
by the person who knows the workload does elsewhere (the capacity gate); the Advisor's figure is then noted
beside it, not used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from accelpilot.bill.scenario import Option, Scenario
from accelpilot.errors import ConfigError
from accelpilot.figures import Figure

if TYPE_CHECKING:
    from accelpilot.evidence.model import EvidenceSet


def _region(opt: Option, sc: Scenario) -> str | None:
    if opt.region:
        return opt.region
    return sc.evidence.regions[0] if len(sc.evidence.regions) == 1 else None


def spot_rates(
    sc: Scenario, evidence: EvidenceSet | None, hours_per_month: Figure
) -> dict[str, tuple[Figure | None, str]]:
    """Per spot option with ``[options.spot]``: the Advisor's interruption rate (or None) and a note for the bill.

    Read once, before pricing; an option with neither a stated rate nor an Advisor row is refused here with
    the fix, naming the scenario field.
    """
    out: dict[str, tuple[Figure | None, str]] = {}
    advisors = evidence.advisors if evidence is not None else ()
    for i, opt in enumerate(sc.options):
        if opt.pricing != "spot":
            continue
        scores = _scores(opt, sc, evidence)
        if opt.spot is None:
            if scores:
                out[opt.name] = (None, f"spot: {scores}")
            continue
        where = f"options[{i + 1} {opt.name!r}].spot.interruptions_per_hour"
        region = _region(opt, sc)
        found = [
            (a, s)
            for a in advisors
            if region is not None and opt.instance is not None
            for s in [a.interruption_share(region, opt.instance)]
            if s is not None
        ]
        if not found:
            if opt.spot.interruptions_per_hour is not None:
                if scores:
                    out[opt.name] = (
                        None,
                        f"spot: the stated interruptions_per_hour ({opt.spot.interruptions_per_hour}) is assumed; "
                        + scores,
                    )
                continue
            if not advisors:
                fix = (
                    "add interruptions_per_hour = <assumed rate> to [options.spot], or list the Spot Instance "
                    "Advisor's spot-advisor-data.json under [evidence] files"
                )
                raise ConfigError("spot needs an interruption rate", file=sc.path or None, field=where, fix=fix)
            if region is None:
                raise ConfigError(
                    f"no region to look {opt.instance} up in the Spot Advisor file",
                    file=sc.path or None,
                    field=f"options[{i + 1} {opt.name!r}].region",
                    fix='set region = "<AWS region>" in the option (or one region under [evidence] regions), or '
                    "interruptions_per_hour in [options.spot]",
                )
            files = ", ".join(Path(a.file).name for a in advisors)
            raise ConfigError(
                f"the Spot Advisor file ({files}) has no Linux row for {opt.instance} in {region}",
                file=sc.path or None,
                field=where,
                fix="add interruptions_per_hour = <assumed rate> to [options.spot], or use an Advisor file that "
                "lists this instance in this region",
            )
        advisor, share = found[0]  # the first file listed wins, as with every [evidence] file
        name = Path(advisor.file).name
        rate = (share / hours_per_month).with_label(
            f"spot interruptions per hour ({share.label}; read as interruptions per instance-month / "
            f"{hours_per_month.value} h)"
        )
        if opt.spot.interruptions_per_hour is not None:
            out[opt.name] = (
                None,
                f"spot: the stated interruptions_per_hour ({opt.spot.interruptions_per_hour}) is used; the Spot "
                f"Advisor ({name}, {share.as_of}) puts {opt.instance} in {region} "
                f"at {rate.value:.6f} an hour (its band's upper bound)" + (f"; {scores}" if scores else ""),
            )
        else:
            out[opt.name] = (
                rate,
                f"spot: interruption rate from the Spot Advisor ({name}, {share.as_of}): {share.label}, "
                f"{share.value:.0%} of instances a month = {rate.value:.6f} an hour"
                + (f"; {scores}" if scores else ""),
            )
    return out


def _scores(opt: Option, sc: Scenario, evidence: EvidenceSet | None) -> str:
    """The account's spot placement scores for the option, as words to set beside its interruption assumption:
    advisory (1-10, how likely a spot request of that size succeeds now), shown, never priced. A score file tied
    to no instance type (its name names none) is shown as region-level."""
    if evidence is None or opt.instance is None:
        return ""
    region = _region(opt, sc)
    parts = []
    for s in evidence.scores:
        if (region is not None and s.region != region) or (s.instance_types and opt.instance not in s.instance_types):
            continue
        where = s.region + (f" {s.zone_id}" if s.zone_id else "")
        tied = "" if s.instance_types else ", region-level: its file names no instance type"
        parts.append(f"{where} {s.score}/10 ({Path(s.file).name}, {s.as_of}{tied})")
    if not parts:
        return ""
    return (
        "spot placement score " + "; ".join(parts) + " (advisory: the chance a spot request is filled now, not priced)"
    )

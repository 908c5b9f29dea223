"""``--as-baseline``: the measured spend becomes a scenario option, "current deployment".

The option's monthly cost is the measured effective cost (provenance ``measured``, source the CUR files and
period), so a comparison starts from the bill the team already pays rather than from list prices.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from accelpilot.atomic import write_text_atomic
from accelpilot.errors import InputFileError
from accelpilot.figures import money
from accelpilot.spend.model import SpendSummary

BASELINE_NAME = "current deployment"
PRICING = "measured_spend"


def baseline_option(
    s: SpendSummary, instance_types: list[str] | None = None, name: str = BASELINE_NAME
) -> dict[str, Any]:
    """The scenario option, as TOML-ready data; money as strings so that a cent reproduces."""
    rows = [r for r in s.rows if not instance_types or r.instance_type in instance_types]
    by_type: dict[str, Decimal] = {}
    for r in rows:
        by_type[r.instance_type] = by_type.get(r.instance_type, Decimal(0)) + r.effective_cost
    top = max(by_type, key=lambda k: by_type[k])
    months = s.month_equivalents  # a partial month counts as the share of it covered, never as a whole one
    monthly = s.total(instance_types) / months
    if monthly < 0:
        raise InputFileError(
            f"the measured spend is negative ({money(monthly)} {s.currency}/month): credits exceed the usage",
            file=s.source,
            fix="choose a period or --instance-type with usage, or leave the credits' months out",
        )
    hours = sum((r.instance_hours for r in rows), Decimal(0)) / months
    top_rows = [r for r in rows if r.instance_type == top]
    instances = max(1, max(r.concurrent or r.resources for r in top_rows))  # peak running at once
    return {
        "name": name,
        "pricing": PRICING,
        "instance": top,
        "instances": instances,
        "spend": {
            "monthly_cost": str(money(monthly)),
            "currency": s.currency,
            "period": s.period,
            "months": len(s.months),
            "instance_types": sorted(by_type),
            "instance_hours_per_month": str(money(hours)),
            "source": s.source
            + "".join(
                f"; {m} partial ({c:.0%} covered, counted as {c:.4f} month)" for m, c in s.partial_months.items()
            ),
            "as_of": s.as_of,
        },
    }


def write_baseline(path: Path | str, option: dict[str, Any]) -> bool:
    """Add (or replace) the option in a scenario file, keeping the rest as written; a new file holds just it.

    Returns True when an existing option of that name was replaced. Written atomically (temp file, rename).
    """
    import tomlkit

    p = Path(path)
    if p.exists():
        try:
            doc = tomlkit.parse(p.read_text(encoding="utf-8"))
        except Exception as exc:
            raise InputFileError(f"not valid TOML: {exc}", file=str(p), fix="fix the scenario file first") from None
    else:
        doc = tomlkit.document()
    opts = doc.get("options")
    if opts is None:
        opts = tomlkit.aot()
        doc.append("options", opts)
    elif not isinstance(opts, list):
        raise InputFileError("options is not an array of tables", file=str(p), field="options", fix="use [[options]]")
    table = tomlkit.table()
    for k, v in option.items():
        table.add(k, v)
    replaced = False
    for i, o in enumerate(opts):
        if isinstance(o, dict) and o.get("name") == option["name"]:
            opts[i] = table
            replaced = True
            break
    else:
        opts.append(table)
    text = tomlkit.dumps(doc)
    write_text_atomic(p, text)
    return replaced

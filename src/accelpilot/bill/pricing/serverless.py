"""Serverless GPU: worker lifetimes rounded up to the billing increment, plus always-on workers."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from accelpilot.bill.common import (
    SECONDS_PER_HOUR,
    _a,
    _derived,
    _extras_monthly,
    _hours_per_month,
    _sum,
    _usable_price,
    in_usd,
)
from accelpilot.bill.scenario import Option, Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.catalog.model import Pricing
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.figures import Figure


def _serverless(
    opt: Option, sc: Scenario, cat: Catalog, where: str, peak: Figure, res: Any, result_path: str
) -> tuple[Figure, Figure, list[str], dict[str, Any], Figure]:
    """Serverless GPU a month: worker lifetimes (cold start + busy + idle timeout) rounded up, plus always-on."""
    sv = opt.serverless
    assert sv is not None and opt.instance is not None
    row = cat.find_price(opt.instance, Pricing.SERVERLESS, opt.region, where=where, file=sc.path or None)
    _usable_price(row, where, cat)  # refuses a vendor claim, or a currency without a dated rate
    if row.price_per_second is None:
        raise InputFileError(
            f"serverless row {row.instance} has no price_per_second",
            file=row.origin,
            field=f"price {row.instance} serverless.price_per_second",
            fix="give the provider's listed per-second price as price_per_second",
        )
    per_s = Figure(
        value=row.price_per_second,
        unit=f"{row.currency}/s",
        kind=row.kind,
        source=row.source,
        as_of=row.as_of,
        region=row.region,
        label=f"{row.instance} price per worker-second",
    )
    per_s = in_usd(per_s, row, cat, "price_per_second")
    if row.billing_increment_s is not None and row.billing_increment_s <= 0:
        raise InputFileError(
            f"serverless row {row.instance} bills in steps of {row.billing_increment_s} s",
            file=row.origin,
            field=f"price {row.instance} serverless.billing_increment_s",
            fix="give the provider's billing step in seconds (1 for per-second billing), or remove it for 1 s",
        )
    inc_v = row.billing_increment_s or Decimal(1)
    inc = Figure(
        value=inc_v,
        unit="s",
        kind=row.kind,
        source=row.source,
        as_of=row.as_of,
        label=f"{row.instance} billing increment",
    )
    if sc.volumes.requests_per_month is None:
        raise ConfigError(
            "serverless is billed by traffic: the scenario gives no requests_per_month",
            file=sc.path or None,
            field="volumes.requests_per_month",
            fix="add requests_per_month = <requests> to [volumes]",
        )
    demand = _a(sc.volumes.requests_per_month, "1/month", "requests per month", "volumes")
    if sv.cold_start_s is not None:
        cold = _a(sv.cold_start_s, "s", "cold start (assumed)", where)
    elif res is not None and any(k.startswith("bucket.") and k.endswith(".build_s") for k in res.figures):
        builds = [f for k, f in res.figures.items() if k.startswith("bucket.") and k.endswith(".build_s")]
        cold = builds[0]
        for f in builds[1:]:
            cold = cold + f
        cold = cold.with_label("cold start: the serving pilot's measured bucket builds (model load not included)")
    else:
        raise ConfigError(
            "no cold start for the serverless option",
            file=sc.path or None,
            field=f"{where}.serverless.cold_start_s",
            fix='add cold_start_s = <seconds>, or result = "<serving result with bucket builds>"',
        )
    secs_month = (_hours_per_month(cat) * SECONDS_PER_HOUR).with_label("seconds a month")
    workers = _a(sv.min_workers, "", "always-on workers", where)
    notes: list[str] = []
    # A live worker serves at its peak rate only while busy: duty is the share of its life it is (scenario choice).
    duty = _a(sv.duty if sv.duty is not None else 1, "", "duty: share of a live worker's time serving", where)
    if sv.duty is None:
        notes.append(
            "serverless: live workers assumed fully busy at the peak rate (duty 1), the cheapest case; set "
            "[options.serverless] duty to the share of a worker's life it serves (0.25: a quarter)"
        )
    rate = (peak * duty).with_label("requests/s a live worker serves on average") if sv.duty is not None else peak
    on_cap = (rate * secs_month * workers).with_label("requests always-on workers serve a month")
    over_v = max(Decimal(0), demand.value - on_cap.value)
    over = _derived(over_v, "1/month", "requests left to scale-from-zero workers", demand, on_cap)
    busy = (over / rate).with_label("live worker-seconds serving them a month") if over_v else None
    k = _a(sv.scale_ups_per_month, "1/month", "scale-ups per month", where)
    parts: list[Figure] = []
    if sv.min_workers:
        parts.append((per_s * workers * secs_month).with_label("always-on workers"))
    if busy is not None:
        if k.value == 0:
            raise ConfigError(
                "traffic above the always-on workers needs at least one scale-up a month",
                file=sc.path or None,
                field=f"{where}.serverless.scale_ups_per_month",
                fix="give the number of bursts a month (scale-from-zero events), or raise min_workers",
            )
        timeout = _a(sv.idle_timeout_s, "s", "idle timeout (billed)", where)
        life = (cold + busy / k + timeout).with_label("worker lifetime per scale-up")
        rounded = _derived(
            Decimal(math.ceil(life.value / inc.value)) * inc.value, "s", "worker lifetime rounded up", life, inc
        )
        billed_s = (rounded * k).with_label("billed worker-seconds a month")
        parts.append((per_s * billed_s).with_label("scale-from-zero workers"))
        notes.append(
            f"serverless: {k.value:,.0f} scale-ups a month, each billed {rounded.value:,.0f} s (cold start "
            f"{cold.value:,.1f} s + live {busy.value / k.value:,.1f} s at duty {duty.value} + idle timeout "
            f"{timeout.value:,.0f} s, rounded up to {inc.value} s)"
        )
        paid = billed_s + secs_month * workers if sv.min_workers else billed_s
    else:
        paid = secs_month * workers
    used = (demand / peak).with_label("busy worker-seconds a month")
    monthly = _sum(parts, "USD", "month").with_label("serverless compute")
    share = (used / paid).with_label("share of paid capacity used")
    del result_path
    ex = opt.extras if opt.extras is not None else sc.extras
    curve = {
        "serverless": True,
        "per_second": float(per_s.value),
        "increment_s": float(inc.value),
        "min_workers": sv.min_workers,
        "scale_ups": float(sv.scale_ups_per_month),
        "cold_start_s": float(cold.value),
        "idle_timeout_s": float(sv.idle_timeout_s),
        "capacity_rps": float(peak.value),
        "duty": float(duty.value),
        "hours_per_month": float(_hours_per_month(cat).value),
        "overhead": float(_sum([li.figure for li in _extras_monthly(ex, cat, where)], "USD", "month").value),
        "support": float(ex.support_percent / 100),
        "tax": float(ex.tax_percent / 100),
        "accepted": 1.0,
    }
    return monthly, share, notes, curve, per_s

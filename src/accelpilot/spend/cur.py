"""Summarise an AWS Cost and Usage Report 2.0 export with DuckDB, which scans it without loading it.

An export is Parquet or CSV (gzip or not), one file or a folder of many (``data/BILLING_PERIOD=.../``). DuckDB
reads only the columns named below and aggregates as it scans, so memory stays flat whatever the file size.

Effective cost per line (documented choice, from the CUR 2.0 columns the issue names):

* ``Usage``: ``line_item_net_unblended_cost`` (after negotiated discounts), else ``line_item_unblended_cost``;
* ``DiscountedUsage`` (covered by a reservation): ``reservation_effective_cost``;
* ``SavingsPlanCoveredUsage``: ``savings_plan_net_savings_plan_effective_cost`` where AWS filled it (accounts with
  a negotiated discount), else ``savings_plan_savings_plan_effective_cost``; exports without net columns read;
* ``Credit`` and ``Refund`` carrying an instance type: subtracted from that type (shown apart as credits);
* ``SavingsPlanNegation`` is dropped (it cancels the on-demand cost of covered usage); other lines
  (commitment fees, tax, lines without an instance type) are not attributed to an instance type and are
  reported apart, never silently lost.

Months are cut in UTC (the session's time zone is set to UTC; CSV times end in ``Z``). A month the export
covers only in part (its first or last usage inside the month) is flagged with its covered share, and a monthly
average counts it as that share of a month, never as a whole one. Only EC2 (``line_item_product_code``
``AmazonEC2``) is read unless other services are asked for. Fleet size is the peak of concurrent instance-hours
(a sweep over each line's start and end), not the count of resource ids: a fleet of 8 replaced daily is 8.

Instance-hours are the ``line_item_usage_amount`` of usage lines whose usage type is an EC2 instance-hour
(``BoxUsage``, ``SpotUsage``, ``DedicatedUsage``, ``HostUsage``); the share of the month a resource ran is its
instance-hours over the hours of that month.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tempfile
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.spend.model import ResourceRow, SpendRow, SpendSummary

REQUIRED = (
    "line_item_usage_start_date",
    "line_item_line_item_type",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_unblended_cost",
    "product_instance_type",
    "pricing_term",
    "reservation_effective_cost",
    "resource_tags",
)
# Filled only where AWS computes them (negotiated discounts); read when present and non-empty.
OPTIONAL = (
    "line_item_net_unblended_cost",
    "savings_plan_net_savings_plan_effective_cost",
    "savings_plan_savings_plan_effective_cost",
    "line_item_usage_end_date",
    "line_item_product_code",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
)
SP_COLUMNS = ("savings_plan_net_savings_plan_effective_cost", "savings_plan_savings_plan_effective_cost")
# Line types whose cost is a charge: a negative amount there is not money this reader understands.
CHARGES = (
    "Usage",
    "DiscountedUsage",
    "SavingsPlanCoveredUsage",
    "Tax",
    "Fee",
    "RIFee",
    "SavingsPlanRecurringFee",
    "SavingsPlanUpfrontFee",
)
_GLOB = re.compile(r"[*?\[\]{}]")
ACCOUNT = "line_item_usage_account_id"
CURRENCY = "line_item_currency_code"
_SUFFIXES = {".parquet": "parquet", ".csv": "csv", ".gz": "csv"}
# Usage types that are instance-hours: EC2; and, when other services are asked for, RDS and SageMaker's.
INSTANCE_HOURS = "(BoxUsage|SpotUsage|DedicatedUsage|HostUsage|InstanceUsage|Multi-AZUsage|Host:ml|Train:ml)"
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def _connect() -> Any:
    try:
        import duckdb
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ConfigError("reading a CUR export needs DuckDB", fix="pip install 'accelpilot[spend]'") from None
    con = duckdb.connect(config={"memory_limit": "1GB"})
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar writes to stdout, into --json output
    con.execute("SET TimeZone = 'UTC'")  # months are cut in UTC whatever the machine's TZ
    return con


def _plain(d: Decimal) -> Decimal:
    """Whole numbers without trailing decimals (hours come back as DECIMAL(38, 10))."""
    return Decimal(int(d)) if d == d.to_integral_value() else d.normalize()


def find_files(paths: Sequence[Path | str]) -> tuple[list[str], str]:
    """The export's files (folders are searched) and their one format, or one clear error."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(
                f
                for f in p.rglob("*")
                if f.is_file() and (f.suffix in (".parquet", ".csv") or f.name.endswith(".csv.gz"))
            )
        elif p.is_file():
            files.append(p)
        else:
            raise InputFileError("no such file or folder", file=str(p), fix="pass the CUR export's files or folder")
    if not files:
        raise InputFileError(
            "no .parquet, .csv or .csv.gz files found", file=", ".join(map(str, paths)), fix="pass the CUR export"
        )
    kinds = {_SUFFIXES.get(f.suffix) for f in files}
    if None in kinds:
        bad = next(f for f in files if _SUFFIXES.get(f.suffix) is None)
        raise InputFileError(
            "not a CUR 2.0 export file (expected .parquet, .csv or .csv.gz)", file=str(bad), fix="pass the export files"
        )
    if len(kinds) > 1:
        raise InputFileError(
            "mixes Parquet and CSV files", file=", ".join(map(str, paths)), fix="import one format at a time"
        )
    return [str(f) for f in files], kinds.pop()  # type: ignore[return-value]


def _literal(files: list[str], tmp: Path) -> list[str]:
    """DuckDB expands ``*``, ``?``, ``[`` and ``{`` in a path: a file literally so named is read through a link."""
    out = []
    for i, f in enumerate(files):
        if _GLOB.search(f):
            link = tmp / f"{i}{''.join(Path(f).suffixes)}"
            link.symlink_to(Path(f).resolve())
            f = str(link)
        out.append(f)
    return out


def _source_sql(files: list[str], fmt: str) -> str:
    lst = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
    if fmt == "parquet":
        return f"read_parquet({lst}, union_by_name = true)"
    return f"read_csv({lst}, union_by_name = true, header = true, sample_size = 20480)"


def parse_period(text: str | None) -> tuple[dt.date, dt.date] | None:
    """``2026-07`` or ``2026-07..2026-09`` -> [first day, day after the last month)."""
    if not text:
        return None
    head, _, tail = text.partition("..")
    tail = tail or head

    def month(s: str) -> dt.date:
        m = _MONTH.match(s.strip())
        if not m or not 1 <= int(m.group(2)) <= 12:
            raise ConfigError(f"period {text!r} is not YYYY-MM or YYYY-MM..YYYY-MM", field="--period")
        return dt.date(int(m.group(1)), int(m.group(2)), 1)

    a, b = month(head), month(tail)
    if b < a:
        raise ConfigError(f"period {text!r} ends before it starts", field="--period")
    end = dt.date(b.year + (b.month == 12), b.month % 12 + 1, 1)
    return a, end


def _tag_sql(con: Any, src: str, tags: list[tuple[str, str]], params: list[Any]) -> str:
    """Tag filters: CUR 2.0 Parquet holds a MAP, CSV a JSON text; keys as in the export (``user_team``)."""
    if not tags:
        return ""
    row = con.execute(f"SELECT typeof(resource_tags) FROM {src} LIMIT 1").fetchone()
    col_type = str(row[0]).upper() if row else "VARCHAR"  # an export without rows: no type to read
    out = []
    for key, value in tags:
        if col_type.startswith("MAP"):
            out.append("element_at(resource_tags, ?)[1] = ?")
        else:
            out.append("json_extract_string(CAST(resource_tags AS VARCHAR), ?) = ?")
            key = "$." + '"' + key.replace('"', '\\"') + '"'
        params += [key, value]
    return " AND " + " AND ".join(out)


def _month_end(d: dt.date) -> dt.date:
    return dt.date(d.year + (d.month == 12), d.month % 12 + 1, 1)


def summarise(
    paths: Sequence[Path | str],
    *,
    period: str | None = None,
    tags: Iterable[str] = (),
    accounts: Iterable[str] = (),
    instance_types: Iterable[str] = (),
    resources: bool = False,
    services: Iterable[str] = ("AmazonEC2",),
) -> tuple[SpendSummary, list[ResourceRow]]:
    """Per instance type and month: instance-hours, effective cost, credits, share of month; optionally per resource.

    ``services`` are ``line_item_product_code`` values (EC2 by default); an empty list reads every service.
    """
    files, fmt = find_files(paths)
    with tempfile.TemporaryDirectory(prefix="accelpilot-cur-") as tmp:
        return _summarise(
            files, _literal(files, Path(tmp)), fmt, period, tags, accounts, instance_types, resources, list(services)
        )


def _summarise(
    files: list[str],
    read: list[str],
    fmt: str,
    period: str | None,
    tags: Iterable[str],
    accounts: Iterable[str],
    instance_types: Iterable[str],
    resources: bool,
    services: list[str],
) -> tuple[SpendSummary, list[ResourceRow]]:
    where_files = ", ".join(Path(f).name for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    con = _connect()
    src = _source_sql(read, fmt)
    try:
        cols = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
    except Exception as exc:  # duckdb raises its own hierarchy; name the file and stop
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFileError(f"cannot read as {fmt}: {first}", file=where_files, fix="pass a CUR 2.0 export") from None
    missing = [c for c in REQUIRED if c not in cols]
    if not any(c in cols for c in SP_COLUMNS):
        missing.append(SP_COLUMNS[1])
    acc = list(accounts)
    if acc and ACCOUNT not in cols:
        missing.append(ACCOUNT)
    if missing:
        raise InputFileError(
            f"not a CUR 2.0 export: missing column(s) {', '.join(missing)}",
            file=where_files,
            fix="export Cost and Usage Report 2.0 (Data Exports, standard columns)",
        )
    tag_pairs: list[tuple[str, str]] = []
    for t in tags:
        k, sep, v = t.partition("=")
        if not sep or not k.strip():
            raise ConfigError(f"tag filter {t!r} is not KEY=VALUE", field="--tag", fix="e.g. --tag user_team=ml")
        tag_pairs.append((k.strip(), v.strip()))

    def col(name: str) -> str:
        return name if name in cols else "NULL"

    start_sql = "TRY_CAST(line_item_usage_start_date AS TIMESTAMPTZ)"
    undated = con.execute(f"SELECT count(*) FROM {src} WHERE {start_sql} IS NULL").fetchone()
    if undated and undated[0]:
        raise InputFileError(
            f"{undated[0]} line(s) have no usable line_item_usage_start_date",
            file=where_files,
            field="line_item_usage_start_date",
            fix="pass the export as AWS wrote it (every line has a usage start date)",
        )
    params: list[Any] = []
    where = "TRUE"
    rng = parse_period(period)
    if rng:
        where += f" AND {start_sql} >= ? AND {start_sql} < ?"
        params += [dt.datetime.combine(rng[0], dt.time(), dt.timezone.utc)]
        params += [dt.datetime.combine(rng[1], dt.time(), dt.timezone.utc)]
    if acc:
        where += f" AND CAST({ACCOUNT} AS VARCHAR) IN ({', '.join('?' for _ in acc)})"
        params += acc
    if services and "line_item_product_code" in cols:
        where += f" AND CAST(line_item_product_code AS VARCHAR) IN ({', '.join('?' for _ in services)})"
        params += services
    types = list(instance_types)
    where += _tag_sql(con, src, tag_pairs, params)
    filters = [f"tag {k}={v}" for k, v in tag_pairs] + [f"account {a}" for a in acc]
    if period:
        filters.append(f"period {period}")
    if services and "line_item_product_code" in cols:
        filters.append(f"service {', '.join(services)}")

    # One scan: every filtered line, its month (UTC), instance type, hours, cost bucket.
    def num(c: str) -> str:
        return f"CAST(coalesce(TRY_CAST({col(c)} AS DOUBLE), 0) AS DECIMAL(38, 10))"

    def first_filled(*cs: str) -> str:
        return "CAST(coalesce(" + ", ".join(f"TRY_CAST({col(c)} AS DOUBLE)" for c in cs) + ", 0) AS DECIMAL(38, 10))"

    end_sql = (
        f"coalesce(TRY_CAST(line_item_usage_end_date AS TIMESTAMPTZ), {start_sql} + INTERVAL 1 HOUR)"
        if "line_item_usage_end_date" in cols
        else f"{start_sql} + INTERVAL 1 HOUR"
    )
    net = first_filled("line_item_net_unblended_cost", "line_item_unblended_cost")
    sp = first_filled(*SP_COLUMNS)
    ih = f"""line_item_line_item_type IN ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage')
             AND regexp_matches(CAST(line_item_usage_type AS VARCHAR), '{INSTANCE_HOURS}')"""
    lines_sql = f"""
        SELECT
            strftime(date_trunc('month', {start_sql}), '%Y-%m') AS month,
            {start_sql} AS start, {end_sql} AS stop,
            coalesce(CAST(product_instance_type AS VARCHAR), '') AS itype,
            CAST(line_item_resource_id AS VARCHAR) AS rid,
            CAST(line_item_line_item_type AS VARCHAR) AS lt,
            CASE WHEN {ih} THEN {num("line_item_usage_amount")} ELSE 0 END AS hours,
            CASE line_item_line_item_type
                WHEN 'Usage' THEN {net}
                WHEN 'DiscountedUsage' THEN {num("reservation_effective_cost")}
                WHEN 'SavingsPlanCoveredUsage' THEN {sp}
                ELSE 0 END AS usage_cost,
            CASE WHEN line_item_line_item_type IN ('Credit', 'Refund') THEN {net} ELSE 0 END AS credit,
            {net} AS cost,
            CASE WHEN line_item_line_item_type = 'RIFee'
                 THEN {num("reservation_unused_amortized_upfront_fee_for_billing_period")}
                      + {num("reservation_unused_recurring_fee")}
                 WHEN line_item_line_item_type = 'SavingsPlanRecurringFee'
                 THEN {num("savings_plan_total_commitment_to_date")} - {num("savings_plan_used_commitment")}
                 ELSE 0 END AS unused,
            {("CAST(" + CURRENCY + " AS VARCHAR)") if CURRENCY in cols else "NULL"} AS currency
        FROM {src}
        WHERE {where}
    """
    # The one scan: group every filtered line to (month, type, resource, line type, currency); what follows
    # reads this small table. A second, over instance-hour lines only, keeps their intervals for the fleet size.
    try:
        con.execute(
            f"""CREATE TEMP TABLE g AS
            SELECT month, itype, rid, lt, currency, sum(hours) AS hours, sum(usage_cost) AS usage_cost,
                   sum(credit) AS credit, sum(cost) AS cost, sum(unused) AS unused, min(cost) AS lowest,
                   min(start) AS first, max(stop) AS last
            FROM ({lines_sql}) GROUP BY ALL""",
            params,
        )
        con.execute(
            f"""CREATE TEMP TABLE ev AS
            SELECT itype, month, start, stop, sum(hours) AS hours FROM ({lines_sql}) WHERE hours > 0 GROUP BY ALL""",
            params,
        )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFileError(f"cannot summarise: {first}", file=where_files, fix="pass a CUR 2.0 export") from None
    neg = con.execute(
        f"SELECT lt, min(lowest) FROM g WHERE lt IN ({', '.join(repr(c) for c in CHARGES)}) AND lowest < 0 GROUP BY lt"
    ).fetchall()
    if neg:
        lt, low = neg[0]
        raise InputFileError(
            f"a {lt} line costs {Decimal(low):.2f}: negative costs belong only on Credit and Refund lines",
            file=where_files,
            field="line_item_unblended_cost",
            fix="pass the export as AWS wrote it",
        )
    currencies = [r[0] for r in con.execute("SELECT DISTINCT coalesce(currency, '') FROM g").fetchall()]
    named = sorted(c for c in currencies if c)
    if len(named) > 1 or (named and "" in currencies):
        raise InputFileError(
            f"mixed currencies {', '.join(named + (['none given'] if '' in currencies else []))} in the selected lines",
            file=where_files,
            field=CURRENCY,
            fix="filter to one payer account with --account, or import each currency's export separately",
        )
    currency = named[0] if named else "USD"
    currency_note = "" if named else f"no {CURRENCY} column or value: USD assumed"
    type_filter = ""
    tparams: list[Any] = []
    if types:
        type_filter = f" AND itype IN ({', '.join('?' for _ in types)})"
        tparams = types
    agg = con.execute(
        f"""
        WITH per_res AS (
            SELECT itype, month, rid, sum(hours) AS hours, sum(usage_cost) AS usage_cost, sum(credit) AS credit
            FROM g WHERE itype <> '' {type_filter}
            GROUP BY ALL
        )
        SELECT itype, month, sum(hours), sum(usage_cost), sum(credit),
               count(DISTINCT rid) FILTER (WHERE hours > 0 AND rid IS NOT NULL AND rid <> '')
        FROM per_res GROUP BY ALL ORDER BY month, itype
        """,
        tparams,
    ).fetchall()
    # Peak concurrency: each line runs hours/duration instances over [start, stop); ends before starts at a tie.
    peak = {
        (t, m): Decimal(p or 0)
        for t, m, p in con.execute(
            """
        WITH e AS (
            SELECT itype, month, start AS t, 1 AS o,
                   hours / greatest(epoch(stop) - epoch(start), 1) * 3600 AS d FROM ev
            UNION ALL
            SELECT itype, month, stop, 0, -(hours / greatest(epoch(stop) - epoch(start), 1) * 3600) FROM ev
        )
        SELECT itype, month, max(run) FROM (
            SELECT itype, month, sum(d) OVER (PARTITION BY itype, month ORDER BY t, o ROWS UNBOUNDED PRECEDING) AS run
            FROM e
        ) GROUP BY ALL"""
        ).fetchall()
    }
    other = con.execute(
        """
        SELECT lt, sum(cost) FROM g
        WHERE (itype = '' OR lt NOT IN ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'Credit', 'Refund'))
          AND lt <> 'SavingsPlanNegation'
        GROUP BY lt ORDER BY lt
        """
    ).fetchall()
    unused = con.execute("SELECT lt, sum(unused) FROM g WHERE unused <> 0 GROUP BY lt ORDER BY lt").fetchall()
    first_ts, last = con.execute("SELECT min(first), max(last) FROM g").fetchone()
    rows: list[SpendRow] = []
    for itype, month, hours, usage, credit, nres in agg:
        y, m = map(int, month.split("-"))
        m_start = dt.date(y, m, 1)
        h_month = (_month_end(m_start) - m_start).days * 24
        hours, usage, credit = (Decimal(hours or 0), Decimal(usage or 0), Decimal(credit or 0))
        share = hours / (nres * h_month) if nres else Decimal(0)
        rows.append(
            SpendRow(
                instance_type=itype,
                month=month,
                instance_hours=_plain(hours),
                usage_cost=usage,
                credits=credit,
                effective_cost=usage + credit,
                resources=int(nres),
                concurrent=math.ceil(peak.get((itype, month), Decimal(0)) - Decimal("0.001")),
                hours_in_month=h_month,
                mean_share_of_month=share,
            )
        )
    if not rows:
        what = ", ".join(filters) or "no filters"
        raise InputFileError(
            f"no EC2 instance usage in the selected period ({what})" + (f" for {', '.join(types)}" if types else ""),
            file=where_files,
            fix="check --period, --tag, --account and --instance-type against the export",
        )
    if rng:
        months = []
        d = rng[0]
        while d < rng[1]:
            months.append(f"{d:%Y-%m}")
            d = _month_end(d)
    else:
        months = sorted({r.month for r in rows})
    coverage = _coverage(months, first_ts, last)
    res_rows: list[ResourceRow] = []
    if resources:
        for rid, itype, month, hours in con.execute(
            f"""SELECT rid, itype, month, sum(hours) AS h FROM g WHERE itype <> '' {type_filter}
            GROUP BY ALL HAVING sum(hours) > 0 ORDER BY month, itype, rid""",
            tparams,
        ).fetchall():
            h_month = next(r.hours_in_month for r in rows if r.month == month)
            res_rows.append(
                ResourceRow(
                    resource_id=rid or "",
                    instance_type=itype,
                    month=month,
                    instance_hours=_plain(Decimal(hours)),
                    share_of_month=Decimal(hours) / h_month,
                )
            )
    summary = SpendSummary(
        files=files,
        file_format=fmt,
        currency=currency,
        currency_note=currency_note,
        period=f"{months[0]}..{months[-1]}" if len(months) > 1 else months[0],
        months=months,
        partial_months={m: c for m, c in coverage.items() if c < 1},
        filters=filters + ([f"instance type {', '.join(types)}"] if types else []),
        rows=rows,
        unattributed={lt: Decimal(v or 0) for lt, v in other if v},
        unused_commitment={lt: Decimal(v or 0) for lt, v in unused if v},
        last_usage=last.astimezone(dt.timezone.utc).replace(tzinfo=None) if isinstance(last, dt.datetime) else None,
        as_of=dt.date.today(),
    )
    return summary, res_rows


def _coverage(months: list[str], first: Any, last: Any) -> dict[str, Decimal]:
    """Share of each month between the export's first usage start and last usage end (UTC)."""
    out: dict[str, Decimal] = {}
    if not isinstance(first, dt.datetime) or not isinstance(last, dt.datetime):
        return {m: Decimal(1) for m in months}
    a, b = first.astimezone(dt.timezone.utc), last.astimezone(dt.timezone.utc)
    for m in months:
        y, mo = map(int, m.split("-"))
        ms = dt.datetime(y, mo, 1, tzinfo=dt.timezone.utc)
        me = dt.datetime.combine(_month_end(ms.date()), dt.time(), dt.timezone.utc)
        lo, hi = max(ms, a), min(me, b)
        secs = max((hi - lo).total_seconds(), 0)
        # whole hours: an export that ends at the last hour's start still covers that hour
        out[m] = min(Decimal(1), Decimal(round(secs / 3600)) / Decimal(round((me - ms).total_seconds() / 3600)))
    return out

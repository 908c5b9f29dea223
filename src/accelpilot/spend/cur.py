"""Summarise an AWS Cost and Usage Report 2.0 export with DuckDB, which scans it without loading it.

An export is Parquet or CSV (gzip or not), one file or a folder of many (``data/BILLING_PERIOD=.../``). DuckDB
reads only the columns named below and aggregates as it scans, so memory stays flat whatever the file size.

Effective cost per line (documented choice, from the CUR 2.0 columns the issue names):

* ``Usage``: ``line_item_net_unblended_cost`` (after negotiated discounts), else ``line_item_unblended_cost``;
* ``DiscountedUsage`` (covered by a reservation): ``reservation_effective_cost``;
* ``SavingsPlanCoveredUsage``: ``savings_plan_net_savings_plan_effective_cost``;
* ``Credit`` and ``Refund`` carrying an instance type: subtracted from that type (shown apart as credits);
* ``SavingsPlanNegation`` is dropped (it cancels the on-demand cost of covered usage); other lines
  (commitment fees, tax, lines without an instance type) are not attributed to an instance type and are
  reported apart, never silently lost.

Instance-hours are the ``line_item_usage_amount`` of usage lines whose usage type is an EC2 instance-hour
(``BoxUsage``, ``SpotUsage``, ``DedicatedUsage``, ``HostUsage``); the share of the month a resource ran is its
instance-hours over the hours of that month.
"""

from __future__ import annotations

import datetime as dt
import re
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
    "line_item_net_unblended_cost",
    "product_instance_type",
    "pricing_term",
    "reservation_effective_cost",
    "savings_plan_net_savings_plan_effective_cost",
    "resource_tags",
)
ACCOUNT = "line_item_usage_account_id"
CURRENCY = "line_item_currency_code"
_SUFFIXES = {".parquet": "parquet", ".csv": "csv", ".gz": "csv"}
INSTANCE_HOURS = "(BoxUsage|SpotUsage|DedicatedUsage|HostUsage)"  # usage types that are EC2 instance-hours
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def _connect() -> Any:
    try:
        import duckdb
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ConfigError("reading a CUR export needs DuckDB", fix="pip install 'accelpilot[spend]'") from None
    con = duckdb.connect(config={"memory_limit": "1GB"})
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar writes to stdout, into --json output
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
    col_type = str(con.execute(f"SELECT typeof(resource_tags) FROM {src} LIMIT 1").fetchone()[0]).upper()
    out = []
    for key, value in tags:
        if col_type.startswith("MAP"):
            out.append("element_at(resource_tags, ?)[1] = ?")
        else:
            out.append("json_extract_string(CAST(resource_tags AS VARCHAR), ?) = ?")
            key = "$." + '"' + key.replace('"', '\\"') + '"'
        params += [key, value]
    return " AND " + " AND ".join(out)


def summarise(
    paths: Sequence[Path | str],
    *,
    period: str | None = None,
    tags: Iterable[str] = (),
    accounts: Iterable[str] = (),
    instance_types: Iterable[str] = (),
    resources: bool = False,
) -> tuple[SpendSummary, list[ResourceRow]]:
    """Per instance type and month: instance-hours, effective cost, credits, share of month; optionally per resource."""
    files, fmt = find_files(paths)
    where_files = ", ".join(Path(f).name for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    con = _connect()
    src = _source_sql(files, fmt)
    try:
        cols = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
    except Exception as exc:  # duckdb raises its own hierarchy; name the file and stop
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFileError(f"cannot read as {fmt}: {first}", file=where_files, fix="pass a CUR 2.0 export") from None
    missing = [c for c in REQUIRED if c not in cols]
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
    params: list[Any] = []
    where = "TRUE"
    rng = parse_period(period)
    if rng:
        start = "CAST(line_item_usage_start_date AS TIMESTAMP)"
        where += f" AND {start} >= ? AND {start} < ?"
        params += [dt.datetime.combine(rng[0], dt.time()), dt.datetime.combine(rng[1], dt.time())]
    if acc:
        where += f" AND CAST({ACCOUNT} AS VARCHAR) IN ({', '.join('?' for _ in acc)})"
        params += acc
    types = list(instance_types)
    where += _tag_sql(con, src, tag_pairs, params)
    filters = [f"tag {k}={v}" for k, v in tag_pairs] + [f"account {a}" for a in acc]
    if period:
        filters.append(f"period {period}")

    # One scan: every filtered line, its month, instance type, hours, cost bucket.
    num = "CAST(coalesce(TRY_CAST({} AS DOUBLE), 0) AS DECIMAL(38, 10))"
    lines_sql = f"""
        SELECT
            strftime(date_trunc('month', CAST(line_item_usage_start_date AS TIMESTAMP)), '%Y-%m') AS month,
            CAST(line_item_usage_start_date AS TIMESTAMP) AS start,
            coalesce(CAST(product_instance_type AS VARCHAR), '') AS itype,
            CAST(line_item_resource_id AS VARCHAR) AS rid,
            CAST(line_item_line_item_type AS VARCHAR) AS lt,
            CASE WHEN line_item_line_item_type IN ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage')
                  AND regexp_matches(CAST(line_item_usage_type AS VARCHAR), '{INSTANCE_HOURS}')
                 THEN {num.format("line_item_usage_amount")} ELSE 0 END AS hours,
            CASE line_item_line_item_type
                WHEN 'Usage' THEN CAST(coalesce(TRY_CAST(line_item_net_unblended_cost AS DOUBLE),
                                                TRY_CAST(line_item_unblended_cost AS DOUBLE), 0) AS DECIMAL(38, 10))
                WHEN 'DiscountedUsage' THEN {num.format("reservation_effective_cost")}
                WHEN 'SavingsPlanCoveredUsage' THEN {num.format("savings_plan_net_savings_plan_effective_cost")}
                ELSE 0 END AS usage_cost,
            CASE WHEN line_item_line_item_type IN ('Credit', 'Refund')
                 THEN CAST(coalesce(TRY_CAST(line_item_net_unblended_cost AS DOUBLE),
                                    TRY_CAST(line_item_unblended_cost AS DOUBLE), 0) AS DECIMAL(38, 10))
                 ELSE 0 END AS credit,
            {num.format("line_item_unblended_cost")} AS unblended,
            {("CAST(" + CURRENCY + " AS VARCHAR)") if CURRENCY in cols else "NULL"} AS currency
        FROM {src}
        WHERE {where}
    """
    # The one scan: group every filtered line to (month, type, resource, line type, currency); what follows
    # reads this small table, never the export again.
    try:
        con.execute(
            f"""CREATE TEMP TABLE g AS
            SELECT month, itype, rid, lt, currency, sum(hours) AS hours, sum(usage_cost) AS usage_cost,
                   sum(credit) AS credit, sum(unblended) AS unblended, max(start) AS last
            FROM ({lines_sql}) GROUP BY ALL""",
            params,
        )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFileError(f"cannot summarise: {first}", file=where_files, fix="pass a CUR 2.0 export") from None
    currencies = [
        r[0]
        for r in con.execute("SELECT DISTINCT currency FROM g WHERE currency IS NOT NULL AND currency <> ''").fetchall()
    ]
    if len(currencies) > 1:
        raise InputFileError(
            f"mixed currencies {', '.join(sorted(currencies))} in the selected lines",
            file=where_files,
            fix="filter to one payer account with --account, or import each currency's export separately",
        )
    currency = currencies[0] if currencies else "USD"
    currency_note = "" if currencies else f"no {CURRENCY} column or value: USD assumed"
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
    other = con.execute(
        """
        SELECT lt, sum(unblended) FROM g
        WHERE (itype = '' OR lt NOT IN ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'Credit', 'Refund'))
          AND lt <> 'SavingsPlanNegation'
        GROUP BY lt ORDER BY lt
        """
    ).fetchall()
    last = con.execute("SELECT max(last) FROM g").fetchone()[0]
    rows: list[SpendRow] = []
    for itype, month, hours, usage, credit, nres in agg:
        y, m = map(int, month.split("-"))
        m_start = dt.date(y, m, 1)
        h_month = (dt.date(y + (m == 12), m % 12 + 1, 1) - m_start).days * 24
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
            d = dt.date(d.year + (d.month == 12), d.month % 12 + 1, 1)
    else:
        months = sorted({r.month for r in rows})
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
        filters=filters + ([f"instance type {', '.join(types)}"] if types else []),
        rows=rows,
        unattributed={lt: Decimal(v or 0) for lt, v in other if v},
        last_usage=last if isinstance(last, dt.datetime) else None,
        as_of=dt.date.today(),
    )
    return summary, res_rows

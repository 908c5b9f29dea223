"""Property tests: any scenario input either prices into a consistent bill or stops with one UserError line."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import Bill
from accelpilot.bill.scenario import Scenario, load_scenario, parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import UserError

CAT = load_catalog()
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10**9),
    st.floats(allow_nan=True),
    st.text(max_size=10),
    st.sampled_from(["on_demand", "reserved_3y", "rental", "owned", "p5.48xlarge", "trn1.32xlarge", "H100@Hyperstack"]),
)
option = st.dictionaries(
    st.sampled_from(
        [
            "name",
            "instance",
            "pricing",
            "hours_per_run",
            "instances",
            "porting_days",
            "accepted_share",
            "result",
            "owned",
            "extras",
            "peak_qps",
        ]
    ),
    scalars,
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(
    options=st.lists(option, max_size=3),
    top=st.dictionaries(
        st.sampled_from(["name", "baseline", "workload", "currency", "volumes", "engineering", "extras", "gates"]),
        st.one_of(scalars, st.dictionaries(st.text(max_size=8), scalars, max_size=3)),
        max_size=4,
    ),
)
def test_parse_and_bill_never_crash(options: list[dict[str, object]], top: dict[str, object]) -> None:
    try:
        sc = parse_scenario({**top, "options": options})
        bill = make_bill(sc, CAT)
    except UserError as exc:
        _one_line(exc)
        return
    _consistent(sc, bill)


# Options that are valid by construction (priced rows of the bundled catalog), so the success path is what runs.
PRICED = [
    ("trn1.2xlarge", "on_demand"),
    ("trn1.32xlarge", "on_demand"),
    ("trn1.32xlarge", "reserved_3y"),
    ("p5.48xlarge", "on_demand"),
    ("inf2.xlarge", "on_demand"),
    ("H100@Hyperstack", "rental"),
]
valid_option = st.tuples(
    st.sampled_from(PRICED),
    st.floats(0.01, 10_000, allow_nan=False),
    st.integers(0, 200),
    st.floats(0.05, 1.0),
    st.integers(1, 8),
)


@settings(max_examples=150, deadline=None)
@given(opts=st.lists(valid_option, min_size=2, max_size=4), runs=st.floats(0.1, 1000), months=st.integers(1, 72))
def test_valid_scenarios_always_price_consistently(
    opts: list[tuple[tuple[str, str], float, int, float, int]], runs: float, months: int
) -> None:
    options = [
        {
            "name": f"option {i}",
            "instance": inst,
            "pricing": pricing,
            "hours_per_run": hours,
            "porting_days": days,
            "accepted_share": share,
            "instances": n,
        }
        for i, ((inst, pricing), hours, days, share, n) in enumerate(opts)
    ]
    sc = parse_scenario(
        {"options": options, "volumes": {"runs_per_month": runs, "months": months}, "engineering": {"day_rate": 800}}
    )
    _consistent(sc, make_bill(sc, CAT))


def _consistent(sc: Scenario, bill: Bill) -> None:
    """Accepted input prices every option once, in order, in the scenario's currency, never below zero."""
    assert [o.name for o in bill.options] == [o.name for o in sc.options]
    assert bill.baseline in {o.name for o in bill.options}
    assert len(bill.comparisons) == len(bill.options) - 1
    for o in bill.options:
        for f in (o.total_36_months, o.monthly_cost, o.one_off_cost, o.cost_per_run, o.cost_per_accepted_run):
            if f is not None:
                assert f.currency == sc.currency and f.value >= 0, (o.name, f)
        if o.cost_per_run is not None and o.cost_per_accepted_run is not None:
            assert o.cost_per_accepted_run.value >= o.cost_per_run.value  # a share of at most 1 never lowers it


def _one_line(exc: UserError) -> None:
    """The CLI prints the message as the whole error: it must say something, on one line."""
    msg = str(exc)
    assert msg.strip() and "\n" not in msg


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(st.binary(max_size=300))
def test_scenario_file_bytes_never_crash(tmp_path: Path, raw: bytes) -> None:
    f = tmp_path / "s.toml"
    f.write_bytes(raw)
    try:
        sc = load_scenario(f)
    except UserError as exc:
        _one_line(exc)
        assert str(f) in str(exc), "the error names the file"
        return
    assert sc.path == str(f) and sc.options

"""Figure: units, provenance through arithmetic, vendor claims refused."""

from __future__ import annotations

from decimal import Decimal

import pytest

from accelpilot.errors import ConfigError, UnitMismatchError, VendorClaimError
from accelpilot.figures import Figure, Kind, assumption, constant, fig_ref, format_unit, parse_unit


def price(v: str = "55.04") -> Figure:
    return Figure(value=v, unit="USD/h", kind=Kind.LIST_PRICE, source="seed 004", label="p5 price")


def test_units_multiply_and_cancel() -> None:
    cost = price() * assumption(20, "h", label="hours")
    assert cost.unit == "USD"
    assert cost.value == Decimal("1100.80")
    assert cost.currency == "USD"
    assert format_unit(parse_unit("USD/kW/month")) == "USD/kW/month"
    assert (assumption(2, "kW") * Figure(value="184.06", unit="USD/kW/month", kind=Kind.LIST_PRICE)).unit == "USD/month"


def test_derived_keeps_inputs_and_leaves() -> None:
    hours = assumption(20, "h", label="hours")
    cost = price() * hours
    assert cost.kind is Kind.DERIVED
    assert cost.inputs == (price(), hours)
    assert {f.kind for f in cost.leaves()} == {Kind.LIST_PRICE, Kind.ASSUMPTION}
    # a constant does not pollute the provenance
    assert (cost / constant(2)).leaves() == [price(), hours]


def test_add_requires_same_unit_and_currency() -> None:
    usd = Figure(value=1, unit="USD", kind=Kind.ASSUMPTION)
    eur = Figure(value=1, unit="EUR", kind=Kind.ASSUMPTION)
    with pytest.raises(UnitMismatchError):
        _ = usd + eur
    with pytest.raises(UnitMismatchError):
        _ = usd + assumption(1, "h")
    assert (usd + usd).value == 2


def test_vendor_claim_refuses_every_arithmetic() -> None:
    claim = Figure(value="0.5", unit="", kind=Kind.VENDOR_CLAIM, label="trn1-cost-to-train", source="AWS")
    for op in (
        lambda: claim * price(),
        lambda: price() * claim,
        lambda: claim + claim,
        lambda: claim - claim,
        lambda: price() / claim,
        lambda: float(claim),
        lambda: claim.rounded(),
        lambda: sum([claim]),
    ):
        with pytest.raises(VendorClaimError, match="vendor claim"):
            op()
    # but it can be stored and shown
    assert "vendor claim" in fig_ref(claim).describe()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "abc", True, None])
def test_bad_values_rejected(bad: object) -> None:
    with pytest.raises((ConfigError, ValueError)):
        Figure(value=bad, unit="", kind=Kind.ASSUMPTION)


def test_json_round_trip_keeps_value() -> None:
    f = price("35.7608") / constant(16)
    data = f.model_dump(mode="json")
    assert data["value"] == 2.23505
    assert Figure.model_validate(data).value == Decimal("2.23505")


def test_division_by_zero_is_a_user_error() -> None:
    with pytest.raises(ConfigError):
        _ = price() / assumption(0, "")

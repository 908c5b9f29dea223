"""Read a portfolio file and its scenarios once; every bad input is one line naming the file and the field."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from accelpilot.bill.scenario import Scenario, load_scenario
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.portfolio.model import Portfolio


def is_portfolio(path: Path) -> bool:
    """A TOML file with a ``[portfolio]`` table (the bill/report commands dispatch on it)."""
    from accelpilot.catalog.loader import read_toml

    return path.is_file() and isinstance(read_toml(path).get("portfolio"), dict)


def _field(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            rows = data.get(str(loc[i - 1])) if i else None
            name = rows[part].get("name") if isinstance(rows, list) and isinstance(rows[part], dict) else None
            out += f"[{part + 1}{' ' + repr(name) if name else ''}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse_portfolio(data: dict[str, Any], path: str) -> Portfolio:
    try:
        return Portfolio.model_validate({**data, "path": path})
    except ValidationError as exc:
        err = exc.errors()[0]
        unknown = err["type"] == "extra_forbidden"
        raise ConfigError(
            "unknown field" if unknown else str(err["msg"]).removeprefix("Value error, "),
            file=path,
            field=_field(tuple(err["loc"]), data),
            fix="remove it or check the spelling" if unknown else None,
        ) from None


def _hint(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1)
    return f"did you mean {close[0]!r}?" if close else f"choose one of: {', '.join(names)}"


def read_portfolio(path: Path | str) -> tuple[Portfolio, dict[str, Scenario]]:
    """The portfolio and each workload's scenario, read once and checked against each other."""
    from accelpilot.catalog.loader import read_toml

    p = Path(path)
    pf = parse_portfolio(read_toml(p), str(p))
    where = str(p)
    names = [w.name for w in pf.workloads]
    if len(set(names)) != len(names):
        raise ConfigError("workload names must be unique", file=where, field="workloads", fix="rename one")
    scenarios: dict[str, Scenario] = {}
    for i, w in enumerate(pf.workloads):
        sp = Path(w.scenario)
        sp = sp if sp.is_absolute() else p.parent / sp
        if not sp.is_file():
            raise InputFileError(
                f"scenario {w.scenario!r} not found (looked at {sp})",
                file=where,
                field=f"workloads[{i + 1} {w.name!r}].scenario",
                fix="give a path relative to the portfolio file",
            )
        scenarios[w.name] = load_scenario(sp)
    currencies = {sc.currency for sc in scenarios.values()}
    if len(currencies) > 1:
        pairs = ", ".join(f"{n}: {sc.currency}" for n, sc in scenarios.items())
        raise ConfigError(
            f"workloads are in different currencies ({pairs})",
            file=where,
            field="workloads",
            fix="give every scenario the same currency",
        )
    for i, e in enumerate(pf.estates):
        at = f"estates[{i + 1} {e.name!r}].options"
        for wname in names:
            if wname not in e.options:
                raise ConfigError(
                    f"no option chosen for workload {wname!r}", file=where, field=at, fix=f'add "{wname}" = "<option>"'
                )
        for wname, oname in e.options.items():
            if wname not in scenarios:
                raise ConfigError(f"{wname!r} names no workload; {_hint(wname, names)}", file=where, field=at)
            onames = [o.name for o in scenarios[wname].options]
            if oname not in onames:
                raise ConfigError(
                    f"{oname!r} is not an option of {scenarios[wname].path}; {_hint(oname, onames)}",
                    file=where,
                    field=f"{at}.{wname}",
                )
    enames = [e.name for e in pf.estates]
    if len(set(enames)) != len(enames):
        raise ConfigError("estate names must be unique", file=where, field="estates", fix="rename one")
    return pf, scenarios

"""`accelpilot collect RESULTS... --scenario S.toml`: match results to options and write them into the scenario."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, err_console, print_json


@app.command("collect")
def collect(
    results: list[Path] = typer.Argument(..., help="Result files or folders of them."),
    scenario: Path = typer.Option(..., "--scenario", help="Scenario TOML whose options the results price."),
    write: bool = typer.Option(False, "--write", help="Update the scenario in place (default: a new file)."),
    out: Path | None = typer.Option(None, "--out", help="Write the updated scenario here (default: S.collected.toml)."),
    as_option: str | None = typer.Option(None, "--as", help="Assign every result to this option, whatever it ran on."),
    catalog: list[Path] | None = typer.Option(None, "--catalog", help="Extra catalog file; repeatable."),
    accept_unverified: bool = typer.Option(
        False,
        "--accept-unverified",
        help="Write results whose .sha256 is missing or does not match into the scenario too; the bill then marks "
        "their figures unverified, not measured.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Check pilot results, match each to the options it measured, and write `result = ...` into the scenario."""
    from accelpilot.catalog import load_catalog
    from accelpilot.collect import ScenarioDoc, gather_results, match_results
    from accelpilot.collect.combine import combine_runs, write_combined
    from accelpilot.collect.join import split_scaling
    from accelpilot.collect.match import measured_on
    from accelpilot.errors import ConfigError
    from accelpilot.termtext import cell

    if write and out is not None:
        raise ConfigError("--write and --out both name where to write", field="--out", fix="use one of them")
    doc = ScenarioDoc.read(scenario)
    gathered = gather_results(results)
    collected = gathered.results
    assigned, left = match_results(collected, doc.scenario, load_catalog(catalog or []), as_option)
    dest = scenario if write else (out or scenario.with_name(f"{scenario.stem}.collected{scenario.suffix}"))
    today = dt.date.today().isoformat()
    combos = {}
    joins = {}
    held: set[str] = set()  # options whose best result is unverified and was not written (no --accept-unverified)
    for i, asg in enumerate(assigned):
        asg, scaling = split_scaling(asg)  # the one-node --scaling run launched beside a multi-node one
        assigned[i] = asg
        best = asg.results[0]
        if best.checksum != "verified" and not accept_unverified:
            held.add(asg.option)
            continue
        if scaling is not None:
            srel = Path(os.path.relpath(scaling.path.resolve(), dest.resolve().parent)).as_posix()
            note = f"one-node --scaling run joined: collected {today}"
            doc.set_result(asg.option, srel, note, key="scaling_result")
            joins[asg.option] = scaling
        target = best.path
        more = f"; {len(asg.results) - 1} more run(s) collected" if len(asg.results) > 1 else ""
        combo = combine_runs(asg.results)
        if combo is not None:  # several runs: the bill prices their combination, written beside them
            target = write_combined(combo, asg.option, best.path.parent, verified=best.checksum == "verified")
            combos[asg.option] = (combo, target)
            more = f"; {combo.method} of {len(combo.runs)} runs"
        rel = Path(os.path.relpath(target.resolve(), dest.resolve().parent)).as_posix()
        verified = best.checksum == "verified"
        state = "measured" if verified else "UNVERIFIED (priced as unverified, not measured)"
        doc.set_result(asg.option, rel, f"{state}: collected {today} ({asg.how}{more})", None if verified else best.why)
    written = doc.write(dest) if len(held) < len(assigned) else None
    rows: list[dict[str, Any]] = []
    by_option = {a.option: a for a in assigned}
    for opt in doc.scenario.options:
        a = by_option.get(opt.name)
        if a is not None:
            it, accel = measured_on(a.results[0])
            best = a.results[0]
            rows.append(
                {
                    "option": opt.name,
                    "status": "measured" if best.checksum == "verified" else "unverified",
                    "result": str(best.path),
                    "measured_on": it or accel,
                    "how": a.how,
                    "runs": len(a.results),
                    "checksum": best.checksum,
                    "written": opt.name not in held,
                }
            )
            if opt.name in joins:
                rows[-1]["scaling_result"] = str(joins[opt.name].path)
            if best.checksum != "verified":
                rows[-1]["why"] = best.why
            if opt.name in combos:
                combo, path = combos[opt.name]
                rows[-1]["result"] = str(path)
                rows[-1]["combined"] = {
                    "method": combo.method,
                    "runs": [str(p) for p in combo.runs],
                    "dropped": {k: [str(p) for p in v] for k, v in combo.dropped.items()},
                    "not_combined": [{"file": str(p), "why": w} for p, w in combo.not_combined],
                }
        else:
            was = "measured (earlier result)" if opt.result else "assumed"
            rows.append({"option": opt.name, "status": was, "result": opt.result or "", "measured_on": "", "how": ""})
    dups = [{"kept": str(c.path), "duplicates": [str(d) for d in c.duplicates]} for c in collected if c.duplicates]
    report = {
        "scenario": str(scenario),
        "written": str(written) if written else None,
        "options": rows,
        "left_out": [{"file": str(c.path), "why": why} for c, why in left],
        "duplicates": dups,
        "bad": [{"file": str(p), "why": why} for p, why in gathered.bad],
    }
    if as_json:
        print_json(report)
        return
    from rich.table import Table

    caption = f"written to {written}" if written else "nothing written: no verified result matched"
    table = Table(title=f"measured vs assumed: {doc.scenario.name}", caption=caption)
    for col in ("option", "status", "measured on", "result", "matched by"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = "green" if r["status"] == "measured" else "yellow"
        status = r["status"] + ("" if r.get("written", True) else ", not written")
        how = r["how"] + (f", {r['runs']} runs" if r.get("runs", 1) > 1 else "")
        if "scaling_result" in r:
            how += f", scaling_result {Path(r['scaling_result']).name} joined"
        if "combined" in r:
            c = r["combined"]
            how += f", {c['method']} of {len(c['runs'])}"
            drop = sorted({Path(p).name for v in c["dropped"].values() for p in v})
            if drop:
                how += f", dropped {', '.join(drop)}"
        table.add_row(cell(r["option"]), f"[{style}]{status}", cell(r["measured_on"]), cell(r["result"]), how)
    console.print(table)
    for _bad, why in gathered.bad:
        err_console.print(f"[red]not collected:[/red] {cell(why)}")
    for r in rows:
        if r["status"] == "unverified":
            what = "written as unverified" if r["written"] else "not written (--accept-unverified writes it)"
            err_console.print(f"[yellow]unverified:[/yellow] {cell(r['result'])}: {cell(r['why'])}; {what}")
    for c, why in left:
        err_console.print(f"[yellow]left out:[/yellow] {cell(c.path)}: {cell(why)}")
    for d in dups:
        err_console.print(
            f"[yellow]duplicate:[/yellow] {cell(', '.join(d['duplicates']))} = {cell(d['kept'])} (same run)"
        )

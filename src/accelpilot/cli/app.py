"""The typer app objects; command modules attach to them. No logic lives in the CLI."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="accelpilot",
    help="Scan, pilot, bill and decide: should this workload move to Trainium, another GPU or owned hardware?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
run_app = typer.Typer(help="Run a pilot on the local device and write one result file.", no_args_is_help=True)
schema_app = typer.Typer(help="Print the JSON Schema of a file accelpilot writes.", no_args_is_help=True)
app.add_typer(run_app, name="run")
app.add_typer(schema_app, name="schema")

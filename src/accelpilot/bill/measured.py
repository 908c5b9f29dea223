"""Measured inputs from pilot results (handed over already read: the bill never reads a file)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

from accelpilot.bill.common import SECONDS_PER_HOUR, _a
from accelpilot.bill.scenario import Option, Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.figures import Figure, Kind, constant

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult


# --- measured inputs from pilot results ---------------------------------------------------------


def handed(results: Mapping[str, PilotResult], path: str) -> PilotResult:
    """A result file the procedure read and handed over (the bill never reads a file)."""
    try:
        return results[path]
    except KeyError:
        raise InputFileError(
            "this result file was not read before billing",
            file=path,
            field="result",
            fix="pass results=accelpilot.result_files.read_option_results(scenario) to make_bill",
        ) from None


def _read_result(opt: Option, sc: Scenario, results: Mapping[str, PilotResult]) -> tuple[PilotResult, str]:
    """The option's result, already read, and its path as the scenario resolves it."""
    assert opt.result is not None
    path = str(sc.resolve(opt.result))
    return handed(results, path), path


def _measured(
    value: float, unit: str, label: str, path: str, res: PilotResult, unverified: str | None = None
) -> Figure:
    """A figure read from a pilot result: "measured", or "unverified" when the scenario says its checksum failed."""
    source = f"pilot result {path} ({res.platform.device_name or res.platform.device})"
    return Figure(
        value=Decimal(repr(float(value))),
        unit=unit,
        kind=Kind.UNVERIFIED if unverified else Kind.MEASURED,
        label=label,
        source=source + (f", UNVERIFIED: {unverified}" if unverified else ""),
        as_of=res.created.date(),
    )


def unverified_note(opt: Option, path: str) -> list[str]:
    """The bill's line about a result priced as unverified (``result_unverified``, set by collect)."""
    if not path or not opt.result_unverified:
        return []
    return [
        f"UNVERIFIED: priced from {path}, whose checksum failed ({opt.result_unverified}); its figures are marked "
        "unverified (U), not measured, and comparisons use the assumed margin"
    ]


def _device_multiplier(
    opt: Option,
    cat: Catalog,
    res: PilotResult,
    where: str,
    scaling: tuple[PilotResult, str] | None = None,
    path: str = "",
) -> tuple[Figure, list[str]]:
    """How many pilot-devices' worth of throughput one run gets: chips x instances x scaling efficiency.

    ``scaling``: the option's ``scaling_result`` (a one-node ``--scaling`` run) and its path, joined to ``res``.
    """
    if res.platform.device_type == "endpoint":
        # an endpoint pilot measured a whole server (all its chips): one instance is one measured server
        return constant(opt.instances), [
            f"measured over HTTP at {res.platform.device}: one instance = the measured server, scaled by instances"
        ]
    inst = cat.instance(opt.instance) if opt.instance else None
    rows = cat.rows_for_instance(opt.instance) if opt.instance else []
    count = (inst.accelerator_count if inst else (rows[0].accelerator_count if rows else None)) or 1
    # The throughput is the sum over the ranks that ran on ``accelerators`` accelerators (issue 25): price it per
    # accelerator measured, times the accelerators priced. A result before ``topology`` is read from its config.
    from accelpilot.pilot.result import measured_topology

    topo = measured_topology(res)
    acc = Decimal(repr(float(topo.accelerators)))
    measured_devices = int(acc) if acc == int(acc) else acc
    devices = count * opt.instances
    mult = constant(devices) / constant(measured_devices)
    notes: list[str] = []
    if measured_devices != 1:
        notes.append(
            f"throughput measured on {topo.accelerators:g} accelerator(s) ({topo.world_size} rank(s) over "
            f"{topo.nnodes} node(s)): priced as {devices} / {topo.accelerators:g} of it"
        )
    ranks = devices * topo.devices_per_accelerator  # efficiencies are keyed by world size (ranks)
    table, one_node, joined = _efficiencies(res, scaling, path)
    notes += joined
    if opt.scaling_efficiency != 1:
        mult = mult * _a(opt.scaling_efficiency, "", "scaling efficiency", where)
    elif devices != measured_devices and table:
        eff, note = _nearest(table, ranks)
        world = topo.world_size
        at_measured = table.get(world) if world > 1 else None  # at world 1 the efficiency is 1
        if devices < measured_devices and at_measured is None:
            return mult, _platform_note(opt, cat, res, f"scaled by {devices} devices") + notes
        if at_measured is not None and at_measured.value:
            # the throughput already holds the efficiency at its own world size: scale by the change only
            eff = (eff / at_measured).with_label(
                f"scaling efficiency at world size {ranks} relative to the measured {world}"
            )
            note += f", relative to {float(at_measured.value):.3g} at the measured world size {world}"
        nearest = min(table, key=lambda n: (abs(n - ranks), -n))
        if nearest in one_node and opt.instances > 1:
            note += f"; measured on one node, the option spans {opt.instances} instances"
        mult = mult * eff
        notes.append(note)
    return mult, _platform_note(opt, cat, res, f"scaled by {devices} devices") + notes


def _own_efficiencies(res: PilotResult) -> dict[int, Figure]:
    """``scaling_efficiency_world<N>`` figures by N, with world 1 (efficiency 1 by definition) where measured."""
    effs = {
        int(k.removeprefix("scaling_efficiency_world")): f
        for k, f in res.figures.items()
        if k.startswith("scaling_efficiency_world") and k.removeprefix("scaling_efficiency_world").isdigit()
    }
    if effs and "tokens_per_s_world1" in res.figures:
        effs[1] = constant(1).with_label("scaling efficiency at world size 1 (the reference)")
    return effs


def _efficiencies(
    res: PilotResult, scaling: tuple[PilotResult, str] | None, path: str
) -> tuple[dict[int, Figure], set[int], list[str]]:
    """Efficiency by world size: the result's own, a joined one-node ``--scaling`` result's, and the joined
    multi-node result's own point (its throughput against that result's world 1). Returns the table, the
    world sizes only the one-node result measured, and notes saying what was joined."""
    from accelpilot.pilot.result import measured_topology

    own = _own_efficiencies(res)
    if scaling is None:
        return own, set(), []
    sres, spath = scaling
    joined = _own_efficiencies(sres)
    table = {**joined, **own}
    notes = [f"scaling efficiencies from the one-node scaling_result {spath} (world sizes {sorted(joined)})"]
    topo = measured_topology(res)
    one = sres.figures.get("tokens_per_s_world1")
    tps = res.training.tokens_per_s if res.training else None
    if topo.world_size > 1 and one is not None and one.value and tps:
        across = (
            _measured(tps, "token/s", "measured throughput", path, res) / (constant(topo.world_size) * one)
        ).with_label(f"scaling efficiency 1 -> {topo.world_size} over {topo.nnodes} node(s)")
        table[topo.world_size] = across
        notes.append(
            f"efficiency at the measured world size {topo.world_size} over {topo.nnodes} node(s): "
            f"{float(across.value):.3g} (its throughput / ({topo.world_size} x world 1 of the scaling_result))"
        )
    return table, set(joined) - set(own) - {topo.world_size}, notes


def _nearest(effs: dict[int, Figure], devices: int) -> tuple[Figure, str]:
    """The scaling efficiency measured at the world size nearest ``devices``, and a note saying so."""
    world = min(effs, key=lambda n: (abs(n - devices), -n))
    note = f"scaling efficiency {float(effs[world].value):.3g} measured at world size {world} (pilot)"
    if devices > max(effs):
        note += f"; priced at {devices} devices: extrapolated beyond the largest world size measured ({max(effs)})"
    if float(effs[world].value) > 1:
        note += "; above 1 (superlinear): check the pilot ran on dedicated devices, not shared cores"
    return effs[world], note


def _platform_note(opt: Option, cat: Catalog, res: PilotResult, how: str) -> list[str]:
    """Say so when a result measured on one platform prices another."""
    accel = None
    if opt.instance:
        inst = cat.instance(opt.instance)
        rows = cat.rows_for_instance(opt.instance)
        accel = inst.accelerator if inst else (rows[0].accelerator if rows else None)
    measured_on = res.platform.accelerator or res.platform.device_type
    if accel and (res.platform.accelerator or "").lower() != accel.lower():
        return [
            f"measured on {measured_on} ({res.platform.device_name}), priced as {accel}: the figures are the "
            f"pilot device's ({how}), not a measurement of {accel}"
        ]
    return []


def _refuse_scaling(opt: Option, sc: Scenario, where: str, what: str) -> None:
    """scaling_efficiency only scales measured throughput; anywhere else it would be silently ignored."""
    if opt.scaling_efficiency != 1:
        raise ConfigError(
            f"scaling_efficiency is not applied to {what}",
            file=sc.path or None,
            field=f"{where}.scaling_efficiency",
            fix="fold the efficiency into your figure and remove scaling_efficiency, or give result (and "
            "tokens_per_run for training) so that measured throughput is scaled",
        )


def training_hours(
    opt: Option, sc: Scenario, cat: Catalog, where: str, results: Mapping[str, PilotResult]
) -> tuple[Figure, Figure | None, list[str], str]:
    """Hours per run and the accepted share: measured from a result file, or assumed."""
    if opt.result is None:
        if opt.hours_per_run is None:
            raise ConfigError(
                f"option {opt.name!r} names no result and no assumed hours",
                file=sc.path or None,
                field=f"{where}.hours_per_run",
                fix='add hours_per_run = <hours> or result = "<pilot result .json>"',
            )
        if opt.hours_per_run == 0:
            raise ConfigError(
                "hours_per_run must be greater than zero", file=sc.path or None, field=f"{where}.hours_per_run"
            )
        _refuse_scaling(opt, sc, where, "assumed hours_per_run")
        return _a(opt.hours_per_run, "h", "hours per run", where), None, [], ""
    res, path = _read_result(opt, sc, results)
    tr = res.training
    notes: list[str] = []
    accepted = None
    if res.errors:
        # A run cut short (disk full, an interrupted phase) is not an accepted run, whatever its summary says.
        accepted = _measured(
            0.0, "", "share of pilot runs accepted (the pilot recorded errors)", path, res, opt.result_unverified
        )
        notes.append(
            f"the pilot result recorded {len(res.errors)} error(s), so no run is priced as accepted: {res.errors[0]}"
        )
    elif tr is not None and tr.runs:
        accepted = _measured(
            tr.accepted_runs / tr.runs, "", "share of pilot runs reaching the target", path, res, opt.result_unverified
        )
    elif res.accepted is not None:
        accepted = _measured(
            1.0 if res.accepted else 0.0, "", "pilot run reached the target", path, res, opt.result_unverified
        )
    if opt.tokens_per_run is not None:
        if tr is None or not tr.tokens_per_s:
            raise InputFileError(
                "result holds no measured tokens/s",
                file=path,
                field="training.tokens_per_s",
                fix="re-run the training pilot, or drop tokens_per_run to use time to target",
            )
        joined = None
        if opt.scaling_result is not None:
            spath = str(sc.resolve(opt.scaling_result))
            joined = (handed(results, spath), spath)
        mult, notes = _device_multiplier(opt, cat, res, where, joined, path)
        tps = _measured(tr.tokens_per_s, "token/s", "measured throughput", path, res, opt.result_unverified)
        tokens = _a(opt.tokens_per_run, "token", "tokens per run", where)
        hours = (tokens / (tps * mult) / SECONDS_PER_HOUR).with_label("hours per run")
        return hours, accepted, notes, path
    if tr is None or tr.time_to_target_s is None:
        raise InputFileError(
            "result holds no time to target",
            file=path,
            field="training.time_to_target_s",
            fix="run the pilot with --target-loss, or give tokens_per_run in the option",
        )
    _refuse_scaling(opt, sc, where, "a measured time to target (it is not scaled)")
    secs = _measured(tr.time_to_target_s, "s", "time to target (olympic mean)", path, res, opt.result_unverified)
    hours = (secs / SECONDS_PER_HOUR).with_label("hours per run")
    notes += _platform_note(opt, cat, res, "its time to target, unscaled")
    if opt.scaling_result is not None:
        notes.append(f"scaling_result {opt.scaling_result} not used: a measured time to target is not scaled")
    return hours, accepted, notes, path


# --- line items --------------------------------------------------------------------------------

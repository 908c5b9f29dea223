"""Quality parity: reference outputs stored in the result, and their comparison with another platform's."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import torch

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.pilot import device as dev
from accelpilot.pilot.result import PilotResult
from accelpilot.pilot.train.loop import Trainer
from accelpilot.pilot.train.record import Context, Measurements, fig

MAX_STORED_INPUT_VALUES = 65536  # example inputs larger than this are not stored in the result


def tensor_to_jsonable(t: torch.Tensor) -> dict[str, Any]:
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "data": t.flatten().tolist()}


def tensor_from_jsonable(d: dict[str, Any]) -> torch.Tensor:
    return torch.tensor(d["data"], dtype=getattr(torch, d["dtype"])).reshape(d["shape"])


@torch.no_grad()
def reference_outputs(
    model: torch.nn.Module, inputs: Sequence[Any], device: torch.device, precision: str, k: int = 1024
) -> dict[str, Any]:
    """Outputs of ``model(*inputs)`` at ``k`` fixed positions plus the argmax per row: small enough to store."""
    model.eval()
    try:
        args = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
        with dev.autocast(device, precision):
            out = model(*args)
    finally:
        model.train()
    if not isinstance(out, torch.Tensor):
        out = out[0] if isinstance(out, (tuple, list)) else getattr(out, "logits", None)
    if not isinstance(out, torch.Tensor):
        raise ConfigError("the model's forward on example_inputs() does not return a tensor", field="--workload")
    out = out.detach().float().cpu()
    flat = out.flatten()
    idx = torch.linspace(0, flat.numel() - 1, min(k, flat.numel())).long()
    argmax = out.reshape(-1, out.shape[-1]).argmax(-1) if out.dim() >= 2 else out.round()
    return {
        "shape": list(out.shape),
        "index": idx.tolist(),
        "values": [round(float(v), 6) for v in flat[idx]],
        "argmax": [int(v) for v in argmax.flatten()[:4096]],
    }


def compare_outputs(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, float]:
    """Max/mean absolute difference of stored output values and the share of rows with the same argmax."""
    if mine["shape"] != theirs["shape"] or mine["index"] != theirs["index"]:
        raise ConfigError(
            f"outputs have shape {mine['shape']} here and {theirs['shape']} in the other result",
            field="--compare-to",
            fix="compare results of the same workload and size",
        )
    a = torch.tensor(mine["values"], dtype=torch.float64)
    b = torch.tensor(theirs["values"], dtype=torch.float64)
    diff = (a - b).abs()
    am, bm = mine["argmax"], theirs["argmax"]
    agree = sum(int(x == y) for x, y in zip(am, bm, strict=False)) / max(1, min(len(am), len(bm)))
    scale = float(b.abs().max()) or 1.0
    return {
        "max_abs_diff": float(diff.max()),
        "mean_abs_diff": float(diff.mean()),
        "max_rel_diff": float(diff.max()) / scale,
        "argmax_agreement": agree,
    }


def run_parity(
    ctx: Context, m: Measurements, trainer: Trainer, final_eval_loss: float | None, other: PilotResult | None
) -> None:
    """Store reference outputs (initial and trained weights); with ``other``, compare with its outputs."""
    precision, device = ctx.settings.precision, ctx.device
    advance = ctx.reporter.phase("quality parity (reference outputs)", 1)
    inputs = tuple(ctx.workload.example_inputs())
    stored_inputs = [tensor_to_jsonable(x) for x in inputs if isinstance(x, torch.Tensor)]
    storable = len(stored_inputs) == len(inputs) and sum(len(x["data"]) for x in stored_inputs) <= (
        MAX_STORED_INPUT_VALUES
    )
    trained = reference_outputs(trainer.model, inputs, device, precision)
    trained_state = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    trainer.reset()
    init = reference_outputs(trainer.model, inputs, device, precision)
    ref: dict[str, Any] = {
        "inputs": stored_inputs if storable else None,
        "precision": precision,
        "trained": trained,
        "init": init,
        "eval_loss": final_eval_loss,
        "note": "outputs of the eager model on example_inputs(): 'init' at the seeded initial weights "
        "(numerics parity), 'trained' after the last time-to-target run (quality parity)",
    }
    m.details["reference_outputs"] = ref
    if other is not None:
        m.details["parity"] = _compare(ctx, m, trainer, other, inputs, trained_state, final_eval_loss)
    else:
        m.unavailable["parity"] = "no --compare-to OTHER_RESULT.json given"
    with torch.no_grad():
        trainer.model.load_state_dict(trained_state)
    advance(1)


def _compare(
    ctx: Context,
    m: Measurements,
    trainer: Trainer,
    other: PilotResult,
    inputs: tuple[Any, ...],
    trained_state: dict[str, torch.Tensor],
    eval_loss: float | None,
) -> dict[str, Any]:
    precision, device = ctx.settings.precision, ctx.device
    theirs = other.details.get("reference_outputs")
    if other.kind != "training" or not theirs:
        raise InputFileError(
            "not a training result with reference outputs", file=str(ctx.cfg.compare_to), field="--compare-to"
        )
    if other.workload.name != ctx.workload.name:
        raise ConfigError(
            f"the other result is for workload {other.workload.name!r}, this run is {ctx.workload.name!r}",
            field="--compare-to",
        )
    their_inputs = tuple(tensor_from_jsonable(x) for x in theirs["inputs"]) if theirs.get("inputs") else inputs
    mine_init = reference_outputs(trainer.model, their_inputs, device, precision)  # weights are at init here
    with torch.no_grad():
        trainer.model.load_state_dict(trained_state)
    mine_trained = reference_outputs(trainer.model, their_inputs, device, precision)
    parity: dict[str, Any] = {
        "other": str(ctx.cfg.compare_to),
        "other_platform": other.platform.slug(),
        "init": compare_outputs(mine_init, theirs["init"]),
        "trained": compare_outputs(mine_trained, theirs["trained"]),
    }
    their_eval = theirs.get("eval_loss")
    if their_eval is not None and eval_loss is not None:
        parity["eval_loss_diff"] = float(Decimal(str(eval_loss)) - Decimal(str(their_eval)))
        m.figures["parity_eval_loss_diff"] = fig(
            parity["eval_loss_diff"], "", f"eval loss here minus {other.platform.slug()}"
        )
    m.figures["parity_logits_max_abs_diff"] = fig(
        parity["trained"]["max_abs_diff"], "", "trained-model outputs vs other platform (max abs)"
    )
    m.figures["parity_init_logits_max_abs_diff"] = fig(
        parity["init"]["max_abs_diff"], "", "initial-weights outputs vs other platform (max abs)"
    )
    m.figures["parity_argmax_agreement"] = fig(
        parity["trained"]["argmax_agreement"], "", "share of positions with the same top-1 output"
    )
    return parity

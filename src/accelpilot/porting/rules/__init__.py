"""The rule registry: every finding the scanner can emit names one rule here.

A rule says what kind of portability problem it is (category), which of the seed's four portability dimensions
it touches (source, model, operational, commercial), how bad it is, which target platforms it concerns, a rough
effort class, and *why* it matters on the target. The scanner's detectors only decide *where*; this table says
*what*, so a procurement reader gets the same explanation for every occurrence.

Category -> the seed's five portability-log record categories ("every device-specific code path, container
difference, unsupported operator, data movement step and operational integration"):

- ``device_code`` and ``custom_kernel`` -> *device-specific code path* (a hand-written kernel is the most
  device-specific code path there is; the port is a rewrite, which the effort class says);
- ``compile_hazard`` and ``unsupported_operator`` -> *unsupported operator* (a compile-ahead hazard is an
  operator or pattern the ahead-of-time compiler cannot lower for fixed shapes: it falls back to the CPU, breaks
  the graph or fails to compile; an unsupported operator is the measured case);
- ``container`` -> *container difference*; ``data_movement`` -> *data movement step*;
  ``operational`` -> *operational integration*.
"""

from __future__ import annotations

from accelpilot.errors import UnknownNameError, did_you_mean
from accelpilot.porting.rules.model_rules import MODEL_RULES
from accelpilot.porting.rules.ops_rules import OPS_RULES
from accelpilot.porting.rules.schema import (
    ALL,
    DIMENSIONS,
    EFFORT_RANK,
    GPU,
    NEURON,
    RECORD_CATEGORIES,
    RECORD_CATEGORY,
    SEVERITIES,
    SEVERITY_RANK,
    TARGET_ALIASES,
    TARGETS,
    Category,
    Dimension,
    Effort,
    ItemScope,
    Rule,
    Severity,
)
from accelpilot.porting.rules.source_rules import SOURCE_RULES
from accelpilot.porting.rules.stack_rules import STACK_RULES
from accelpilot.porting.rules.train_rules import TRAIN_RULES

# The registry re-exports the schema: the rest of accelpilot reads everything about rules from here.
__all__ = [
    "ALL",
    "DIMENSIONS",
    "EFFORT_RANK",
    "GPU",
    "NEURON",
    "RECORD_CATEGORIES",
    "RECORD_CATEGORY",
    "RULES",
    "SEVERITIES",
    "SEVERITY_RANK",
    "TARGETS",
    "TARGET_ALIASES",
    "Category",
    "Dimension",
    "Effort",
    "ItemScope",
    "Rule",
    "Severity",
    "get_rule",
    "resolve_targets",
]

_RULES: tuple[Rule, ...] = (*SOURCE_RULES, *MODEL_RULES, *OPS_RULES, *TRAIN_RULES, *STACK_RULES)


RULES: dict[str, Rule] = {r.id: r for r in _RULES}
assert len(RULES) == len(_RULES), "duplicate rule id"


def get_rule(rule_id: str) -> Rule:
    """The rule with this id, or an UnknownNameError with "did you mean"."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise UnknownNameError(
            f"unknown rule {rule_id!r}; {did_you_mean(rule_id, list(RULES))}",
            field="rule",
            fix="`accelpilot scan --list-rules` prints every rule id",
        ) from None


def resolve_targets(names: list[str] | tuple[str, ...] | None) -> frozenset[str] | None:
    """Map ``--target`` values (trainium, inferentia, gpu, neuron, ...) to platform names; None means all."""
    if not names:
        return None
    out: set[str] = set()
    for raw in names:
        for name in raw.split(","):
            key = name.strip().lower()
            if not key:
                continue
            if key not in TARGET_ALIASES:
                raise UnknownNameError(
                    f"unknown target {name!r}; {did_you_mean(key, list(TARGET_ALIASES))}", field="--target"
                )
            out |= TARGET_ALIASES[key]
    return frozenset(out)

"""What a rule is: its category, dimension, severity, targets, effort class and item scope."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Category = Literal[
    "device_code",
    "custom_kernel",
    "compile_hazard",
    "container",
    "data_movement",
    "operational",
    "unsupported_operator",
]
Dimension = Literal["source", "model", "operational", "commercial"]
Severity = Literal["info", "warning", "blocking"]
Effort = Literal["hours", "days", "weeks"]
# What one porting item is for a rule (log.py groups findings into items by it): one kernel, one package across
# files, one container image, one setting repeated across copies of a job file, one integration for the whole
# repository, one operator, or (the default) the rule's lines in one file.
ItemScope = Literal["kernel", "package", "image", "setting", "repo", "op", "file"]

RECORD_CATEGORIES: tuple[str, ...] = (
    "device-specific code path",
    "container difference",
    "unsupported operator",
    "data movement step",
    "operational integration",
)
RECORD_CATEGORY: dict[str, str] = {
    "device_code": "device-specific code path",
    "custom_kernel": "device-specific code path",
    "compile_hazard": "unsupported operator",
    "unsupported_operator": "unsupported operator",
    "container": "container difference",
    "data_movement": "data movement step",
    "operational": "operational integration",
}
DIMENSIONS: tuple[str, ...] = ("source", "model", "operational", "commercial")
SEVERITIES: tuple[str, ...] = ("info", "warning", "blocking")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
EFFORT_RANK: dict[str, int] = {"hours": 0, "days": 1, "weeks": 2}

# Target platforms a rule can concern. "gpu" means moving *to* a GPU (the reverse direction).
TARGETS: tuple[str, ...] = ("trainium", "inferentia", "gpu")
TARGET_ALIASES: dict[str, frozenset[str]] = {
    "trainium": frozenset({"trainium"}),
    "trn": frozenset({"trainium"}),
    "inferentia": frozenset({"inferentia"}),
    "inf": frozenset({"inferentia"}),
    "neuron": frozenset({"trainium", "inferentia"}),
    "aws": frozenset({"trainium", "inferentia"}),
    "gpu": frozenset({"gpu"}),
    "cuda": frozenset({"gpu"}),
    "nvidia": frozenset({"gpu"}),
}
NEURON = frozenset({"trainium", "inferentia"})
GPU = frozenset({"gpu"})
ALL = frozenset(TARGETS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One kind of finding. ``why`` is written for the person who reads the log, not the developer."""

    id: str
    category: Category
    dimension: Dimension
    severity: Severity
    targets: frozenset[str]
    effort: Effort
    title: str
    why: str
    item: ItemScope = "file"

    @property
    def record_category(self) -> str:
        return RECORD_CATEGORY[self.category]

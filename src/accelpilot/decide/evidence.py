"""The evidence behind a gate: figures (projected with their passport by ``figures.fig_ref``) and log findings.

A reason can say "this gate fails because of *this* number, which came from *there*".
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.figures import FigureRef


class Evidence(BaseModel):
    """What a gate rests on: figures, portability-log findings, pilot results, or the scenario's answer."""

    model_config = ConfigDict(frozen=True)

    figures: list[FigureRef] = Field(default_factory=list)
    finding_ids: list[str] = Field(default_factory=list)
    results: list[str] = Field(default_factory=list)
    scenario_field: str | None = None  # "gates.aws_production_home"
    scenario_answer: bool | None = None
    lines: list[str] = Field(default_factory=list)  # account evidence in words, each citing its file
    files: list[str] = Field(default_factory=list)  # evidence files (AWS CLI JSON) the lines rest on

    def is_empty(self) -> bool:
        return not (self.figures or self.finding_ids or self.results or self.scenario_field or self.lines)

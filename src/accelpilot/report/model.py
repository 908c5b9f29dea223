"""The report's content as plain data: one model the HTML, Markdown, JSON and terminal renderers all read.

Types only: ``report/build.py`` builds a Report from the scenario, the bill, the decision, the portability log
(optional) and pilot results (optional). Every number is a FigureRef carrying its provenance; charts are data
series here and become pictures only in a renderer. Vendor claims sit in their own list and are never combined
with anything.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.bill.model import per_output_field
from accelpilot.decide.portability import LogView
from accelpilot.decide.verdict import Decision
from accelpilot.figures import FigureRef

REPORT_SCHEMA = "accelpilot-report/1"


class Series(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    x: list[float]
    y: list[float]
    style: str = "-"  # matplotlib line style; "bar" for bar charts


class Chart(BaseModel):
    """A chart as data: the renderer draws it (matplotlib, Agg) and inlines the picture."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    type: Literal["line", "bar", "step"]
    x_label: str
    y_label: str
    series: list[Series]
    note: str = ""
    x_log: bool = False
    markers: list[tuple[float, str]] = Field(default_factory=list)  # vertical lines: (x, label)


class LineItemView(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    per: str
    figure: FigureRef


class OptionView(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    pricing: str
    instance: str | None
    accelerator: str | None
    accelerator_count: int | None
    family: str
    is_baseline: bool
    measured: bool
    result_file: str | None
    hours_per_run: FigureRef | None = None
    cost_per_run: FigureRef | None = None
    accepted_share: FigureRef
    cost_per_accepted_run: FigureRef | None = None
    cost_per_1k_accepted_requests: FigureRef | None = None
    cost_per_million_accepted_tokens: FigureRef | None = None
    monthly_cost: FigureRef
    one_off_cost: FigureRef
    maintenance_per_month: FigureRef
    total_36_months: FigureRef
    line_items: list[LineItemView]
    notes: list[str] = Field(default_factory=list)


class ComparisonView(BaseModel):
    model_config = ConfigDict(frozen=True)

    baseline: str
    candidate: str
    saving_per_run: FigureRef | None = None
    saving_percent: float | None = None
    saving_per_month: FigureRef | None = None
    one_off_cost: FigureRef
    break_even_runs: int | None = None
    break_even_months: float | None = None


class PilotFigure(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    figure: FigureRef


class SampleSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    n: int
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


class PilotView(BaseModel):
    """One pilot result file, read generically: every figure it holds, raw-sample summaries, CDF charts."""

    model_config = ConfigDict(frozen=True)

    path: str
    kind: str
    family: str
    platform: dict[str, Any]
    workload: str
    workload_factory: str = ""
    command: str = ""
    created: str
    accepted: bool | None
    figures: list[PilotFigure]
    samples: list[SampleSummary]
    charts: list[Chart]
    errors: list[str] = Field(default_factory=list)
    priced_by: list[str] = Field(default_factory=list)  # options whose hours or rates come from this file
    shown_beside: bool = False  # a measurement of the other workload kind, shown beside the bill
    throughput_basis: str = ""  # training: the ranks, nodes and accelerators behind its tokens/s (issue 25)
    # serving sweeps (report/serving.py): one row per load, the operating point, output parity
    sweep_rows: list[list[str]] = Field(default_factory=list)
    operating_point: str = ""
    parity_rows: list[list[str]] = Field(default_factory=list)


class ClaimView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    vendor: str
    text: str
    value: float | None
    unit: str
    as_of: str
    source: str
    kind: str = "vendor_claim"
    used_in_arithmetic: bool = False  # derived by build_report from Bill.claims_in_arithmetic()


class ScenarioInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    path: str
    description: str
    workload: str
    currency: str
    runs_per_month: float
    requests_per_month: float | None
    months: int
    day_rate: float
    target_platform: str
    per_output_name: str


class Report(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_id: str = REPORT_SCHEMA
    title: str
    generated: str
    accelpilot_version: str
    scenario: ScenarioInfo
    decision: Decision
    options: list[OptionView]
    comparisons: list[ComparisonView]
    charts: list[Chart]
    pilots: list[PilotView]
    portability: LogView | None
    vendor_claims: list[ClaimView]
    catalog_files: list[str]
    assumptions: list[str]
    notes: list[str] = Field(default_factory=list)

    def per_output(self, o: OptionView) -> FigureRef | None:
        """The option's cost per accepted output: the field ``bill.model.PER_OUTPUT`` names for the workload."""
        f: FigureRef | None = getattr(o, per_output_field(self.scenario.workload))
        return f

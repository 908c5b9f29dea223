"""Chart labels come from option names a user typed: the SVG must stay well-formed XML whatever they hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from accelpilot.report.charts import chart_svg
from accelpilot.report.model import Chart, Series


def test_control_characters_in_labels_leave_a_well_formed_svg() -> None:
    chart = Chart(
        id="c",
        title="t",
        type="bar",
        x_label="hours\x07",
        y_label="USD",
        series=[Series(name="a\x1b[2Jb\x00", x=[0.0], y=[1.0]), Series(name="plain", x=[0.0], y=[2.0])],
        markers=[(0.5, "mark\x0b")],
    )
    svg = chart_svg(chart)
    ET.fromstring(svg)  # raises on a control character XML 1.0 forbids
    for raw in (b"\x1b", b"\x07", b"\x00", b"\x0b"):
        assert raw not in svg

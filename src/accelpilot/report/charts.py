"""Draw the report's charts with matplotlib (Agg) and inline them as base64 SVG data URIs.

SVG inside an ``<img>`` cannot run script and its ids cannot clash with the page's, so a chart is safe to embed
whatever option names it carries; text is drawn as paths. No network, no files: the HTML stays self-contained.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from accelpilot.report.model import Chart
from accelpilot.termtext import visible

PALETTE = ("#1f5fa8", "#d9822b", "#2e8b57", "#b03a48", "#6a4c93", "#5f6b73", "#c1a11a", "#008b8b")
MAX_LABEL = 48


def _safe_text(s: str) -> str:
    """Text for matplotlib: control characters as visible escapes (XML 1.0 forbids most of them, so one in an
    option name would make the SVG unreadable), no mathtext from a user's ``$``, no legend-hiding leading
    underscore, bounded length."""
    s = visible(s).replace("$", r"\$")
    if len(s) > MAX_LABEL:
        s = s[: MAX_LABEL - 1] + "…"
    return "\u200b" + s if s.startswith("_") else s


def _figure(chart: Chart) -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "accelpilot"
    plt.rcParams["svg.fonttype"] = "path"
    fig, ax = plt.subplots(figsize=(7.6, 3.7), dpi=100)
    if chart.type == "bar":
        names = [_safe_text(s.name) for s in chart.series]
        values = [s.y[0] if s.y else 0.0 for s in chart.series]
        colours = [PALETTE[i % len(PALETTE)] for i in range(len(values))]
        bars = ax.bar(range(len(values)), values, color=colours)
        ax.set_xticks(range(len(values)))
        ax.set_xticklabels(
            names, rotation=12 if len(values) > 2 else 0, ha="right" if len(values) > 2 else "center", fontsize=8
        )
        for b, v in zip(bars, values, strict=True):
            ax.annotate(
                f"{v:,.0f}",
                (b.get_x() + b.get_width() / 2, b.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
                xytext=(0, 2),
                textcoords="offset points",
            )
    else:
        for i, s in enumerate(chart.series):
            colour = PALETTE[i % len(PALETTE)]
            if chart.type == "step":
                ax.step(s.x, s.y, where="post", color=colour, label=_safe_text(s.name), linewidth=1.6)
            else:
                ax.plot(
                    s.x,
                    s.y,
                    s.style if s.style in ("-", "--", ":", "-.") else "-",
                    color=colour,
                    label=_safe_text(s.name),
                    linewidth=1.6,
                )
        for x, label in chart.markers:
            ax.axvline(x, color="#888888", linestyle=":", linewidth=1)
            ax.annotate(
                _safe_text(label),
                (x, 1.0),
                xycoords=("data", "axes fraction"),
                rotation=90,
                va="top",
                ha="right",
                fontsize=7,
                color="#555555",
            )
        if chart.x_log:
            from matplotlib.ticker import FuncFormatter

            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        if len(chart.series) > 1 or chart.type != "step":
            ax.legend(fontsize=8, loc="best", frameon=False)
    ax.set_title(
        _safe_text(chart.title) if len(chart.title) <= MAX_LABEL else chart.title.replace("$", r"\$"),
        fontsize=10,
        loc="left",
    )
    ax.set_xlabel(_safe_text(chart.x_label), fontsize=9)
    ax.set_ylabel(_safe_text(chart.y_label), fontsize=9)
    ax.grid(True, alpha=0.25)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=8)
    fig.tight_layout()
    return fig


def chart_svg(chart: Chart) -> bytes:
    import matplotlib.pyplot as plt

    fig = _figure(chart)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    return buf.getvalue()


def chart_data_uri(chart: Chart) -> str:
    """``data:image/svg+xml;base64,...`` for an ``<img src>``."""
    return "data:image/svg+xml;base64," + base64.b64encode(chart_svg(chart)).decode("ascii")

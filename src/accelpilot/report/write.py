"""Write report.html, report.md and report.json as a set.

All three are rendered in memory and written to a temporary folder beside the report directory first; only when
every one succeeded are they moved in (rename, same filesystem). Bad input therefore leaves the report
directory as it was: no half-written file, no mix of an old HTML and a new JSON.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from accelpilot.report.model import Report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_json import render_json
from accelpilot.report.render_md import render_md

FILES = ("report.html", "report.md", "report.json")


def render_all(report: Report) -> dict[str, str]:
    return {"report.html": render_html(report), "report.md": render_md(report), "report.json": render_json(report)}


def write_report(report: Report, out_dir: Path | str) -> dict[str, Path]:
    """Render everything, then move the three files into ``out_dir`` together. Returns their paths."""
    out = Path(out_dir)
    texts = render_all(report)  # any rendering error happens before a byte is written
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        for name, text in texts.items():
            with open(tmp / name, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        out.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name in FILES:
            os.replace(tmp / name, out / name)
            paths[name] = out / name
        return paths
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

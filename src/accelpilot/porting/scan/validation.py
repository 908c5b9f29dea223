"""The parity check a port must pass (seed 000: a proof of concept shows that the destination's outputs match the
source's), as one ``parity-validation`` item per repository whose README says what runs, naming the oracle the
repository offers: the results table its README reports (accuracy, FID, PCKh, perplexity...), its tests, or
nothing (then the port records CPU outputs first). Rounds 18-27's held-out labellers list this item in 49 of 101
repositories ("no reference outputs ship", "the only oracle is the README's expected output").

The item carries no days of its own: the exit test adds the re-validation once (``REVALIDATION_DAYS``, 2 d), and
this item says against what it is done.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from accelpilot.porting.findings import VENDORED_PATH, Finding, nested_distribution
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.documents import readme_path
from accelpilot.porting.scan.entry import says_what_runs

VALIDATION = "parity-validation"
# A results-table row: a Markdown table line naming a metric, with a number on it.
_METRIC = re.compile(
    r"\b(?:acc(?:uracy)?|acc@1|top-?1|mAP|AP(?:50|75)?|FID|BLEU|ROUGE|PSNR|SSIM|perplexity|PPL|PCKh?|WER|CER|MSE|MAE"
    r"|mIoU|IoU|F1|AUC|EPE|PESQ|STOI|CLIP ?score|NLL|bpd|EM)\b",
    re.I,
)
_NUMBER = re.compile(r"\d+\.\d+")
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?/[^/]+(?:/[^/]+)*\.py|test_[^/]*\.py|[^/]*_test\.py)$")


def _results_row(text: str) -> tuple[int, str] | None:
    """(line, row) of the README's first results-table row: a ``|`` line under a header naming a metric."""
    header = False
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s.startswith("|"):
            header = False
            continue
        if _METRIC.search(s) is not None:
            header = True
        if header and _NUMBER.search(s) is not None:
            return n, s
    return None


def parity_validation(root: Path, entries: Mapping[str, str], rels: list[str]) -> list[Finding]:
    """The repository's ``parity-validation`` finding, or none when no README command or example says what runs."""
    if not says_what_runs(entries):
        return []
    found = readme_path(root)
    readme = found.name if found is not None else None
    row = _results_row((root / readme).read_text(encoding="utf-8", errors="replace")) if readme else None
    present = set(rels)
    tests = sorted(
        r
        for r in rels
        if _TEST_FILE.search(r)
        and not r.endswith("__init__.py")
        and VENDORED_PATH.search(r) is None
        and nested_distribution(r, present) is None  # a copied project's tests (Jukebox's apex/tests/) are not its own
    )
    oracle: list[str] = []
    if row is not None:
        oracle.append(f"the README's reported results ({row[1][:80]})")
    if tests:
        oracle.append(f"{len(tests)} test file{'s' if len(tests) > 1 else ''} ({tests[0]})")
    what = " and ".join(oracle) if oracle else "no results table or test in the repository: record CPU outputs first"
    file, line = (readme, row[0]) if readme and row else (tests[0], None) if tests else (readme, None)
    return [Finding.from_rule(RULES[VALIDATION], file=file, line=line, message=f"outputs to match: {what}")]

"""Accuracy of `accelpilot scan` against hand labels: porting items, precision, recall, exit-test estimate.

Reads ``benchmarks/data/scan_eval/labels.json`` (item keys a Neuron port must record, per repository, and a hand
estimate in engineer-days), scans each repository, and prints per repository: predicted porting items (those
concerning Trainium), hits, precision, recall, and the tool's exit-test engineer-days (effort classes of
``decide/exit_cost.py`` over the items, plus re-validation) against the hand estimate. Optionally
(``--installed``) it scans installed packages it has no labels for (transformers, ...) and prints their item
counts only. Targets (issue 12): precision >= 0.95, recall >= 0.90, estimate within a factor of two.

    .venv/bin/python benchmarks/scan_accuracy.py [--installed] [--show-misses]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from decimal import Decimal
from pathlib import Path

from accelpilot.decide.exit_cost import EFFORT_DAYS, REVALIDATION_DAYS
from accelpilot.porting.scan import scan_path

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "scan_eval" / "labels.json"


def _estimate(items: list) -> Decimal:
    return REVALIDATION_DAYS + sum((EFFORT_DAYS.get(i.effort, EFFORT_DAYS["days"]) for i in items), Decimal(0))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--installed", action="store_true", help="also scan installed packages (no labels)")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args()
    labels = json.loads(LABELS.read_text())["repositories"]
    head = f"{'repository':<14} {'pred':>4} {'label':>5} {'hit':>4} {'prec':>5} {'recall':>6} "
    print(head + f"{'tool days':>9} {'hand days':>9} {'ratio':>5}  not porting (apart)")
    for name, lab in labels.items():
        log = scan_path(ROOT / lab["path"], jobs=1)
        pred = [i for i in log.items if "trainium" in i.targets]
        keys = {i.key: i for i in pred}
        used: set[int] = set()
        hits = 0
        false_pos: list[str] = []
        for key in keys:
            idx = next((n for n, it in enumerate(lab["items"]) if key in it["keys"]), None)
            if idx is None or idx in used:
                false_pos.append(key + ("" if idx is None else " (duplicate)"))
            else:
                used.add(idx)
                hits += 1
        misses = [it["what"] for n, it in enumerate(lab["items"]) if n not in used]
        prec = hits / len(pred) if pred else 1.0
        rec = hits / len(lab["items"]) if lab["items"] else 1.0
        tool = _estimate(pred)
        hand = Decimal(str(lab["hand_days"]))
        apart = ", ".join(f"{n} {k}" for k, n in log.summary.not_porting.items()) or "-"
        print(
            f"{name:<14} {len(pred):>4} {len(lab['items']):>5} {hits:>4} {prec:>5.2f} {rec:>6.2f} "
            f"{float(tool):>9.2f} {float(hand):>9.2f} {float(tool / hand):>5.2f}  {apart}"
        )
        if args.show_misses:
            for k in false_pos:
                print(f"    false positive: {k}")
            for w in misses:
                print(f"    missed: {w}")
    if args.installed:
        print("\ninstalled packages (no hand labels: counts only)")
        for pkg in ("transformers", "torchvision", "diffusers", "timm", "accelerate"):
            spec = importlib.util.find_spec(pkg)
            if spec is None or spec.origin is None:
                print(f"{pkg:<14} not installed")
                continue
            log = scan_path(Path(spec.origin).parent)
            s = log.summary
            pred = [i for i in log.items if "trainium" in i.targets]
            print(
                f"{pkg:<14} files {log.files_scanned}, findings {s.total}, items {s.items} "
                f"(blocking {s.items_by_severity.get('blocking', 0)}), tool days {float(_estimate(pred)):.1f}, "
                f"not porting {dict(s.not_porting)}"
            )


if __name__ == "__main__":
    main()

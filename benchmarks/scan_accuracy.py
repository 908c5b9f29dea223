"""Accuracy of `accelpilot scan` against hand labels: porting items, precision, recall, exit-test estimate.

Reads ``benchmarks/data/scan_eval/labels.json`` (item keys a Neuron port must record, per repository, and a hand
estimate in engineer-days), scans each repository, and prints per repository: predicted porting items (those
concerning Trainium), hits, precision, recall, and the tool's exit-test engineer-days (effort classes of
``decide/exit_cost.py`` over the items, plus re-validation) against the hand estimate. Optionally
(``--installed``) it scans installed packages it has no labels for (transformers, ...) and prints their item
counts only. Targets (issue 12): precision >= 0.95, recall >= 0.90, estimate within a factor of two.

For the installed transformers there is also a hand-judged sample (``benchmarks/data/scan_eval/
transformers_sample.json``): 40 porting items drawn with a fixed seed (every severity and every rule present at
least once, the blocking items always) and 10 not-porting lines, each judged by reading the source. When the
installed version matches, the benchmark re-scans, checks each sampled key is still produced (a key no longer
produced, or produced with another rule or severity, is printed as a change) and prints the sample's precision.
A sample estimates precision only: recall needs every item labelled, which the sample does not do.
``--draw-sample`` writes a fresh, unjudged sample file to stdout (verdicts empty) for the installed version.

    .venv/bin/python benchmarks/scan_accuracy.py [--installed] [--show-misses] [--draw-sample]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from decimal import Decimal
from pathlib import Path

from accelpilot.decide.exit_cost import EFFORT_DAYS, REVALIDATION_DAYS
from accelpilot.porting.log import PortabilityLog
from accelpilot.porting.scan import scan_path

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "scan_eval" / "labels.json"
SAMPLE = ROOT / "benchmarks" / "data" / "scan_eval" / "transformers_sample.json"
SAMPLE_SEED = 20261130
SAMPLE_ITEMS = 40
SAMPLE_NOT_PORTING = 10
VERDICTS = ("real", "false_positive", "wrong_severity", "wrong_grouping")


def _estimate(items: list) -> Decimal:
    return REVALIDATION_DAYS + sum((EFFORT_DAYS.get(i.effort, EFFORT_DAYS["days"]) for i in items), Decimal(0))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson interval of a proportion k/n: how far a 40-item sample's precision can be from the whole's."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def draw_sample(log: PortabilityLog, seed: int = SAMPLE_SEED) -> tuple[list[dict], list[dict]]:
    """Seeded sample of a log's porting items (strata: each severity, each rule; blocking items always) and of
    its not-porting lines (each context at least once). Returns (items, lines) as unjudged entries."""
    rng = random.Random(seed)
    pool = sorted((i for i in log.items if "trainium" in i.targets), key=lambda i: i.key)
    chosen = {i.key: i for i in pool if i.severity == "blocking"}
    for attr in ("severity", "rule"):
        for value in sorted({getattr(i, attr) for i in pool}):
            if not any(getattr(i, attr) == value for i in chosen.values()):
                pick = rng.choice([i for i in pool if getattr(i, attr) == value])
                chosen[pick.key] = pick
    rest = [i for i in pool if i.key not in chosen]
    for pick in rng.sample(rest, max(0, SAMPLE_ITEMS - len(chosen))):
        chosen[pick.key] = pick
    items = [
        {
            "key": i.key,
            "where": f"{i.file}:{i.line}",
            "rule": i.rule,
            "severity": i.severity,
            "record_category": i.record_category,
            "verdict": "",
            "why": "",
        }
        for i in sorted(chosen.values(), key=lambda i: i.key)
    ]
    apart = sorted((f for f in log.findings if not f.porting), key=lambda f: f.fingerprint)
    lines = {
        f.fingerprint: f
        for f in (
            rng.choice([f for f in apart if (f.context or "") == c]) for c in sorted({f.context or "" for f in apart})
        )
    }
    rest_f = [f for f in apart if f.fingerprint not in lines]
    for f in rng.sample(rest_f, max(0, SAMPLE_NOT_PORTING - len(lines))):
        lines[f.fingerprint] = f
    out = [
        {
            "key": f.fingerprint,
            "where": f"{f.file}:{f.line}",
            "rule": f.rule,
            "context": f.context,
            "snippet": f.snippet,
            "verdict": "",
            "why": "",
        }
        for f in sorted(lines.values(), key=lambda f: (f.file or "", f.line or 0))
    ]
    return items, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--installed", action="store_true", help="also scan installed packages (no labels)")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--draw-sample", action="store_true", help="print a fresh unjudged transformers sample and stop")
    args = ap.parse_args()
    if args.draw_sample:
        _print_draw()
        return
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
    _sample_line()
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


def _transformers_root() -> tuple[Path, str] | None:
    spec = importlib.util.find_spec("transformers")
    if spec is None or spec.origin is None:
        return None
    import transformers  # only its version: the scan reads the files

    return Path(spec.origin).parent, str(transformers.__version__)


def _print_draw() -> None:
    found = _transformers_root()
    if found is None:
        sys.exit("transformers is not installed: nothing to sample")
    root, version = found
    items, lines = draw_sample(scan_path(root, jobs=1))
    doc = {"transformers": version, "seed": SAMPLE_SEED, "items": items, "not_porting": lines}
    print(json.dumps(doc, indent=2))


def _sample_line() -> None:
    """The hand-judged transformers sample, re-checked against a fresh scan (skipped when versions differ)."""
    found = _transformers_root()
    if found is None or not SAMPLE.exists():
        return
    root, version = found
    sample = json.loads(SAMPLE.read_text())
    if sample["transformers"] != version:
        print(f"\ntransformers sample: judged on {sample['transformers']}, installed {version}: not compared")
        return
    log = scan_path(root, jobs=1)
    items = {i.key: i for i in log.items if "trainium" in i.targets}
    lines = {f.fingerprint: f for f in log.findings if not f.porting}
    changes: list[str] = []
    # Precision is over the sampled items the scan still produces (an item no longer produced is listed below, so
    # a real one lost shows as a recall loss); a wrong_severity item now at its judged correct severity is right.
    kept: list[str] = []
    for e in sample["items"]:
        now = items.get(e["key"])
        if now is None:
            changes.append(f"no longer produced: {e['key']} (judged {e['verdict']})")
            continue
        verdict = e["verdict"]
        if (now.rule, now.severity) != (e["rule"], e["severity"]):
            fixed = verdict == "wrong_severity" and now.severity == e.get("correct_severity")
            verdict = "real" if fixed else verdict
            changes.append(
                f"changed: {e['key']} {e['rule']}/{e['severity']} -> {now.rule}/{now.severity}"
                + (" (the judged correct severity: counted real)" if fixed else f" (judged {e['verdict']})")
            )
        kept.append(verdict)
    np_ok = 0  # right and still apart, or judged wrong (porting work) and no longer apart
    for e in sample["not_porting"]:
        apart = e["key"] in lines
        np_ok += apart == (e["verdict"] == "right")
        if not apart:
            changes.append(f"not-porting line no longer apart: {e['where']} {e['rule']} (judged {e['verdict']})")
    unknown = [e["verdict"] for e in sample["items"] if e["verdict"] not in VERDICTS]
    if unknown:
        sys.exit(f"{SAMPLE}: items[].verdict {unknown[0]!r} is not one of {', '.join(VERDICTS)}")
    n = len(kept)
    real = kept.count("real")
    porting = n - kept.count("false_positive")  # severity is only judged on items that are porting work
    sev_ok = porting - kept.count("wrong_severity")
    np_verdicts = [e["verdict"] for e in sample["not_porting"]]
    if any(v not in ("right", "wrong") for v in np_verdicts):
        sys.exit(f"{SAMPLE}: not_porting[].verdict must be right or wrong")
    lo, hi = wilson(real, n)
    gone = len(sample["items"]) - n
    print(
        f"\ntransformers {version} (sample of {len(sample['items'])} items, hand-judged"
        + (f"; {n} still produced, {gone} no longer" if gone else "")
        + f"): precision {real / n:.2f} ({real} real / {n}, "
        f"95% interval {lo:.2f}-{hi:.2f}), "
        f"severity right {sev_ok / porting:.2f} ({sev_ok}/{porting} porting items), "
        f"not-porting right {np_ok}/{len(sample['not_porting'])}; a sample estimates precision only, "
        "recall cannot come from it (unsampled items and misses are not labelled)"
        + (f"; {len(changes)} sampled entries changed since judged (below): re-judge them" if changes else "")
    )
    for c in changes:
        print(f"    {c}")


if __name__ == "__main__":
    main()

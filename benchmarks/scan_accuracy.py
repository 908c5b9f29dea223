"""Accuracy of `accelpilot scan` against hand labels: porting items, precision, recall, exit-test estimate.

Reads ``benchmarks/data/scan_eval/labels.json`` (item keys a Neuron port must record, per repository, and a hand
estimate in engineer-days), scans each repository, and prints per repository: predicted porting items (those
concerning Trainium), hits, precision, recall, and the tool's exit-test engineer-days (effort classes of
``decide/exit_cost.py`` over the items, plus re-validation) against the hand estimate. Optionally
(``--installed``) it scans installed packages it has no labels for (transformers, ...) and prints their item
counts only. Targets (issue 12): precision >= 0.95, recall >= 0.90, estimate within a factor of two.

For the installed transformers there are also hand-judged samples (every ``benchmarks/data/scan_eval/
transformers_sample*.json``): 40 porting items each, drawn with a fixed seed (every severity and every rule present
at least once, the blocking items always) and 10 not-porting lines, each judged by reading the source. When the
installed version matches, the benchmark re-scans once, checks each sampled key is still produced (a key no longer
produced, or produced with another rule or severity, is printed as a change) and prints each sample's precision,
then one pooled line over all samples (a key in two samples counted once; judged differently, it counts not real)
with a 95% Wilson interval and a point estimate re-weighted by each rule family's share of the scan's items.
A sample estimates precision only: recall needs every item labelled, which a sample does not do.
``--draw-sample`` writes a fresh, unjudged sample file to stdout (verdicts empty) for the installed version;
``--seed`` picks the draw, ``--avoid FILE`` (repeatable) keeps an earlier sample's keys out of it. ``--uniform`` draws
a simple random sample instead (no strata, no forced blocking items, no ``--avoid``; the file says ``"draw":
"uniform"``, ``"drawn_at"``: the accelpilot commit it was drawn at, and ``"used_for_fixes": false``). Samples 1-2
were stratified and then used to design false-positive fixes, so their precision over the surviving items is
optimistic by construction; a uniform sample judged before any fix designed after it is an unbiased estimate (over
the sampled items the scanner still produces). Every uniform sample not used for fixes is pooled, a key once, into
the UNBIASED ESTIMATE line, printed after the pooled line; a uniform sample read to design the fixes that followed it
is printed as "uniform at <commit>, since used to design fixes: optimistic". Set ``"used_for_fixes": true``
(metadata only, never a verdict) on a sample once fixes are designed from it; when every uniform sample carries it,
no unbiased estimate is printed and the benchmark says to draw a new one.

    .venv/bin/python benchmarks/scan_accuracy.py [--installed] [--show-misses]
    .venv/bin/python benchmarks/scan_accuracy.py --draw-sample [--seed N] [--avoid SAMPLE.json] > NEW.json
    .venv/bin/python benchmarks/scan_accuracy.py --draw-sample --uniform --seed N > NEW.json
    .venv/bin/python benchmarks/scan_accuracy.py --draw-census --part K --parts N > transformers_census_K.json

A census ends the sampling: ``--draw-census`` splits every trainium item of today's scan into ``--parts`` files
(item i goes to part i mod N, so each judge gets a mix of files and rules), each judged by hand like a sample
(``transformers_census_K.json``, ``"draw": "census"``, no not-porting lines). When every part of one draw is judged
on the installed version, the CENSUS line gives the precision over all the items the scan still produces, with no
sampling interval (only the judges' own errors), and names any item produced today that no part holds.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple, NoReturn

from accelpilot.decide.exit_cost import EFFORT_DAYS, REVALIDATION_DAYS
from accelpilot.porting.items import FAMILY, FAMILY_RULES
from accelpilot.porting.log import PortabilityLog
from accelpilot.porting.scan import scan_path

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks" / "data" / "scan_eval" / "labels.json"
SAMPLE_DIR = ROOT / "benchmarks" / "data" / "scan_eval"  # every transformers_sample*.json in it is read
SAMPLE_SEED = 20261130
SAMPLE_ITEMS = 40
SAMPLE_NOT_PORTING = 10
VERDICTS = ("real", "false_positive", "wrong_severity", "wrong_grouping")


def _estimate(items: list) -> Decimal:
    """The exit test's estimate (decide/exit_cost.py): re-validation plus the midpoint of the items' effort-model
    ranges, or their effort class for an item without a range."""

    def days(i: object) -> Decimal:
        low, high = getattr(i, "days_low", 0.0), getattr(i, "days_high", 0.0)
        if high:
            return Decimal(str(low + high)) / 2
        return EFFORT_DAYS.get(getattr(i, "effort", "days"), EFFORT_DAYS["days"])

    return REVALIDATION_DAYS + sum((days(i) for i in items), Decimal(0))


def _unit(key: str) -> str:
    """An item key at the unit of porting work (issue 27): the Triton kernels of one file are one family, so a label
    written per kernel (``kernel|triton-kernel|F|name``) is compared as ``kernel|triton-kernel|F|*``."""
    parts = key.split("|")
    if len(parts) == 4 and parts[0] == "kernel" and parts[1] in FAMILY_RULES:
        return "|".join([*parts[:3], FAMILY])
    return key


def _label_units(items: list[dict]) -> list[dict]:
    """Label items with their keys at the unit of work; items whose keys meet there (two kernels of one file) are
    one item, described by both."""
    out: list[dict] = []
    for it in items:
        keys = {_unit(k) for k in it["keys"]}
        same = next((o for o in out if o["keys"] & keys), None)
        if same is None:
            out.append({"keys": keys, "what": it["what"]})
        else:
            same["keys"] |= keys
            same["what"] += "; " + it["what"]
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson interval of a proportion k/n: how far a 40-item sample's precision can be from the whole's."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def draw_sample(
    log: PortabilityLog, seed: int = SAMPLE_SEED, avoid: frozenset[str] = frozenset()
) -> tuple[list[dict], list[dict]]:
    """Seeded sample of a log's porting items (strata: each severity, each rule; blocking items always) and of
    its not-porting lines (each context at least once). Returns (items, lines) as unjudged entries. Keys in
    ``avoid`` (an earlier sample's) are never drawn again, except blocking items (always in): a stratum whose
    every key was already sampled is left to the earlier sample, so its pick is drawn at random instead."""
    rng = random.Random(seed)
    pool = sorted((i for i in log.items if "trainium" in i.targets), key=lambda i: i.key)
    chosen = {i.key: i for i in pool if i.severity == "blocking"}
    fresh = [i for i in pool if i.key not in avoid]
    for attr in ("severity", "rule"):
        for value in sorted({getattr(i, attr) for i in fresh}):
            if not any(getattr(i, attr) == value for i in chosen.values()):
                pick = rng.choice([i for i in fresh if getattr(i, attr) == value])
                chosen[pick.key] = pick
    rest = [i for i in fresh if i.key not in chosen]
    for pick in rng.sample(rest, min(len(rest), max(0, SAMPLE_ITEMS - len(chosen)))):
        chosen[pick.key] = pick
    items = _item_entries(list(chosen.values()))
    apart = sorted(
        (f for f in log.findings if not f.porting and f.fingerprint not in avoid), key=lambda f: f.fingerprint
    )
    lines = {
        f.fingerprint: f
        for f in (
            rng.choice([f for f in apart if (f.context or "") == c]) for c in sorted({f.context or "" for f in apart})
        )
    }
    rest_f = [f for f in apart if f.fingerprint not in lines]
    for f in rng.sample(rest_f, min(len(rest_f), max(0, SAMPLE_NOT_PORTING - len(lines)))):
        lines[f.fingerprint] = f
    return items, _line_entries(list(lines.values()))


def draw_uniform(log: PortabilityLog, seed: int) -> tuple[list[dict], list[dict]]:
    """Simple random sample (no strata, no forced blocking items, nothing avoided) of the log's trainium items
    and of its not-porting lines, seeded. Every item has the same chance, so the sample's precision estimates the
    population's without the composition bias of the strata (which over-represent rare rules)."""
    rng = random.Random(seed)
    pool = sorted((i for i in log.items if "trainium" in i.targets), key=lambda i: i.key)
    apart = sorted((f for f in log.findings if not f.porting), key=lambda f: f.fingerprint)
    picked = rng.sample(pool, min(len(pool), SAMPLE_ITEMS))
    picked_f = rng.sample(apart, min(len(apart), SAMPLE_NOT_PORTING))
    return _item_entries(picked), _line_entries(picked_f)


def _item_entries(chosen: list) -> list[dict]:
    return [
        {
            "key": i.key,
            "where": f"{i.file}:{i.line}",
            "rule": i.rule,
            "severity": i.severity,
            "record_category": i.record_category,
            "verdict": "",
            "why": "",
        }
        for i in sorted(chosen, key=lambda i: i.key)
    ]


def _line_entries(lines: list) -> list[dict]:
    return [
        {
            "key": f.fingerprint,
            "where": f"{f.file}:{f.line}",
            "rule": f.rule,
            "context": f.context,
            "snippet": f.snippet,
            "verdict": "",
            "why": "",
        }
        for f in sorted(lines, key=lambda f: (f.file or "", f.line or 0))
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--installed", action="store_true", help="also scan installed packages (no labels)")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--draw-sample", action="store_true", help="print a fresh unjudged transformers sample and stop")
    ap.add_argument("--seed", type=int, default=SAMPLE_SEED, help="seed of --draw-sample")
    ap.add_argument(
        "--avoid",
        type=Path,
        action="append",
        default=[],
        help="with --draw-sample: an earlier sample file whose keys are not drawn again (unless a stratum has no other)",
    )
    ap.add_argument(
        "--uniform",
        action="store_true",
        help="with --draw-sample: a simple random sample (no strata, no forced blocking items, no --avoid)",
    )
    ap.add_argument("--draw-census", action="store_true", help="print one part of a census of every item and stop")
    ap.add_argument("--part", type=int, default=1, help="with --draw-census: which part, 1..--parts")
    ap.add_argument("--parts", type=int, default=1, help="with --draw-census: how many judges share the items")
    args = ap.parse_args()
    if args.draw_census:
        if not 1 <= args.part <= args.parts:
            _bad(f"--part {args.part}: not between 1 and --parts {args.parts}; fix: give 1 <= --part <= --parts")
        _print_census(args.part, args.parts)
        return
    if args.uniform and not args.draw_sample:
        _bad("--uniform: only with --draw-sample; fix: add --draw-sample")
    if args.uniform and args.avoid:
        _bad("--uniform with --avoid: a uniform draw avoids nothing (that would bias it); fix: drop --avoid")
    if args.draw_sample:
        _print_draw(args.seed, args.avoid, uniform=args.uniform)
        return
    labels = json.loads(LABELS.read_text())["repositories"]
    head = f"{'repository':<14} {'pred':>4} {'label':>5} {'hit':>4} {'prec':>5} {'recall':>6} "
    print(head + f"{'tool days':>9} {'hand days':>9} {'ratio':>5}  not porting (apart)")
    for name, lab in labels.items():
        log = scan_path(ROOT / lab["path"], jobs=1)
        pred = [i for i in log.items if "trainium" in i.targets]
        keys = {_unit(i.key): i for i in pred}
        units = _label_units(lab["items"])
        used: set[int] = set()
        hits = 0
        false_pos: list[str] = []
        for key in keys:
            idx = next((n for n, it in enumerate(units) if key in it["keys"]), None)
            if idx is None or idx in used:
                false_pos.append(key + ("" if idx is None else " (duplicate)"))
            else:
                used.add(idx)
                hits += 1
        misses = [it["what"] for n, it in enumerate(units) if n not in used]
        prec = hits / len(pred) if pred else 1.0
        rec = hits / len(units) if units else 1.0
        tool = _estimate(pred)
        hand = Decimal(str(lab["hand_days"]))
        apart = ", ".join(f"{n} {k}" for k, n in log.summary.not_porting.items()) or "-"
        print(
            f"{name:<14} {len(pred):>4} {len(units):>5} {hits:>4} {prec:>5.2f} {rec:>6.2f} "
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


def _print_draw(seed: int, avoid_files: list[Path], uniform: bool = False) -> None:
    found = _transformers_root()
    if found is None:
        sys.exit("transformers is not installed: nothing to sample")
    root, version = found
    avoid: set[str] = set()
    for path in avoid_files:
        try:
            earlier = json.loads(path.read_text())
            avoid.update(e["key"] for e in earlier["items"] + earlier["not_porting"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            _bad(f"{path}: cannot read its items[].key / not_porting[].key to avoid ({exc}); fix: pass a sample file")
    log = scan_path(root, jobs=1)
    items, lines = draw_uniform(log, seed) if uniform else draw_sample(log, seed, frozenset(avoid))
    doc: dict[str, object] = {"transformers": version, "seed": seed}
    if uniform:
        doc["draw"] = "uniform"
    doc["drawn_at"] = _commit()
    doc["used_for_fixes"] = False  # set true once fixes are designed from this sample: it is then optimistic
    doc["items"], doc["not_porting"] = items, lines
    if avoid_files:
        doc["avoided"] = [p.name for p in avoid_files]
    print(json.dumps(doc, indent=2))


def census_part(log: PortabilityLog, part: int, parts: int) -> list[dict]:
    """Part ``part`` (1-based) of ``parts`` of every trainium item, item i of the key order going to part i mod N."""
    pool = sorted((i for i in log.items if "trainium" in i.targets), key=lambda i: i.key)
    return _item_entries([it for n, it in enumerate(pool) if n % parts == part - 1])


def _print_census(part: int, parts: int) -> None:
    found = _transformers_root()
    if found is None:
        sys.exit("transformers is not installed: nothing to take a census of")
    root, version = found
    log = scan_path(root, jobs=1)
    doc: dict[str, object] = {"transformers": version, "draw": "census", "part": part, "parts": parts}
    doc["drawn_at"] = _commit()
    doc["used_for_fixes"] = False
    doc["items"], doc["not_porting"] = census_part(log, part, parts), []
    print(json.dumps(doc, indent=2))


def _census_line(items: dict, lines: dict, version: str) -> None:
    """One line over the census parts judged on the installed version, when one draw's parts are all there."""
    paths = sorted(SAMPLE_DIR.glob("transformers_census_*.json"), key=_sample_number)
    parts = [(json.loads(p.read_text()), j) for p in paths if (j := _check_sample(p, items, lines, version))]
    if not parts:
        return
    draws = {(d.get("drawn_at"), d.get("parts")) for d, _ in parts}
    have = sorted(d.get("part") for d, _ in parts)
    (drawn_at, n), *more = sorted(draws, key=str)
    if more or have != list(range(1, (n or 0) + 1)):
        print(f"\nCENSUS incomplete: parts {have} of draws {sorted(draws, key=str)}; judge every part of one draw")
        return
    pooled, _ = _pool([j for _, j in parts])
    real = list(pooled.values()).count("real")
    gone = sum(j.drawn - len(j.kept) for _, j in parts)
    unjudged = sorted(set(items) - set(pooled))
    used = any(j.used_for_fixes for _, j in parts)
    print(
        f"\nCENSUS: transformers {version}, every trainium item drawn at {drawn_at} in {n} parts, each judged by hand "
        f"({len(pooled)} still produced"
        + (f", {gone} no longer" if gone else "")
        + "): "
        + f"precision {real / len(pooled):.3f} ({real} real / {len(pooled)}; a census: no sampling interval)"
        + "; verdicts: "
        + ", ".join(f"{v} {list(pooled.values()).count(v)}" for v in VERDICTS)
        + (
            f"; {len(unjudged)} items produced today are in no part"
            if unjudged
            else "; no item produced today unjudged"
        )
        + ("; since used to design fixes: optimistic" if used else "")
    )
    for key in unjudged:
        print(f"    in no part: {key}")
    for _, j in parts:
        for c in j.changes:
            print(f"    {j.name}: {c}")


def _commit() -> str | None:
    """The accelpilot commit a sample is drawn at (None outside a git checkout): which scanner it judges."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def _sample_number(path: Path) -> int:
    """transformers_sample.json is 1, transformers_sample_N.json is N: the order samples were drawn in."""
    m = re.search(r"_(\d+)\.json$", path.name)
    return int(m.group(1)) if m else 1


class _Judged(NamedTuple):
    """One sample re-checked against today's scan: the verdict of each still-produced item (after the
    severity rule below), the not-porting lines judged right, and what changed since judging."""

    name: str
    version: str
    drawn: int
    uniform: bool  # a simple random draw ("draw": "uniform"), not the strata
    drawn_at: str | None  # the accelpilot commit it was drawn at ("drawn_at", else the older "drawn_from")
    used_for_fixes: bool  # fixes were designed after reading it: its precision over surviving items is optimistic
    kept: dict[str, str]
    not_porting: dict[str, bool]
    changes: list[str]


def _bad(message: str) -> NoReturn:
    """Bad input (a sample file): one line on stderr naming file, field and fix, exit code 2."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def _check_sample(path: Path, items: dict, lines: dict, version: str) -> _Judged | None:
    sample = json.loads(path.read_text())
    if sample["transformers"] != version:
        print(f"\n{path.name}: judged on transformers {sample['transformers']}, installed {version}: not compared")
        return None
    unknown = [e["verdict"] for e in sample["items"] if e["verdict"] not in VERDICTS]
    if unknown:
        _bad(f"{path}: items[].verdict {unknown[0]!r} is not one of {', '.join(VERDICTS)}; fix: set one of them")
    if any(e["verdict"] not in ("right", "wrong") for e in sample["not_porting"]):
        _bad(f"{path}: not_porting[].verdict must be right or wrong; fix: set one of them")
    used = sample.get("used_for_fixes", False)
    if not isinstance(used, bool):
        _bad(f"{path}: used_for_fixes {used!r} is not true or false; fix: set true once fixes were designed from it")
    changes: list[str] = []
    # Precision is over the sampled items the scan still produces (an item no longer produced is listed below, so
    # a real one lost shows as a recall loss); a wrong_severity item now at its judged correct severity is right.
    kept: dict[str, str] = {}
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
        kept[e["key"]] = verdict
    # A not-porting line is right when it is judged right and still apart, or judged wrong and no longer apart.
    np_ok: dict[str, bool] = {}
    for e in sample["not_porting"]:
        apart = e["key"] in lines
        np_ok[e["key"]] = apart == (e["verdict"] == "right")
        if not apart:
            changes.append(f"not-porting line no longer apart: {e['where']} {e['rule']} (judged {e['verdict']})")
    drawn_at = sample.get("drawn_at") or sample.get("drawn_from")
    uniform = sample.get("draw") == "uniform"
    return _Judged(path.name, version, len(sample["items"]), uniform, drawn_at, used, kept, np_ok, changes)


def _precision(verdicts: list[str]) -> str:
    n = len(verdicts)
    real = verdicts.count("real")
    porting = n - verdicts.count("false_positive")  # severity is only judged on items that are porting work
    sev_ok = porting - verdicts.count("wrong_severity")
    lo, hi = wilson(real, n)
    return (
        f"precision {real / n if n else 0.0:.2f} ({real} real / {n}, 95% interval {lo:.2f}-{hi:.2f}), "
        f"severity right {sev_ok / porting if porting else 0.0:.2f} ({sev_ok}/{porting} porting items)"
    )


def _sample_line() -> None:
    """Every hand-judged transformers sample, re-checked against one fresh scan (skipped when versions differ),
    one line each, then one pooled line over all of them (a key in two samples counted once)."""
    found = _transformers_root()
    paths = sorted(SAMPLE_DIR.glob("transformers_sample*.json"), key=_sample_number)
    if found is None or not paths:
        return
    root, version = found
    log = scan_path(root, jobs=1)
    items = {i.key: i for i in log.items if "trainium" in i.targets}
    lines = {f.fingerprint: f for f in log.findings if not f.porting}
    judged = [j for j in (_check_sample(p, items, lines, version) for p in paths) if j is not None]
    for j in judged:
        gone = j.drawn - len(j.kept)
        np_right = sum(j.not_porting.values())
        how = f"uniform at {j.drawn_at or 'an unrecorded commit'}" if j.uniform else "stratified"
        how += ", since used to design fixes" if j.used_for_fixes else ""
        print(
            f"\ntransformers {version}, {j.name} ({how}; sample of {j.drawn} items, hand-judged"
            + (f"; {len(j.kept)} still produced, {gone} no longer" if gone else "")
            + f"): {_precision(list(j.kept.values()))}, not-porting right {np_right}/{len(j.not_porting)}"
            + (f"; {len(j.changes)} sampled entries changed since judged (below): re-judge them" if j.changes else "")
        )
        for c in j.changes:
            print(f"    {c}")
    if len(judged) >= 2:
        _pooled_line(judged, items, version)
    _unbiased_lines([j for j in judged if j.uniform])
    _census_line(items, lines, version)


def _unbiased_lines(uniform: list[_Judged]) -> None:
    """Only uniform samples not yet read to design fixes estimate today's scanner without bias (over the sampled items
    it still produces); the others were read to design the fixes after them, so their precision over the items that
    survived those fixes is optimistic. Several such samples are pooled (a key once), whatever commit each was drawn
    at: no fix since was designed from any of them."""
    if not uniform:
        return
    fresh = [j for j in uniform if not j.used_for_fixes]
    for j in uniform:
        if j.used_for_fixes:
            print(
                f"{j.name}: uniform at {j.drawn_at or 'an unrecorded commit'}, since used to design fixes: optimistic: "
                f"{_precision(list(j.kept.values()))}; verdicts: {_counts(j)}"
            )
    if not fresh:
        print(
            "NO UNBIASED ESTIMATE: every uniform sample has been used to design fixes; draw and judge a new one "
            "(--draw-sample --uniform --seed N) before quoting a precision"
        )
        return
    pooled, disagree = _pool(fresh)
    names = " + ".join(j.name for j in fresh)
    which = f"{names} alone" if len(fresh) == 1 else f"{names} pooled ({len(pooled)} distinct still-produced items)"
    print(
        f"UNBIASED ESTIMATE: {which} (uniform draw{'s' if len(fresh) > 1 else ''} at "
        f"{', '.join(sorted({j.drawn_at or 'an unrecorded commit' for j in fresh}))}, over all trainium items, "
        f"judged before any fix designed after "
        f"{'them' if len(fresh) > 1 else 'it'}; every other sample was stratified or has been used to design fixes, "
        f"so they and the pooled line are optimistic): {_precision(list(pooled.values()))}; verdicts: "
        + ", ".join(f"{v} {list(pooled.values()).count(v)}" for v in VERDICTS)
    )
    for d in disagree:
        print(f"    {d}")


def _counts(j: _Judged) -> str:
    return ", ".join(f"{v} {list(j.kept.values()).count(v)}" for v in VERDICTS)


def _pooled_line(judged: list[_Judged], items: dict, version: str) -> None:
    """One line over all samples, a key in two samples counted once."""
    # Pooled: each still-produced key once. Two samples that judged one key differently are printed, and the key
    # counts as real only when every sample judged it so (the stricter verdict, so pooling cannot flatter).
    pooled, disagree = _pool(judged)
    np_pooled: dict[str, bool] = {}
    for j in judged:
        for key, ok in j.not_porting.items():
            np_pooled[key] = np_pooled.get(key, True) and ok
    shared = sum(len(j.kept) for j in judged) - len(pooled)
    weighted, left_out = _family_weighted(pooled, items)
    print(
        f"transformers {version}, all {len(judged)} samples pooled ({len(pooled)} distinct still-produced items"
        + (f", {shared} shared counted once" if shared else "")
        + f"): {_precision(list(pooled.values()))}, not-porting right {sum(np_pooled.values())}/{len(np_pooled)}; "
        f"weighted by each rule family's share of today's {len(items)} items: {weighted:.2f}"
        + (f" ({left_out} items of unsampled families left out)" if left_out else "")
        + "; samples estimate precision only, recall cannot come from them (unsampled items and misses are not "
        "labelled)"
    )
    for d in disagree:
        print(f"    {d}")


def _pool(judged: list[_Judged]) -> tuple[dict[str, str], list[str]]:
    """Each still-produced key once; a key judged differently counts with the stricter (not real) verdict."""
    pooled: dict[str, str] = {}
    disagree: list[str] = []
    for j in judged:
        for key, verdict in j.kept.items():
            before = pooled.get(key)
            if before is not None and before != verdict:
                disagree.append(f"judged differently across samples: {key} ({before} / {verdict}): counted not real")
                pooled[key] = verdict if before == "real" else before
            elif before is None:
                pooled[key] = verdict
    return pooled, disagree


def _family_weighted(pooled: dict[str, str], items: dict) -> tuple[float, int]:
    """Precision re-weighted by rule family (the key's second part): the strata pick every rule at least once,
    so rare families are over-represented in a sample; weighting each family's sampled precision by its share of
    the scan's items corrects that. Returns (estimate, items in families no sample reached). No interval: a
    family holds a handful of sampled items, so this is a point estimate beside the pooled one, not a finding."""
    real: dict[str, list[bool]] = {}
    for key, verdict in pooled.items():
        real.setdefault(key.split("|")[1], []).append(verdict == "real")
    counts: dict[str, int] = {}
    for key in items:
        counts[key.split("|")[1]] = counts.get(key.split("|")[1], 0) + 1
    covered = {f: n for f, n in counts.items() if f in real}
    total = sum(covered.values())
    est = sum(n * sum(real[f]) / len(real[f]) for f, n in covered.items()) / total if total else 0.0
    return est, sum(counts.values()) - total


if __name__ == "__main__":
    main()

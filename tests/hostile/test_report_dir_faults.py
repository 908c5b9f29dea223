"""The report directory under faults: SIGKILL at several points, two writers at once, --out an existing file, a
read-only folder, a full disk. Readers see the old set or the new set, never a mix; nothing outside --out changes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.hostile.hostile_kit import child_env, one_error_line

from accelpilot.procedure import bundled_scenario, make_report
from accelpilot.report.write import FILES, write_report

Cli = Callable[..., tuple[int, str, str]]

# A child that writes report sets into OUT forever, alternating two titles, so a kill lands at a random point of
# render / write / fsync / swap / cleanup. Each set's three files carry the same marker.
WRITER = textwrap.dedent(
    """
    import sys, itertools
    from pathlib import Path
    from accelpilot.procedure import make_report, bundled_scenario
    from accelpilot.report.write import write_report
    out = Path(sys.argv[1]); tag = sys.argv[2]
    base = make_report(bundled_scenario())
    reps = [base.model_copy(update={"title": f"set-{tag}-{i}"}) for i in range(2)]
    print("ready", flush=True)
    for i in itertools.count():
        write_report(reps[i % 2], out)
    """
)


def _titles(out: Path) -> set[str]:
    """The marker of each of the three files, read through one open of the directory (as a reader that opens
    the report folder once sees it); one value means a consistent set."""
    dfd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:

        def read(name: str) -> str:
            fd = os.open(name, os.O_RDONLY, dir_fd=dfd)
            with os.fdopen(fd, encoding="utf-8") as fh:
                return fh.read()

        html, md, js = read("report.html"), read("report.md"), json.loads(read("report.json"))
    finally:
        os.close(dfd)
    sets = ("set-a-0", "set-a-1", "set-b-0", "set-b-1")
    in_json = js["title"] if js["title"] in sets else "seed"
    in_html = [t for t in sets if t in html] or ["seed"]
    in_md = [t for t in sets if f"# {t}" in md] or ["seed"]
    return {in_json, *in_html, *in_md}


def _writer(out: Path, tag: str) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(out), tag], stdout=subprocess.PIPE, text=True, env=child_env()
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


@pytest.mark.slow
def test_sigkill_at_several_points_leaves_a_whole_set(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    write_report(make_report(bundled_scenario()), out)  # an old set to keep
    for delay in (0.0, 0.02, 0.05, 0.11, 0.23, 0.47):  # several points of the render/write/fsync/swap cycle
        p = _writer(out, "a")
        time.sleep(delay)
        p.kill()
        p.wait()
        assert sorted(os.listdir(out)) == sorted(FILES)
        assert len(_titles(out)) == 1, "a kill left a mix of two sets"
    # A kill may leave hidden staging folders beside --out (never inside it, never a visible file).
    left = sorted(set(os.listdir(tmp_path)) - {"rep"})
    assert all(n.startswith(".rep.") and n.endswith((".new", ".old")) for n in left), left


@pytest.mark.slow
def test_two_writers_at_once_never_mix(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    a, b = _writer(out, "a"), _writer(out, "b")
    try:
        seen: set[str] = set()
        reads = 0
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and ({t.split("-")[1] for t in seen} != {"a", "b"} or reads < 50):
            if out.is_dir():
                try:
                    titles = _titles(out)
                except FileNotFoundError:  # the set we opened was replaced and removed while we read: retry
                    continue
                assert len(titles) == 1, titles
                seen |= titles
                reads += 1
            time.sleep(0.005)
        assert a.poll() is None and b.poll() is None, "a writer died"
    finally:
        for p in (a, b):
            p.send_signal(signal.SIGKILL)
            p.wait()
    assert {t.split("-")[1] for t in seen} == {"a", "b"}  # both really wrote into the one folder


def test_report_out_an_existing_file_is_refused_before_reading(cli: Cli, good: dict[str, Path], tmp_path: Path) -> None:
    f = tmp_path / "taken"
    f.write_text("mine", encoding="utf-8")
    code, _, err = cli("report", "--scenario", tmp_path / "missing.toml", "--out", f)
    assert code == 2
    assert one_error_line(err) == (
        f"accelpilot: error: {f}: --out: exists and is not a directory (fix: name a new or empty folder)"
    )
    assert f.read_text(encoding="utf-8") == "mine"


def test_report_out_a_folder_of_other_files_is_refused(cli: Cli, good: dict[str, Path]) -> None:
    code, _, err = cli("report", "--scenario", good["scenario"], "--out", good["dir"])
    assert code == 2
    assert f"{good['dir']}: --out: holds files that are not part of a report" in one_error_line(err)
    assert sorted(p.name for p in good["dir"].iterdir()) == ["log.json", "scenario.toml", "serve.json", "trn.json"]


def test_pilot_out_an_existing_file_is_refused_before_any_pilot(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "taken"
    f.write_text("mine", encoding="utf-8")
    t = time.perf_counter()
    code, _, err = cli("pilot", "--out", f)
    assert code == 2
    assert f"{f}: --out: exists and is not a directory" in one_error_line(err)
    assert time.perf_counter() - t < 30  # refused up front, not after a 40 s run
    assert sorted(os.listdir(tmp_path)) == ["taken"]


@pytest.mark.parametrize("command", ["report", "pilot"])
def test_read_only_folder_is_refused_before_the_run(
    cli: Cli, good: dict[str, Path], tmpfs: Callable[..., Path], command: str
) -> None:
    ro = tmpfs("ro", readonly=True)  # root ignores file modes: a read-only mount is what refuses root
    args = ["--scenario", good["scenario"], "--out", ro / "rep"]
    if command == "pilot":
        args += ["--skip-train", "--skip-serve", "--skip-scan"]
    code, _, err = cli(command, *args)
    assert code == 2
    assert f"{ro / 'rep'}: --out: cannot write in {ro} (Read-only file system)" in one_error_line(err)


def test_disk_full_while_writing_is_one_line_and_keeps_the_old_set(
    cli: Cli, good: dict[str, Path], tmpfs: Callable[..., Path]
) -> None:
    small = tmpfs("small", size="2m")
    out = small / "rep"
    code, _, err = cli("report", "--scenario", good["scenario"], "--out", out)
    if code != 0:
        pytest.skip(f"the report does not fit 2m even once: {err}")
    before = {n: (out / n).read_bytes() for n in FILES}
    stat = os.statvfs(small)
    free = stat.f_bavail * stat.f_frsize
    (small / "filler").write_bytes(b"x" * max(0, free - 16 * 1024))  # leave less than one report
    code, _, err = cli("report", "--scenario", good["scenario"], "--results", good["trn"], "--out", out)
    assert code == 2
    assert f"{out}: --out: cannot write the report (No space left on device)" in one_error_line(err)
    assert {n: (out / n).read_bytes() for n in FILES} == before  # the old set, whole
    assert sorted(os.listdir(small)) == ["filler", "rep"]  # the partial staging folder was removed


def test_disk_full_during_pilot_scan_log_is_one_line(
    cli: Cli, good: dict[str, Path], tmpfs: Callable[..., Path]
) -> None:
    small = tmpfs("tiny", size="64k")
    stat = os.statvfs(small)
    (small / "filler").write_bytes(b"x" * max(0, stat.f_bavail * stat.f_frsize - 8 * 1024))
    repo = good["dir"] / "repo"
    repo.mkdir()
    (repo / "t.py").write_text("import torch\n" + "x = torch.ones(1).cuda()\n" * 400, encoding="utf-8")
    code, _, err = cli(
        "pilot", "--repo", repo, "--scenario", good["scenario"], "--skip-train", "--skip-serve", "--out", small / "rep"
    )
    assert code == 2
    line = one_error_line(err)
    assert "No space left on device" in line and "--out" in line
    assert not list((small / "rep" / "inputs").glob("*.tmp"))  # no partial log left behind


@pytest.mark.parametrize("die_at", [1, 2, 3])
def test_a_kill_at_any_rename_leaves_one_whole_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, die_at: int
) -> None:
    """Deterministic twin of the SIGKILL test: the process 'dies' (SystemExit) at the n-th rename of the write.

    Renaming the three files one by one (before issue 11) left a new report.html beside the old .md and .json.
    """
    import accelpilot.report.write as w

    base = make_report(bundled_scenario())
    out = tmp_path / "rep"
    write_report(base, out)
    calls = 0

    def dying(real: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kw: object) -> object:
            nonlocal calls
            calls += 1
            if calls == die_at:
                raise SystemExit("killed")
            return real(*args, **kw)

        return call

    monkeypatch.setattr(os, "replace", dying(os.replace))
    monkeypatch.setattr(os, "rename", dying(os.rename))
    if hasattr(w, "_exchange"):
        monkeypatch.setattr(w, "_exchange", dying(w._exchange))
    with contextlib.suppress(SystemExit):  # fewer renames than die_at: the write simply completes
        write_report(base.model_copy(update={"title": "set-a-0"}), out)
    monkeypatch.undo()
    assert sorted(os.listdir(out)) == sorted(FILES)
    assert len(_titles(out)) == 1, _titles(out)

"""Command-line entry point: parse, call one function, render. User errors exit 2 with one line."""

from __future__ import annotations

import gc
import os
import signal
import sys

# Each module registers its commands on import.
from accelpilot.cli import (  # noqa: F401
    bill,
    collect,
    evidence,
    export,
    launch,
    pilot,
    prices,
    report,
    run_serve,
    run_train,
    scan,
    schema,
    spend,
)
from accelpilot.cli.app import app
from accelpilot.errors import Interrupted, UserError

INTERRUPTED_LINE = "accelpilot: interrupted (Ctrl-C); nothing partial was kept: files already written are whole\n"


def _was_interrupted(exc: BaseException) -> bool:
    """True when Ctrl-C is somewhere in ``exc``'s chain (``raise ... from None`` keeps it as the context)."""
    seen: set[int] = set()
    cur: BaseException | None = exc.__cause__ or exc.__context__
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, KeyboardInterrupt) or type(cur).__name__ == "InterruptException":
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def main(argv: list[str] | None = None) -> int:
    """Run the app; a UserError prints one line on stderr and exits 2, never a traceback."""
    try:
        rv = app(args=argv, prog_name="accelpilot", standalone_mode=False)
    except UserError as exc:
        if exc.exit_code == 130:  # a command's own Ctrl-C line (TrainingInterrupted: what was cut short, what kept)
            sys.stderr.write(f"accelpilot: {exc}\n")
            return 130
        if _was_interrupted(exc):  # a reader turned Ctrl-C (duckdb's InterruptException) into a bad-input line
            sys.stderr.write(INTERRUPTED_LINE)
            return 130
        sys.stderr.write(f"accelpilot: error: {exc}\n")
        return exc.exit_code
    except Interrupted as exc:
        sys.stderr.write(f"accelpilot: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED_LINE)
        return 130
    except SystemExit as exc:  # typer/click exit paths
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except Exception as exc:
        # typer vendors click in recent releases; match its exceptions by name, not by import path.
        names = {c.__name__ for c in type(exc).__mro__}
        if "ClickException" in names:
            exc.show()  # type: ignore[attr-defined]
            return int(getattr(exc, "exit_code", 2)) or 2
        if "Abort" in names:
            if isinstance(exc.__cause__, KeyboardInterrupt):  # click turns Ctrl-C into Abort
                sys.stderr.write(INTERRUPTED_LINE)
                return 130
            return 1
        raise
    if rv == 130:
        # typer turns a Ctrl-C no command caught into Exit(130) and, outside standalone mode, *returns* 130 (issue 28):
        # dropping it exited 0 with no word. Commands that keep something partial raise Interrupted with their own line.
        sys.stderr.write(INTERRUPTED_LINE)
        return 130
    return 0


def entry() -> None:
    code = main()
    if code == 130:
        # Ctrl-C was answered with its line and what is kept is written. A second pending SIGINT turned 130 into death
        # by signal (-2) during teardown: ignore it from here on.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if "mlperf_loadgen" in sys.modules:
            # LoadGen's C++ threads, cut mid-test, abort the interpreter's teardown (std::bad_function_call, -6).
            # Only there is teardown skipped: elsewhere it joins worker pools whose pipes the caller is reading.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
    # The process ends here. The collector's passes at exit would walk every object still alive (modules, classes:
    # most of a short command's objects) to free next to nothing, ~1.5% of `bill --json` at 1,000 options (issue 10):
    # leave them to the interpreter's teardown, which frees them by reference counting as before.
    gc.freeze()
    # CPython 3.11 sets a process-wide "KeyboardInterrupt went unhandled" flag whenever Ctrl-C lands inside an exec()
    # of a string (dataclasses, typing and torch build code that way while importing), even when main() caught it: at
    # exit the interpreter then killed itself with SIGINT (-2) instead of returning 130, about one Ctrl-C in six in
    # the first second of `run train`. An exec() of a string resets that flag on entry.
    exec("pass")
    sys.exit(code)

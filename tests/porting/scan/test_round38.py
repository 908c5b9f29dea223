"""Round 38's fixes (DARTS): a README's one-line ``cd DIR && python x.py`` runs x.py in DIR, and a source that does
not parse because of old Python syntax (``.cuda(async=True)``) is scanned repaired, its old lines a ``stack-upgrade``
item of Python that blocks where the default path runs or imports the file."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.entry import cd_commands
from accelpilot.porting.scan.old_syntax import repair

README = """# DARTS

## Architecture search
```
cd cnn && python train_search.py --unrolled     # for conv cells on CIFAR-10
cd rnn && python train_search.py --unrolled     # for recurrent cells on PTB
```

## Architecture evaluation
```
cd cnn && python train.py --auxiliary
```
"""

SEARCH = "import torch\n\n\ndef train(x, y):\n    y = y.cuda(async=True)\n    return x\n"


def test_a_one_line_cd_runs_the_command_in_that_folder_and_the_next_line_starts_at_the_root() -> None:
    present = {"cnn/train_search.py", "rnn/train_search.py", "cnn/train.py"}
    entries, _ = cd_commands(README, present)
    assert sorted(entries) == ["cnn/train_search.py", "rnn/train_search.py"]  # not cnn/train.py: an evaluation


def test_old_python_syntax_is_repaired_scanned_and_blocks_where_the_default_path_runs_it(tmp_path: Path) -> None:
    """``cnn/train_search.py`` (a README command) does not parse on Python 3.7 and later (``.cuda(async=True)``):
    it is scanned as repaired (``non_blocking=True``), so its ``.cuda()`` is a finding on its own line, and the line
    is an import-time ``stack-upgrade`` line of Python that blocks. Near misses: the same syntax in a file no command
    runs (``cnn/train.py``, under an evaluation heading) is a warning line, and a file broken some other way
    (``rnn/``) stays a skip."""
    root = write_tree(
        tmp_path,
        {
            "README.md": README,
            "cnn/train_search.py": SEARCH,
            "cnn/train.py": SEARCH,
            "rnn/train_search.py": "import torch\n\n\ndef broken(:\n    return torch.zeros(1).cuda()\n",
        },
    )
    log = scan_path(root, jobs=1)
    lines = sorted((f.file, f.line, f.severity) for f in log.findings if f.rule == "stack-upgrade")
    assert lines == [("cnn/train.py", 5, "warning"), ("cnn/train_search.py", 5, "blocking")]
    hit = next(f for f in log.findings if f.rule == "stack-upgrade" and f.file == "cnn/train_search.py")
    assert "`async`/`await` as a name" in hit.message and hit.message.endswith("SyntaxError on Python 3")
    assert (hit.reason or "").startswith("entry point cnn/train_search.py (README: `python train_search.py")
    assert ("cnn/train_search.py", 5) in {(f.file, f.line) for f in log.findings if f.rule == "cuda-call"}
    assert {s.path for s in log.skipped} == {"rnn/train_search.py"}


def test_repair_rewrites_only_the_old_forms() -> None:
    fixed = repair("x = y.cuda(async=True)\nprint 'hi'\ntry:\n    pass\nexcept ValueError, e:\n    pass\n")
    assert fixed is not None
    text, fixes = fixed
    assert text.splitlines()[:5] == [
        "x = y.cuda(non_blocking=True)",
        "pass",
        "try:",
        "    pass",
        "except ValueError as e:",
    ]
    assert [ln for ln, _, _ in fixes] == [1, 2, 5]
    assert repair("x = 1\n") is None  # parses as it is
    assert repair("def f(:\n    pass\n") is None  # another kind of syntax error

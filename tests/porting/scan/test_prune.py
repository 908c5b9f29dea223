"""Pruning must never change what is found: pruned and full parses agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_python
from accelpilot.porting.scan.prune import trigger_lines
from accelpilot.porting.scan.units import outside_docstrings, parse_unit, string_spans, top_units, units

FIXTURES = Path(__file__).parent.parent / "fixtures"
REPO = FIXTURES / "repo"
# cpp_extension builders and load() (triggers only in files naming cpp_extension), launches of kernels
SOURCES = [
    *sorted(REPO.glob("*.py")),
    *sorted((FIXTURES / "prune_ext").glob("*.py")),
    *sorted((FIXTURES / "extensions").rglob("*.py")),
    *sorted((FIXTURES / "launches").rglob("*.py")),
]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_pruned_scan_equals_full_parse(path: Path) -> None:
    src = path.read_bytes()
    # everything but the snippet (filled later from the source): rule, line, message, subject, reach context
    pruned = sorted((r, ln, m, str(sub), str(ctx)) for r, ln, m, _, sub, ctx in scan_python(src))
    full = sorted((r, ln, m, str(sub), str(ctx)) for r, ln, m, _, sub, ctx in scan_python(src, prune=False))
    assert pruned == full


def test_block_boundary_fallback_on_column0_string() -> None:
    # A column-0 line inside a triple-quoted string splits blocks wrongly; the scanner falls back to a full parse.
    src = 'import torch\nX = """\nclass Fake:\n"""\ndef f(x):\n    return x.cuda()\n'
    assert [(f[0], f[1]) for f in scan_python(src)] == [("cuda-call", 6)]


def _methods(n: int) -> str:
    """Enough plain methods to take a class past the size at which its members are parsed one by one."""
    return "".join(
        f"    def m{i}(self, x):\n        return x + {i}  # padding padding padding padding\n" for i in range(n)
    )


def test_docstring_lines_at_block_indentation_are_no_block_starts() -> None:
    # "Args:" at column 4 of a class docstring and prose at column 0 of the module docstring are inside strings: the
    # units holding the trigger parse on their own (no fallback to the whole file) and find what the full parse does;
    # a trigger in the decorator parses the class line with its first statement (the docstring), never alone.
    src = (
        '"""Module doc.\nFile utilities: mentions torch.compile(model) in prose.\n"""\nimport torch\n\n\n'
        '@auto_docstring(checkpoint="nvidia/big")\nclass Big(torch.nn.Module):\n    r"""\n    Args:\n        x: uses cuda in prose\n    """\n\n'
        + _methods(40)
        + "    def forward(self, x):\n        return x.cuda()\n"
    )
    data = src.encode()
    hits = trigger_lines(data)
    for u in units(data, hits):
        parse_unit(data, u)  # raises SyntaxError if a boundary fell inside a docstring
    pruned = [(f[0], f[1], f[5]) for f in scan_python(src)]
    assert pruned == [(f[0], f[1], f[5]) for f in scan_python(src, prune=False)]
    assert ("cuda-call", src.count("\n"), None) in pruned


def test_a_large_class_under_a_dispatcher_decorator_keeps_its_context_in_every_member() -> None:
    # The decorator makes the whole body the eager reference of a dispatched forward: a member parsed alone (inside a
    # dummy class) would lose that context, so such a class is parsed whole.
    src = (
        "import torch\nfrom transformers.integrations import use_experts_implementation\n\n\n"
        "@use_experts_implementation\nclass Experts(torch.nn.Module):\n"
        + _methods(40)
        + "    def forward(self, x):\n        hit = torch.nonzero(x)\n        return hit\n"
    )
    assert len(src) > 2000
    pruned = sorted((f[0], f[1], str(f[5])) for f in scan_python(src))
    assert pruned == sorted((f[0], f[1], str(f[5])) for f in scan_python(src, prune=False))
    assert ("data-dependent-op", src.count("\n") - 1, "reference-fallback") in pruned


def test_a_comparison_sign_inside_a_string_of_a_list_is_no_mask_trigger() -> None:
    src = (
        "import torch\n"
        'SPECIAL = ["<unk>", "<pad>", "</s>"]\n'  # 2: "<" in strings: no boolean-mask candidate
        'def f(x, tok, y):\n    a = x[tok == "<s>"]\n'  # 4: a comparison before the string: kept
        '    b = x["<" == y]\n'  # 5: the first "<" is in a string, a comparison follows: kept
        '    c = x[y["<"] > 0]\n'  # 6: the string sits in a nested index: kept
        "    return a, b, c\n"
    )
    assert trigger_lines(src.encode()) == [1, 4, 5, 6]
    pruned = sorted((f[0], f[1]) for f in scan_python(src))
    assert pruned == sorted((f[0], f[1]) for f in scan_python(src, prune=False))
    assert [ln for r, ln in pruned if r == "boolean-mask-index"] == [4, 5, 6]


def test_a_concat_in_a_loop_triggers_only_when_it_names_the_assigned_sequence() -> None:
    src = (
        "import torch\n"
        "def gen(seq, steps, a, b):\n"
        "    for _ in range(steps):\n"
        "        out = torch.cat([a, b], dim=-1)\n"  # 4: a one-off join, not the sequence: no trigger
        "        seq = torch.cat(\n            [seq, out[:, -1:]], dim=-1\n        )\n"  # 5: grows seq: kept
        "        self.cache = torch.cat((self.cache, out))\n"  # 8: grows self.cache (last part named): kept
        "    return seq\n"
    )
    assert trigger_lines(src.encode()) == [1, 5, 8]
    pruned = sorted((f[0], f[1]) for f in scan_python(src))
    assert pruned == sorted((f[0], f[1]) for f in scan_python(src, prune=False))
    assert [ln for r, ln in pruned if r == "growing-sequence"] == [5, 8]


def test_triple_quotes_in_a_comment_or_a_one_line_string_open_nothing_and_an_escaped_one_closes_nothing() -> None:
    data = b'x = \'"""\'  # and """ here\ny = """real \\""" text"""\n'
    (o, c), *more = string_spans(data)
    assert not more
    assert data[o:c] == b'real \\""" text'


DOCSTRINGS = (
    '"""Module doc: call torch.compile(model) and nvidia-smi in prose."""\n'  # 1: the file's docstring: dropped
    "import subprocess\n\n\n"
    "def launch():\n"
    '    """Runs with CUDA_VISIBLE_DEVICES=0, in prose."""\n'  # 6: a def's docstring: dropped
    "    script = (\n"
    '        """\n'  # 8: a string inside parentheses is a value, not a docstring
    "nvidia-smi\n"  # 9: kept
    '"""\n'
    "    )\n"
    "    return subprocess.run(script)\n\n\n"
    "CONFIG = {\n"
    '    "cmd":\n'
    '        """nvidia-smi -L"""\n'  # 17: a dict value after a line ending in ":": kept
    "}\n"
    "X = 1\n"
    '"""Attribute docstring naming nvidia-smi."""\n'  # 20: after a statement: kept (the lexical test is unsure)
    "def run():\n"
    '    """nvidia-smi""".split()\n'  # 22: a string a call reads, not a bare string: kept
)


def test_trigger_lines_in_docstrings_are_dropped_and_string_values_kept() -> None:
    data = DOCSTRINGS.encode()
    hits = trigger_lines(data)
    assert {1, 6, 9, 17, 20, 22} <= set(hits)
    kept = outside_docstrings(data, hits, string_spans(data))
    assert set(hits) - set(kept) == {1, 6}
    pruned = sorted((f[0], f[1]) for f in scan_python(DOCSTRINGS))
    assert pruned == sorted((f[0], f[1]) for f in scan_python(DOCSTRINGS, prune=False))
    assert {("nvidia-smi", 8), ("nvidia-smi", 17), ("nvidia-smi", 22)} <= set(pruned)


def test_top_units_are_the_whole_top_level_blocks_holding_the_lines() -> None:
    src = (
        "import torch\n\n\n"
        "@dataclass\nclass A:\n    x: int = 0\n\n    def f(self):\n        return self.x\n\n\n"  # 4-9
        "class B:\n    y = 1\n\n\n"  # 12-13
        "def g():\n    return 2\n"  # 16-17
    )
    data = src.encode()
    got = top_units(data, [9, 16], string_spans(data))
    assert [(u[0], data[u[1] : u[2]].split(b"\n")[0]) for u in got] == [(4, b"@dataclass"), (16, b"def g():")]
    assert [type(st).__name__ for u in got for st in parse_unit(data, u).body] == ["ClassDef", "FunctionDef"]

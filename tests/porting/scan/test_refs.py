"""Across files (issue 12): a kernel's launches and the imports of it, and the importers of a module built by
torch.utils.cpp_extension, are lines of that kernel's item."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.refs import Index

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _items(root: Path) -> list[tuple[str, str, list[tuple[str | None, int | None]]]]:
    return [(i.key, i.severity, [(ln.file, ln.line) for ln in i.lines]) for i in scan_path(root, jobs=1).items]


def test_launches_and_imports_of_a_kernel_fold_into_its_item() -> None:
    log = scan_path(FIXTURES / "launches", jobs=1)
    assert _items(FIXTURES / "launches") == [
        (
            "kernel|triton-kernel|pkg/kernels/|*",  # the family named by its folder
            "blocking",
            [
                # the tree's dependency on triton goes with its kernels' port (``import triton.runtime.jit`` is a
                # dependency on triton, not the definition of a kernel called "triton")
                ("other/jit_import.py", 1),
                # a @triton.jit helper file no op imports joins the family of its folder (scan/families.py)
                ("pkg/kernels/helpers.py", 1),
                ("pkg/kernels/helpers.py", 4),
                ("pkg/kernels/matmul.py", 3),  # import triton
                ("pkg/kernels/matmul.py", 4),  # import triton.language
                ("pkg/kernels/matmul.py", 7),  # @triton.autotune
                ("pkg/kernels/matmul.py", 8),  # @triton.jit
                ("pkg/kernels/matmul.py", 14),  # launch in the defining file
                ("pkg/ops/fallback.py", 2),  # import inside try/except ImportError
                ("pkg/ops/rms.py", 3),  # import triton where the kernel is launched: no dependency item of its own
                ("pkg/ops/rms.py", 7),  # relative import of the kernel
                ("pkg/ops/rms.py", 11),  # launch through the imported name
                ("pkg/ops/rms.py", 12),  # launch through the imported module
            ],
        ),
    ]
    # not kernels: a same-named plain function (other/mm.py) and its subscripted call, a same-named variable
    # (other/local.py), numpy's maximum (other/np_use.py), a dict of handlers (pkg/ops/rms.py:14)
    assert sorted({f.file or "" for f in log.findings if (f.file or "").startswith("other/")}) == [
        "other/jit_import.py"
    ]
    assert ("pkg/ops/rms.py", 14) not in {(f.file, f.line) for f in log.findings}
    lines = {(f.file, f.line): f for f in log.findings}
    assert lines[("pkg/ops/rms.py", 12)].message == "launches kernel mm_kernel[grid](...) (pkg/kernels/matmul.py)"
    assert lines[("pkg/ops/rms.py", 7)].message == "imports kernel mm_kernel (pkg/kernels/matmul.py)"
    assert (lines[("pkg/ops/fallback.py", 2)].severity, lines[("pkg/ops/fallback.py", 2)].context) == (
        "warning",
        "optional",
    )
    # a test importing the kernel is test-only: not porting work, counted apart
    assert [(f.file, f.line, f.context) for f in log.findings if not f.porting] == [
        ("tests/test_mm.py", 1, "test-only")
    ]
    assert log.summary.items == 1 and log.summary.total == 14


def test_which_files_the_second_pass_reads() -> None:
    """Only files that launch a kernel or import one from its module (or import a built extension) are parsed
    again; a helper kernel's common name (``maximum``) imported from elsewhere is not a use."""
    log = scan_path(FIXTURES / "launches", jobs=1)
    index = Index((f.rule, f.file, f.subject, f.message) for f in log.findings if f.subject and f.file)
    assert sorted(index.kernels) == ["maximum", "mm_kernel"]
    root = FIXTURES / "launches"
    used = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if index.uses(p.read_bytes()))
    # other/local.py subscripts and calls a variable named mm_kernel: read again, then not resolved to the kernel
    assert used == [
        "other/local.py",
        "pkg/kernels/matmul.py",
        "pkg/ops/fallback.py",
        "pkg/ops/rms.py",
        "tests/test_mm.py",
    ]


def test_importers_of_a_built_extension_fold_into_its_item() -> None:
    log = scan_path(FIXTURES / "extensions", jobs=1)
    assert _items(FIXTURES / "extensions") == [
        # load() bound to a variable: its CUDA source, the import, the build, and the calls through the variable
        (
            "kernel|cpp-extension-cuda|jit.py|jit_ops",
            "blocking",
            [("csrc/jit_ops.cu", None), ("jit.py", 1), ("jit.py", 3), ("jit.py", 7)],
        ),
        # CppExtension(name=...): `import cpu_ops` and `from cpu_ops import gelu`; setup.py's import joins the
        # first extension it builds (csrc/cpu.cpp is C++, not a CUDA source)
        (
            "kernel|cpp-extension-cuda|setup.py|cpu_ops",
            "blocking",
            [("model.py", 3), ("model.py", 5), ("setup.py", 2), ("setup.py", 8)],
        ),
        # CUDAExtension("fusedops._C", sources=["csrc/fused.cu"]): its source, `from . import _C` in the
        # package, `import fusedops._C as C`
        (
            "kernel|cpp-extension-cuda|setup.py|fusedops._C",
            "blocking",
            [("csrc/fused.cu", None), ("fusedops/__init__.py", 1), ("fusedops/layers.py", 1), ("setup.py", 7)],
        ),
        # a CUDA source no extension names stays an item of its folder
        ("kernel|cuda-source-file|kernels", "blocking", [("kernels/orphan.cu", None)]),
    ]
    # json.load and `import cpu_ops_utils` are not the extension
    assert sorted((f.file, f.line) for f in log.findings if f.file == "model.py") == [("model.py", 3), ("model.py", 5)]
    messages = {(f.file, f.line): f.message for f in log.findings}
    assert messages[("setup.py", 8)] == "CppExtension('cpu_ops')"
    assert messages[("jit.py", 3)] == "load('jit_ops')"
    assert messages[("jit.py", 7)] == "calls forward() of the built extension jit_ops (jit.py)"
    assert messages[("fusedops/__init__.py", 1)] == "imports the built extension fusedops._C (setup.py)"
    assert log.summary.items == 4 and log.summary.total == 13


def test_scan_views_say_how_a_line_is_reached_when_its_item_is_not() -> None:
    import io

    from rich.console import Console

    from accelpilot.porting.render import render_markdown, render_table

    log = scan_path(FIXTURES / "launches", jobs=1)
    optional = "[optional path behind an availability check or an ImportError fallback]"
    md = render_markdown(log)
    assert f"  - `pkg/ops/fallback.py:2`: imports kernel mm_kernel (pkg/kernels/matmul.py) {optional}" in md
    assert md.count("[optional path") == 1  # the other lines share the item's reach (none)
    out = io.StringIO()
    render_table(log, Console(file=out, width=400, color_system=None), max_rows=0)
    assert out.getvalue().count("[optional path") == 0  # the terminal folds the first 3 lines only
    bench = io.StringIO()
    render_table(scan_path(FIXTURES / "items", jobs=1), Console(file=bench, width=400, color_system=None))
    assert "kernel family benchmarks/bench_fused.py [in a benchmark script" in bench.getvalue()


def test_an_import_of_a_module_this_tree_builds_is_not_a_library_dependency(tmp_path: Path) -> None:
    """``selective_scan_cuda`` is a known CUDA kernel library name; where setup.py builds it, importing it is a
    line of that extension's item, not a third-party dependency item of its own."""
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        'ext = CUDAExtension("selective_scan_cuda", sources=["scan.cu"])\n'
    )
    (tmp_path / "scan.cu").write_text("__global__ void scan() {}\n")
    (tmp_path / "ops.py").write_text("import selective_scan_cuda\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "use.py").write_text("import causal_conv1d\n")  # not built here: a dependency
    assert _items(tmp_path) == [
        (
            "kernel|cpp-extension-cuda|setup.py|selective_scan_cuda",
            "blocking",
            [("ops.py", 1), ("scan.cu", None), ("setup.py", 1), ("setup.py", 2)],
        ),
        ("package|cuda-kernel-library|causal_conv1d", "blocking", [("other/use.py", 1)]),
    ]
    assert [f.rule for f in scan_path(tmp_path, jobs=1).findings if f.file == "ops.py"] == ["cpp-extension-cuda"]


def test_two_jit_extensions_in_one_folder_each_keep_their_sources(tmp_path: Path) -> None:
    """rosinality's ``op/``: ``fused_act.py`` and ``upfirdn2d.py`` each ``load()`` an extension from sources named in
    the call; each ``.cu`` joins the item of the extension that builds it (not a third item for the folder)."""
    op = tmp_path / "op"
    op.mkdir()
    for name, src in (("fused_act", "fused_bias_act_kernel.cu"), ("upfirdn2d", "upfirdn2d_kernel.cu")):
        (op / f"{name}.py").write_text(
            "import os\nfrom torch.utils.cpp_extension import load\n\nmodule_path = os.path.dirname(__file__)\n"
            f"ext = load(\n    '{name}',\n    sources=[os.path.join(module_path, '{src}')],\n)\n"
        )
        (op / src).write_text("__global__ void k() {}\n")
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule in ("cpp-extension-cuda", "cuda-source-file")]
    files = sorted(tuple(sorted({ln.file or "" for ln in i.lines})) for i in items)
    assert files == [("op/fused_act.py", "op/fused_bias_act_kernel.cu"), ("op/upfirdn2d.py", "op/upfirdn2d_kernel.cu")]


def test_jit_sources_resolve_from_the_run_folder_and_are_sized_by_their_bytes(tmp_path: Path) -> None:
    """RWKV-7's ``src/model.py`` builds ``load(name=..., sources=["cuda/k.cu"])``, a path from ``train_temp/``
    where the script is run: each source joins its extension's item, titled by the extension, and the item is sized
    by its sources' bytes (under 16 KB: 1-4 days; a large scan kernel keeps the rule's 5-15)."""
    root = tmp_path / "train_temp"
    (root / "src").mkdir(parents=True)
    (root / "cuda").mkdir()
    (root / "src" / "model.py").write_text(
        "from torch.utils.cpp_extension import load\n\n"
        "load(name='small_op', sources=['cuda/small_op.cu'], verbose=True)\n"
        "load(name='big_scan', sources=['cuda/big_scan.cu', 'cuda/big_scan.cpp'], verbose=True)\n"
    )
    (root / "cuda" / "small_op.cu").write_text("__global__ void k() {}\n" * 100)  # 2.3 KB
    (root / "cuda" / "big_scan.cu").write_text("__global__ void k() {}\n" * 1000)  # 23 KB
    (root / "cuda" / "big_scan.cpp").write_text("// binding\n")
    items = {i.title: i for i in scan_path(tmp_path, jobs=1).items if i.rule == "cpp-extension-cuda"}
    small = items["CUDA C++ extension: kernel small_op (train_temp/src/model.py)"]
    big = items["CUDA C++ extension: kernel big_scan (train_temp/src/model.py)"]
    assert {ln.file for ln in small.lines} == {"train_temp/src/model.py", "train_temp/cuda/small_op.cu"}
    assert (small.days_low, small.days_high) == (1, 4) and "2.2 KB of CUDA source" in (small.assumption or "")
    assert "train_temp/cuda/big_scan.cu" in {ln.file for ln in big.lines}
    assert (big.days_low, big.days_high) == (5, 15)


@pytest.mark.parametrize(
    ("builder", "context"),
    [
        ("examples/demo.py", "example"),  # an example script (RWKV's GPT-mode demo)
        ("rwkv7/fast_infer.py", "unreached-module"),  # a script nothing runs or imports (RWKV-7's fast demo)
    ],
)
def test_a_source_only_a_non_default_scripts_load_compiles_takes_its_context(
    tmp_path: Path, builder: str, context: str
) -> None:
    """A ``.cu`` file that only an example's or an unreached script's ``load()`` builds is no kernel of the default
    path: it takes the builder's context, and no kernel item stands for it, while the README's trainer keeps its
    own blocking line."""
    (tmp_path / "README.md").write_text("Train:\n\n```\npython train.py\n```\n")
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    (tmp_path / builder).parent.mkdir()
    (tmp_path / "cuda").mkdir()
    (tmp_path / builder).write_text(
        "from torch.utils.cpp_extension import load\nload(name='wkv', sources=['cuda/wkv.cu'])\n"
    )
    (tmp_path / "cuda" / "wkv.cu").write_text("__global__ void k() {}\n")
    log = scan_path(tmp_path, jobs=1)
    src = next(f for f in log.findings if f.file == "cuda/wkv.cu")
    assert src.context == context and src.severity != "blocking"
    assert not [i for i in log.items if i.rule in ("cpp-extension-cuda", "cuda-source-file")]
    assert {f.severity for f in log.findings if f.file == "train.py"} == {"blocking"}

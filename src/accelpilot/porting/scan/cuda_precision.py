"""A precision chosen by asking CUDA (rule ``precision-keyed-on-cuda``; issue 27's round 18: nanochat, lit-llama).

    precision = "bf16-true" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "32-true"

    def _detect_compute_dtype():
        if torch.cuda.is_available():
            ...
            return torch.bfloat16, "..."
        return torch.float32, "auto-detected: no CUDA"

On a Trainium host the CUDA test is false, so the run silently takes fp32: no error, but twice the memory and a
fraction of the bf16 matmul throughput the GPU run had. Read: a conditional expression, or an ``if`` whose body
returns, that asks CUDA (``is_available()``, ``is_bf16_supported()``, ``get_device_capability``) and not its
negation, with a 16-bit precision (``bf16``/``fp16`` names, ``torch.bfloat16``/``float16``, Lightning's
``"bf16-true"``/``"16-mixed"``) when it holds and fp32 otherwise. A test that sends the non-CUDA host to bf16
(TinyLlama's ``if not torch.cuda.is_available() or torch.cuda.is_bf16_supported(): return "bf16-mixed"``) is not.
"""

from __future__ import annotations

import ast
import re

_ASKS = re.compile(r"\bcuda\.(?:is_available|is_bf16_supported|get_device_capability)\(")
_LOW = re.compile(r"bfloat16|float16|\bhalf\b|bf16|fp16|\b16-(?:mixed|true)\b", re.I)
_FP32 = re.compile(r"float32|\bfp32\b|\b32-true\b|\b32\b|\bfloat\b", re.I)


def _asks_cuda(test: ast.expr) -> bool:
    """A test asking CUDA positively: no ``not`` in front of its CUDA question."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return False
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and any(_asks_cuda(v) for v in test.values)
    return _ASKS.search(ast.unparse(test)) is not None


def _first(value: ast.expr | None) -> str:
    """The returned value's text (a tuple's first element: ``return torch.float32, "reason"``)."""
    if isinstance(value, ast.Tuple) and value.elts:
        value = value.elts[0]
    return ast.unparse(value) if value is not None else ""


def keyed_precision(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """(node, what) of each 16-bit precision chosen only when CUDA answers, fp32 otherwise."""
    out: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp) and _asks_cuda(node.test):
            body, other = ast.unparse(node.body), ast.unparse(node.orelse)
            if _LOW.search(body) and _FP32.search(other) and not _LOW.search(other):
                out.append((node, f"{body} only when CUDA answers, else {other}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += _returned(node)
    return out


def _returned(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.AST, str]]:
    """``if <asks CUDA>: ... return <16-bit>`` followed in the def by ``return <fp32>``."""
    out: list[tuple[ast.AST, str]] = []
    for k, st in enumerate(fn.body):
        if not (isinstance(st, ast.If) and _asks_cuda(st.test)):
            continue
        after = fn.body[k + 1] if k + 1 < len(fn.body) else None
        fallback = _first(after.value) if isinstance(after, ast.Return) else ""
        if not fallback or not _FP32.search(fallback) or _LOW.search(fallback):
            continue
        low = [r for s in st.body for r in ast.walk(s) if isinstance(r, ast.Return) and _LOW.search(_first(r.value))]
        if low:
            out.append((low[0], f"{_first(low[0].value)} only when CUDA answers, else {fallback}"))
    return out

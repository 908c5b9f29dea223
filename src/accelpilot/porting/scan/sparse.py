"""Sparse tensors a training path makes (rule ``sparse-tensor``): ``.to_sparse()``, ``torch.sparse_coo_tensor``, the
legacy ``torch.sparse.FloatTensor(indices, values, shape)`` (pygcn), a sparse-dense matmul (``torch.spmm``), and an
embedding with sparse gradients (DLRM's ``nn.EmbeddingBag(..., sparse=True)``). Subject ``sparse-buffer`` when the
tensor is registered as a module buffer (it moves with ``model.to(device)``: ``default_path.py`` judges it)."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.default_path import SPARSE_BUFFER
from accelpilot.porting.scan.nodes import dotted as _dotted

_TO_SPARSE = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "sparse_coo_tensor", "sparse_csr_tensor"})


_LEGACY_SPARSE = frozenset({"FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "HalfTensor"})
_SPARSE_GRAD = frozenset({"Embedding", "EmbeddingBag", "embedding", "embedding_bag"})


def sparse_lines(tree: ast.Module) -> list[tuple[ast.Call, str, str | None]]:
    """Calls that make a sparse tensor; subject ``sparse-buffer`` when it is an argument of ``register_buffer``."""
    buffers: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register_buffer":
            buffers |= {id(n) for a in node.args[1:2] for n in ast.walk(a)}
    out: list[tuple[ast.Call, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _TO_SPARSE:
                where = " registered as a buffer" if id(node) in buffers else ""
                out.append((node, f"{name}(){where}: a sparse tensor", SPARSE_BUFFER if where else None))
            elif name in _LEGACY_SPARSE and isinstance(f, ast.Attribute) and _dotted(f.value) == "torch.sparse":
                # pygcn's ``torch.sparse.FloatTensor(indices, values, shape)``: a COO tensor by the legacy constructor
                out.append((node, f"torch.sparse.{name}(...): a sparse tensor", None))
            elif name == "spmm" or (
                name == "mm" and isinstance(f, ast.Attribute) and _dotted(f.value) == "torch.sparse"
            ):
                out.append((node, f"{_dotted(f) or name}(...): a sparse-dense matmul", None))
            elif name in _SPARSE_GRAD and any(
                k.arg == "sparse" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords
            ):
                # DLRM's ``nn.EmbeddingBag(n, m, mode="sum", sparse=True)``: backward makes sparse COO gradients
                out.append((node, f"{name}(sparse=True): sparse COO gradients in backward", None))
    return out

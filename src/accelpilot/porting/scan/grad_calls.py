"""Gradients taken by hand inside a step (rules ``grad-in-step``, ``custom-checkpoint``; issue 27's labels of
latent-diffusion, taming-transformers, guided-diffusion, GLIDE, k-diffusion).

Two shapes of ``torch.autograd.grad`` without ``create_graph=True`` (that one is ``double-backward``):

- in a custom ``autograd.Function``'s ``backward``: a hand-made reentrant checkpoint (guided-diffusion's and
  latent-diffusion's ``CheckpointFunction`` re-runs the forward under ``enable_grad`` and differentiates it). The
  Function hides the block from torch.compile and keeps the closure on ``ctx``; ``torch.utils.checkpoint`` with
  ``use_reentrant=False`` is the stock form;
- anywhere else: a gradient of an intermediate inside the step (a GAN loss's adaptive weight from the decoder's last
  layer, classifier or CLIP guidance in a sampling loop). Each call is one more backward graph per step under
  torch.compile (and a retained graph), to check on the device.
"""

from __future__ import annotations

import ast

from accelpilot.porting.scan.nodes import dotted


def _is_function_class(node: ast.ClassDef) -> bool:
    return any((dotted(b) or "").rsplit(".", 1)[-1] == "Function" for b in node.bases)


def grad_calls(tree: ast.Module) -> list[tuple[ast.Call, str, str]]:
    """(call, rule, message) for each ``autograd.grad(...)`` without ``create_graph=True``."""
    out: list[tuple[ast.Call, str, str]] = []

    def visit(node: ast.AST, in_backward: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_backward
            if isinstance(child, ast.ClassDef):
                for st in child.body:
                    backward = isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == "backward"
                    visit(st, backward and _is_function_class(child)) if backward else visit(st, in_backward)
                continue
            if isinstance(child, ast.Call) and (dotted(child.func) or "").endswith("autograd.grad"):
                graph = any(
                    k.arg == "create_graph" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                    for k in child.keywords
                )
                if not graph:
                    if inside:
                        what = "torch.autograd.grad in an autograd.Function's backward"
                        out.append((child, "custom-checkpoint", what))
                    else:
                        out.append((child, "grad-in-step", "torch.autograd.grad of an intermediate"))
            visit(child, inside)

    visit(tree, False)
    return out

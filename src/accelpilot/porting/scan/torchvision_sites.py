"""torchvision dataset attributes a current release no longer has, read where a class subclasses the dataset.

torchvision 0.2.2 (2019) renamed CIFAR10/CIFAR100's ``train_data``/``train_labels``/``test_data``/``test_labels``
to ``data``/``targets``; torchvision 0.29.1's ``datasets/cifar.py`` (read in its wheel) defines only the new names,
so a subclass reading the old ones (RepDistiller's ``CIFAR100InstanceSample.__init__``: ``len(self.train_data)``)
raises AttributeError when it is built. MNIST keeps them as deprecated properties, so only CIFAR is listed."""

from __future__ import annotations

import ast
from collections.abc import Iterable

CIFAR_BASES = frozenset({"CIFAR10", "CIFAR100"})
CIFAR_GONE = frozenset({"train_data", "train_labels", "test_data", "test_labels"})
BYTE_GATE = (b"train_data", b"train_labels", b"test_data", b"test_labels")


def _cifar_base(base: ast.expr) -> bool:
    """``CIFAR100``, ``datasets.CIFAR100``, ``torchvision.datasets.CIFAR10``."""
    name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
    return name in CIFAR_BASES


def cifar_attr_sites(tree: ast.Module) -> Iterable[tuple[ast.AST, str, bool | None]]:
    """(node, message, None: fails when the code runs) of each read of a removed attribute through ``self`` in a
    class whose base is torchvision's CIFAR dataset."""
    for cls in ast.walk(tree):
        if not (isinstance(cls, ast.ClassDef) and any(_cifar_base(b) for b in cls.bases)):
            continue
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Load)
                and node.attr in CIFAR_GONE
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                yield (
                    node,
                    f"self.{node.attr} in {cls.name}, a torchvision CIFAR dataset (torchvision 0.2.2 renamed it to "
                    f"{'data' if node.attr.endswith('data') else 'targets'}: AttributeError)",
                    None,
                )

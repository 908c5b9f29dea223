"""A setting a Hydra script reads from its shipped config (issue 27: what the default command actually runs).

A script decorated with ``@hydra.main`` reads ``cfg.gpus`` from the YAML file the decorator names, unless the
command overrides it (``python train.py gpus=[0,1]``): Pointnet2_PyTorch's ``Trainer(gpus=list(cfg.gpus))`` asks
for GPU 0 because its ``config/config.yaml`` says ``gpus: [0]``. Both decorator forms are read: Hydra 0.11's file
path (``@hydra.main("config/config.yaml")``) and 1.x's folder and name (``config_path="conf",
config_name="config"``), relative to the script's folder. Only the primary file is read, not its ``defaults`` list.
"""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path


def _config_file(tree: ast.Module, script: str) -> str | None:
    """The YAML file a ``@hydra.main`` decorator of the script names (relative to the tree's root)."""
    folder = posixpath.dirname(script)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            if not (isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("hydra.main")):
                continue
            kw = {k.arg: k.value.value for k in dec.keywords if isinstance(k.value, ast.Constant)}
            first = dec.args[0].value if dec.args and isinstance(dec.args[0], ast.Constant) else None
            path, name = kw.get("config_path", first), kw.get("config_name")
            if not isinstance(path, str):
                continue
            if isinstance(name, str):
                path = posixpath.join(path, name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
            if path.endswith((".yaml", ".yml")):
                return posixpath.normpath(posixpath.join(folder, path))
    return None


def hydra_default(root: Path, script: str, tree: ast.Module, key: str) -> str | None:
    """``key`` (dotted: ``trainer.gpus``) of the script's Hydra config as text (``[0]``), or None: no
    ``@hydra.main``, no such file or key, or YAML that does not read."""
    rel = _config_file(tree, script)
    if rel is None:
        return None
    import yaml  # only for a Hydra script: the scan's worker processes do not pay for the import

    try:
        value = yaml.safe_load((root / rel).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return "null" if value is None else str(value)


def hydra_override(command: str, key: str) -> str | None:
    """The value a command line gives ``key`` as a Hydra override (``gpus=[0,1,2,3]``, ``+trainer.gpus=2``)."""
    m = re.search(rf"(?:^|[\s`])\+{{0,2}}{re.escape(key)}=([^\s`]+)", command)
    return m.group(1).strip("'\"") if m else None


def hydra_group_default(root: Path, script: str, tree: ast.Module, group: str) -> tuple[str, dict[str, object]] | None:
    """(path, settings) of the ``default`` option of the Hydra config group ``group`` beside the script's primary
    config (S4's ``configs/trainer/default.yaml`` for ``pl.Trainer(**config.trainer)``), or None."""
    rel = _config_file(tree, script)
    if rel is None:
        return None
    path = posixpath.join(posixpath.dirname(rel), group, "default.yaml")
    import yaml  # only for a Hydra script (as ``hydra_default``)

    try:
        value = yaml.safe_load((root / path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    return (path, value) if isinstance(value, dict) else None


# A YAML file a command passes (``python run.py -c configs/vae.yaml``) or an option's default (``default=
# 'configs/vae.yaml'``): the config a plain-YAML script loads.
_YAML_ARG = re.compile(r"""(?:^|[\s=`'"])([\w./-]+\.ya?ml)\b""")


def yaml_section(root: Path, script: str, text: str, command: str, key: str) -> tuple[str, dict[str, object]] | None:
    """(path, settings) of the top-level ``key`` of the YAML config a script loads without Hydra (PyTorch-VAE's
    ``Trainer(**config['trainer_params'])`` over ``yaml.safe_load`` of ``-c configs/vae.yaml``): the first YAML
    file the command names that exists, else the first YAML default in the script; None when neither holds a
    mapping under ``key``."""
    here = posixpath.dirname(script)
    names = [m.group(1) for m in _YAML_ARG.finditer(command)] + [m.group(1) for m in _YAML_ARG.finditer(text)]
    import yaml  # only for a script that splats a config section into its Trainer

    for name in names:
        for rel in (posixpath.normpath(posixpath.join(here, name)), posixpath.normpath(name)):
            try:
                value = yaml.safe_load((root / rel).read_text())
            except (OSError, yaml.YAMLError, UnicodeDecodeError):
                continue
            section = value.get(key) if isinstance(value, dict) else None
            return (rel, section) if isinstance(section, dict) else None
    return None

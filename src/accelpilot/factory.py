"""Import a user's ``module:factory`` (or ``path/to/file.py:factory``): the one way user code enters.

Shared by the pilots (``--workload``) and the op inventory (``--model``), which must not import each other;
torch-free so either can use it. Importing user code happens only when a command is asked to.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError, InputFileError


def import_factory(spec: str, field: str) -> Any:
    """The callable named by ``spec``; errors are one line naming ``field`` (``--workload``, ``--model``)."""
    if ":" not in spec:
        raise ConfigError(
            f"{spec!r} is not of the form module:factory",
            field=field,
            fix="e.g. mypkg.models:make_workload or path/to/file.py:factory",
        )
    mod_name, _, attr = spec.rpartition(":")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise InputFileError("no such file", file=mod_name, field=field)
            mspec = importlib.util.spec_from_file_location(path.stem, path)
            if mspec is None or mspec.loader is None:
                raise InputFileError("cannot import this file", file=mod_name, field=field)
            module = importlib.util.module_from_spec(mspec)
            sys.modules[path.stem] = module
            mspec.loader.exec_module(module)
        else:
            module = importlib.import_module(mod_name)
    except (ImportError, SyntaxError) as exc:
        raise ConfigError(
            f"cannot import {mod_name!r}: {exc.__class__.__name__}: {exc}",
            field=field,
            fix="check the module path and that it is importable (PYTHONPATH)",
        ) from None
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise ConfigError(f"{mod_name!r} has no callable {attr!r}", field=field)
    return factory

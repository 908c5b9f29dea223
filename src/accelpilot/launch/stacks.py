"""Platform stacks (image, packages, pilot defaults) as data: bundled ``data/stacks.toml`` plus user files."""

from __future__ import annotations

import datetime as dt
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from accelpilot.errors import ConfigError


class Stack(BaseModel):
    """What a pilot on one accelerator family starts from and installs."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    device: str  # the torch device the pilot uses there
    accelerators: list[str] = Field(default_factory=list)  # catalog accelerator names this stack serves
    image_id: str = ""  # "" = SkyPilot's default image for the accelerator
    dlami_ssm_parameter: str = ""
    system_packages: list[str] = Field(default_factory=list)  # versions the image must report (checked in setup)
    python_packages: list[str] = Field(default_factory=list)
    pip_index_url: str = ""
    torch_install: str = ""  # a shell line that installs the framework when the image lacks it
    pilot_args: list[str] = Field(default_factory=list)
    source: str = ""
    as_of: dt.date | None = None

    def serves(self, accelerator: str) -> bool:
        return accelerator.lower() in (a.lower() for a in self.accelerators)


def _read(path: Path | None) -> tuple[list[dict[str, Any]], str]:
    from accelpilot.catalog.loader import read_toml

    if path is None:
        ref = resources.files("accelpilot.launch") / "data" / "stacks.toml"
        with resources.as_file(ref) as p:
            return list(read_toml(p).get("stack", [])), "bundled stacks.toml"
    data = read_toml(path)
    rows = data.get("stack")
    if not isinstance(rows, list) or not rows:
        raise ConfigError("no [[stack]] tables", file=str(path), fix="see accelpilot/launch/data/stacks.toml")
    return list(rows), str(path)


def load_stacks(overrides: list[Path] | None = None) -> list[Stack]:
    """Bundled stacks, then each override file: a stack with the same name gets the file's fields."""
    merged: dict[str, dict[str, Any]] = {}
    for path in [None, *(overrides or [])]:
        rows, origin = _read(path)
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("name"), str):
                raise ConfigError("each [[stack]] needs a name", file=origin, field=f"stack[{i + 1}].name")
            base = merged.get(row["name"], {})
            merged[row["name"]] = {**base, **row}
            try:
                Stack.model_validate(merged[row["name"]])
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise ConfigError(str(err["msg"]), file=origin, field=f"stack {row['name']!r}.{where}") from None
    return [Stack.model_validate(v) for v in merged.values()]


def stack_for(accelerator: str, stacks: list[Stack]) -> Stack | None:
    for s in reversed(stacks):  # later (user) stacks win
        if s.serves(accelerator):
            return s
    return None

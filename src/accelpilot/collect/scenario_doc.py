"""The scenario file as a document: read once, edit ``result`` entries with tomlkit, write back safely.

tomlkit round-trips comments, order and layout, so a user's annotated scenario stays theirs. The write
refuses a destination that is read-only or that changed since it was read (someone edited it meanwhile),
validates the new text as a scenario before writing, and replaces the file atomically.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from accelpilot.atomic import write_text_atomic
from accelpilot.bill.scenario import Scenario, parse_scenario
from accelpilot.errors import InputFileError


@dataclass(slots=True)
class ScenarioDoc:
    path: Path
    text: str
    sha256: str
    doc: Any  # tomlkit.TOMLDocument
    scenario: Scenario

    @classmethod
    def read(cls, path: Path) -> ScenarioDoc:
        from accelpilot.bill.scenario import load_scenario

        scenario = load_scenario(path)  # validates, with the bill's own messages
        try:
            raw = path.read_bytes()
            text = raw.decode("utf-8")
            doc = tomlkit.parse(text)
        except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
            raise InputFileError(f"cannot read scenario ({exc})", file=str(path)) from None
        return cls(path, text, hashlib.sha256(raw).hexdigest(), doc, scenario)

    def _option_table(self, name: str) -> Any:
        for t in self.doc.get("options", []):
            if t.get("name") == name:
                return t
        raise InputFileError(f"option {name!r} not found as an [[options]] table", file=str(self.path))

    def set_result(
        self, option: str, result_path: str, comment: str, unverified: str | None = None, key: str = "result"
    ) -> None:
        """``key = "result_path"`` for the option (``result``, or the joined ``scaling_result``); with ``result``,
        ``result_unverified = why`` beside it when the result is unverified (removed when a verified result replaces
        an unverified one)."""
        table = self._option_table(option)
        if key == "result" and unverified is None and "result_unverified" in table:
            del table["result_unverified"]
        item = tomlkit.string(result_path)
        item.comment(comment)
        if key in table:
            table[key] = item
        else:
            self._insert_plain(table, key, item)
        if unverified is not None:
            if "result_unverified" in table:
                table["result_unverified"] = unverified
            else:
                self._insert_plain(table, "result_unverified", tomlkit.string(unverified))

    @staticmethod
    def _insert_plain(table: Any, key: str, item: Any) -> None:
        # Put it after the option's last plain key: plain assignment would add it after the option's
        # sub-tables with a blank line before them, changing the file's layout.
        plain = {k for k, v in table.items() if not isinstance(v, (dict, list))}
        body = table.value.body  # (key, item) pairs, blank lines and comments included
        last = max((i for i, (k, _) in enumerate(body) if k is not None and k.key in plain), default=None)
        try:
            if last is None:
                raise ValueError("no plain key")
            # tomlkit's own positional insert (_insert_after is gone since tomlkit 0.14; _insert_at stays)
            table.value._insert_at(last + 1, key, item)
        except (AttributeError, IndexError, KeyError, ValueError):
            table[key] = item

    def render(self) -> str:
        return tomlkit.dumps(self.doc)

    def write(self, dest: Path) -> Path:
        """Write the edited document to ``dest``; the source is never touched unless ``dest`` is it."""
        text = self.render()
        if dest.is_symlink():  # write the scenario the link points to; an atomic rename would replace the link
            dest = dest.resolve()
        parse_scenario(tomlkit.parse(text).unwrap(), str(dest))  # still a valid scenario
        in_place = dest.resolve() == self.path.resolve()
        if in_place:
            try:
                now = hashlib.sha256(self.path.read_bytes()).hexdigest()
            except OSError as exc:
                raise InputFileError(f"cannot re-read scenario ({exc.strerror})", file=str(dest)) from None
            if now != self.sha256:
                raise InputFileError(
                    "the scenario changed since collect read it; nothing written",
                    file=str(dest),
                    fix="run collect again on the current file",
                )
        # A file or folder without write bits is read-only on purpose, even for root (whom os.access lets through).
        if dest.exists() and (not os.access(dest, os.W_OK) or not dest.stat().st_mode & 0o222):
            raise InputFileError("read-only; nothing written", file=str(dest), fix="make it writable or use --out")
        parent = dest.parent if str(dest.parent) else Path(".")
        if not os.access(parent, os.W_OK) or not parent.stat().st_mode & 0o222:
            raise InputFileError("folder is read-only; nothing written", file=str(dest), fix="choose another --out")
        mode = (dest.stat().st_mode & 0o777) if dest.exists() else 0o644
        write_text_atomic(dest, text, mode)
        return dest

"""The device set outside the code: a shipped config, or the README's example, that sets it to CUDA.

DreamerV3's ``configs.yaml`` sets ``device: 'cuda:0'``, AudioCraft's root config ``device: cuda``: the code places
everything on ``config.device``, so the port changes the config's value, and the default command stops on it when
its entry point reads that config (issue 27, round 24).

A line is a ``cuda-device-literal`` finding of the config (subject ``config-device``). It blocks when the key is
``device`` itself (not ``init_device`` or another component's) and an entry point names the config file in its
source (``Path(...) / "configs.yaml"``, ``default='Configs/config.yml'``) or the README command passes it: the default
command then runs with the CUDA device the config sets.

A library's README example is its default path (``readme_example.py``); a CUDA placement in it
(``Chronos2Pipeline.from_pretrained("amazon/chronos-2", device_map="cuda")``) is a ``cuda-device-literal`` line of
the README, blocking: the example as written stops on a host without CUDA.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from accelpilot.porting.findings import CONFIG_DEVICE, Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.documents import readme_path
from accelpilot.porting.scan.readme_example import example_device_lines

# ``device: 'cuda:0'``, ``"device": "cuda",``, ``ema_device: cuda  # comment``: a key naming a device, a CUDA value.
_LINE = re.compile(r"""^\s*["']?((?:\w+_)?device)["']?\s*[:=]\s*["']?(cuda(?::\d+)?)["']?\s*,?\s*(?:#.*)?$""")


def config_device_line(line: str) -> tuple[str, str] | None:
    """(key, value) of a config line that sets a device to CUDA, else None."""
    m = _LINE.match(line)
    return (m.group(1), m.group(2)) if m else None


def mark_config_devices(
    findings: list[Finding], entries: Mapping[str, str], read: Callable[[str], str | None], rels: list[str]
) -> None:
    """A config's ``device: cuda`` blocks when an entry point reads that config (it names the file, or the README
    command passes it) and the code reads the config's device (the entry point, or a module such as Denoiser's
    ``solver.py`` with ``args.device``)."""
    lines = [f for f in findings if f.subject == CONFIG_DEVICE and f.porting and f.message.startswith(_BLOCKS)]
    if not lines:
        return
    sources = {e: read(e) or "" for e in entries}
    code_reads: bool | None = None  # read once, only when an entry point names a config
    for f in lines:
        rel = f.file or ""
        reader = next((e for e in entries if rel in entries[e] or _names(sources[e], rel)), None)
        if reader is None:
            continue
        if code_reads is None:
            code_reads = any(
                _READS.search(sources.get(r) or read(r) or "") is not None for r in rels if r.endswith(".py")
            )
        if code_reads:
            f.severity = "blocking"
            f.reason = (
                f"the shipped config {rel} sets {f.message.removeprefix('config sets ')}, and entry point {reader} "
                f"({entries[reader]}) reads it, so the default command places its run on CUDA: {rel}:{f.line}"
            )


_BLOCKS = "config sets device:"
# The code reads the config's device (``config.device``, ``cfg["device"]``, ``hps.get("device")``), not its own
# (StyleTTS 2 names its config but places on ``accelerator.device`` and a literal ``'cuda'``).
_READS = re.compile(
    r"""\b(?:config|cfg|conf|args|opt|hparams|hps|params)\w*\.device\b|\[["']device["']\]|get\(["']device["']"""
)  # the key ``device`` itself: the run's device, not one component's


def _names(source: str, rel: str) -> bool:
    """Whether a quoted path in ``source`` is ``rel`` (``"configs.yaml"``, ``'Configs/config.yml'``)."""
    base = rel.rsplit("/", 1)[-1]
    for m in re.finditer(r"""["']([\w./-]*""" + re.escape(base) + r""")["']""", source):
        q = m.group(1).removeprefix("./")
        if q in (rel, base) or rel.endswith("/" + q):
            return True
    return False


def readme_example_devices(root: Path, entries: Mapping[str, str], rels: list[str]) -> list[Finding]:
    """The README example's CUDA placements, blocking, when the example is the default path (its entries)."""
    example = [e for e, how in entries.items() if how.startswith("README example")]
    readme = readme_path(root)
    if not example or readme is None:
        return []
    text = readme.read_text(encoding="utf-8", errors="replace")
    out: list[Finding] = []
    for line, snippet, what in example_device_lines(text, rels):
        f = Finding.from_rule(
            RULES["cuda-device-literal"],
            file=readme.name,
            line=line,
            message=f"the README example places its work on CUDA ({what})",
            snippet=snippet[:200],
        )
        f.severity = "blocking"
        f.reason = (
            f"the README's example is the default path ({entries[example[0]]}), and as written it places its work "
            f"on CUDA ({what}), which a host without CUDA refuses: {readme.name}:{line}"
        )
        out.append(f)
    return out

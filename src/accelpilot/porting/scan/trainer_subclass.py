"""A repository's own subclass of the Hugging Face ``Trainer`` run by an entry point (issue 27, round 30: SimCSE's
``CLTrainer(Trainer)`` in ``simcse/trainers.py``, built by ``train.py``, the README's training run).

The ``hf-trainer`` rule reads ``Trainer(...)`` calls of transformers' own classes and the ``class X(Trainer)`` line
of a subclass; the entry point's ``X(...)`` is the training loop the README runs, as a ``Trainer(...)`` call there
would be. That call is an ``hf-trainer`` line of the entry point, so ``entry_blocking.py`` and
``hf_stack.mark_trainer_stack`` judge it as they judge ``Trainer(...)``: blocking on a transformers pinned below the
releases that place on the neuron device, a validation item on a current one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES

RULE = "hf-trainer"
_CLASS = re.compile(r"^class (\w+)\(")


def trainer_subclass_calls(
    findings: list[Finding], entries: Mapping[str, str], read: Callable[[str], str | None]
) -> list[Finding]:
    """An ``hf-trainer`` line at each entry point's call of a ``Trainer`` subclass the tree defines (and the entry
    point imports or defines)."""
    subclasses = {
        m.group(1): f.file for f in findings if f.rule == RULE and f.file and (m := _CLASS.match(f.message)) is not None
    }
    if not subclasses:
        return []
    out: list[Finding] = []
    have = {(f.file, f.line) for f in findings if f.rule == RULE}
    for entry in sorted(e for e in entries if e.endswith(".py")):
        text = read(entry)
        if not text:
            continue
        for name, home in subclasses.items():
            if home != entry and not re.search(rf"^\s*(?:from\s+[\w.]+\s+)?import\s[^\n]*\b{name}\b", text, re.M):
                continue
            for n, line in enumerate(text.splitlines(), start=1):
                code = line.split("#", 1)[0]
                if (
                    re.search(rf"(?<![\w.]){name}\(", code)
                    and not code.lstrip().startswith("class ")
                    and (
                        entry,
                        n,
                    )
                    not in have
                ):
                    out.append(
                        Finding.from_rule(
                            RULES[RULE],
                            file=entry,
                            line=n,
                            message=f"{name}(...) (a transformers Trainer subclass, {home})",
                            snippet=line.strip(),
                        )
                    )
    return out

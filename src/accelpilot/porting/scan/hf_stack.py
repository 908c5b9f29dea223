"""The Hugging Face stack a repository was written for, read against the one TorchNeuron native needs (issue 27).

Facts, each checked in the wheels on PyPI (2026-12-06), kept here as data:

- transformers' ``TrainingArguments`` selects ``torch.device("neuron:0")`` from 5.4.0 (absent in 5.3.0), and
  accelerate's ``is_neuron_available``/``MULTI_NEURON`` from 1.13.0 (absent in 1.12.0); both test for the
  ``torch_neuronx`` module and ``torch.neuron``, assumed to be what TorchNeuron native installs (unverified on
  hardware). So a Trainer or ``Accelerator`` on a current stack places on the neuron device; on a stack pinned below
  those versions it places on CUDA or the CPU, and the work is the upgrade.
- transformers 5.0 removed ``from_pretrained``'s ``load_in_8bit``/``load_in_4bit``/``use_auth_token`` (``TypeError``
  on 5.17.0, measured) and ``Trainer(tokenizer=...)`` (now ``processing_class``); ``TrainingArguments`` lost
  ``evaluation_strategy`` in 4.51 (in 4.50.0, not in 4.51.3) and ``fsdp_transformer_layer_cls_to_wrap`` in 5.0;
  openai 1.0 removed ``openai.openai_object``.
- ``TrainingArguments(tf32=True)`` raises ``ValueError("--tf32 requires Ampere or a newer GPU arch, cuda>=11 and
  torch>=1.7")`` without CUDA (5.17.0, CPU torch 2.13, measured).
- ``--fsdp`` maps to FSDP2 (``fsdp_config`` version 2 by default) from transformers 5.10 (5.9.0: FSDP1); the Neuron
  torch.distributed guide lists DDP, FSDP2 and DTensor.

``stack_upgrade.py`` reads the removed APIs in code; this module reads the version pins and the README command's
``TrainingArguments`` flags of an entry script that parses them with ``HfArgumentParser``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.families import _module_names, imports_of
from accelpilot.porting.scan.launch_flags import command_flags, doc_command, join_continued, logical_lines
from accelpilot.porting.scan.patterns import BNB_OPTIMIZERS

# The first release that places on TorchNeuron's `neuron` device.
NEURON_DEVICE_FROM = {"transformers": Version("5.4.0"), "accelerate": Version("1.13.0")}
_LATER = ("5.25.0", "1.16.0", "99")  # newest releases checked, and any later one
FSDP2_DEFAULT_FROM = Version("5.10.0")
# Keyword arguments removed from calls: call name -> keyword -> (library, version that removed it).
REMOVED_KWARGS: dict[str, dict[str, tuple[str, str]]] = {
    "from_pretrained": {
        "load_in_8bit": ("transformers", "5.0"),
        "load_in_4bit": ("transformers", "5.0"),
        "use_auth_token": ("transformers", "5.0"),
    },
    "Trainer": {"tokenizer": ("transformers", "5.0")},
    "Seq2SeqTrainer": {"tokenizer": ("transformers", "5.0")},
    "TrainingArguments": {
        "evaluation_strategy": ("transformers", "4.51"),
        "fsdp_transformer_layer_cls_to_wrap": ("transformers", "5.0"),
    },
    "Seq2SeqTrainingArguments": {
        "evaluation_strategy": ("transformers", "4.51"),
        "fsdp_transformer_layer_cls_to_wrap": ("transformers", "5.0"),
    },
    # torchvision's grid helpers: ``range`` read from **kwargs in 0.13, silently ignored in 0.15, gone from the
    # signature (no **kwargs) in 0.17 (read in the 0.13.0, 0.15.1 and 0.17.0 wheels); the torch TorchNeuron needs
    # pairs with a later torchvision
    "make_grid": {"range": ("torchvision", "0.17")},
    "save_image": {"range": ("torchvision", "0.17")},
    # scikit-learn renamed ``force_all_finite`` to ``ensure_all_finite`` in 1.6 and removed it in 1.8 (read in the
    # 1.7.2 and 1.8.0 wheels' ``sklearn/utils/validation.py``; no ``**kwargs``): TabPFN's ``check_X_y`` in ``fit``
    **{call: {"force_all_finite": ("scikit-learn", "1.8")} for call in ("check_array", "check_X_y", "as_float_array")},
}
# Names removed from a module: module -> name -> (library, version).
# ``is_flash_attn_available``: in transformers 4.38.2's ``transformers/utils/__init__.py``, not in 4.39.0's (read in the
# wheels; ``is_flash_attn_2_available`` replaced it): Medusa's vendored Llama imports it at module level.
REMOVED_NAMES = {
    "openai": {"openai_object": ("openai", "1.0")},
    "transformers.utils": {"is_flash_attn_available": ("transformers", "4.39")},
}
# Methods of transformers' PreTrainedModel (its ``ModuleUtilsMixin``) removed: code that wraps a model's internals
# (GroundingDINO's ``BertModelWarper``: ``bert_model.get_extended_attention_mask``) fails with AttributeError.
# ``get_head_mask``: in 4.57.6's ``modeling_utils.py``, not in 5.0.0's; ``invert_attention_mask`` and
# ``get_extended_attention_mask``: in 5.16.0's, not in 5.17.0's (wheels read).
REMOVED_METHODS = {
    "get_head_mask": ("transformers", "5.0"),
    "invert_attention_mask": ("transformers", "5.17"),
    "get_extended_attention_mask": ("transformers", "5.17"),
}
# TrainingArguments fields a command line may still pass: flag -> (library, version that removed it).
REMOVED_FLAGS = dict(REMOVED_KWARGS["TrainingArguments"])
TF32_STOP = (
    "TrainingArguments raises ValueError('--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7') "
    "without CUDA (transformers 5.17.0 on a CPU torch, measured), so the command stops before training; drop the "
    "flag (TF32 is a CUDA matmul mode; bf16 carries the precision on Neuron)"
)
DEEPSPEED_STOP = (
    "DeepSpeed has no Neuron accelerator, and accelerate refuses it on Neuron devices ('DeepSpeed is not supported "
    "on Neuron devices', accelerate 1.16's config): shard with FSDP2 on the neuron device instead"
)
_LAUNCH = re.compile(r"\b(?:python3?|torchrun|accelerate\s+launch|deepspeed)\b")
_REQ_FILE = re.compile(r"(^|/)(requirements[\w.-]*\.txt|setup\.py|pyproject\.toml|environment\.ya?ml)$")
_QUOTED_REQ = re.compile(r"""["']\s*((?:transformers|accelerate)\b[^"']*)["']""")
_TRUE = frozenset({"true", "1", "yes"})


@dataclass(frozen=True)
class Pin:
    """A requirement on one library as written: its file and line."""

    library: str
    spec: str
    file: str
    line: int


def stack_pins(read: Callable[[str], str | None], rels: list[str]) -> list[Pin]:
    """The transformers/accelerate requirements of the repository's root requirement files."""
    out: list[Pin] = []
    for rel in sorted(r for r in rels if "/" not in r and _REQ_FILE.search(r)):
        text = read(rel) or ""
        for ln, line in enumerate(text.splitlines(), start=1):
            if "transformers" not in line and "accelerate" not in line:
                continue
            quoted = rel.endswith((".py", ".toml"))
            cands = _QUOTED_REQ.findall(line) if quoted else [line.split("#", 1)[0].strip().lstrip("- ")]
            for cand in cands:
                try:
                    req = Requirement(cand)
                except InvalidRequirement:
                    continue
                if req.name.lower() in NEURON_DEVICE_FROM:
                    out.append(Pin(req.name.lower(), str(req.specifier) or (req.url or ""), rel, ln))
    return out


def below_neuron(pins: list[Pin]) -> Pin | None:
    """The first pin that allows no release placing on the neuron device (``transformers==4.31.0``); a range
    that allows one (``>=4.28``), no pin, or a git URL (version unknown) is not."""
    return next((p for p in pins if not _allows_from(p, NEURON_DEVICE_FROM[p.library])), None)


def _allows_from(p: Pin, floor: Version) -> bool:
    """Whether the pin allows a release at or above ``floor`` (an unreadable pin or a git URL may)."""
    if not p.spec or p.spec.startswith(("git+", "http", "file:")):
        return True
    try:
        spec = Requirement(f"{p.library}{p.spec}").specifier
    except InvalidRequirement:
        return True
    # the versions the spec names (``==5.17.0``) and the floor and later releases: one allowed at or above the
    # floor means an install can reach it
    named = [s.version.rstrip(".*") for s in spec if s.operator not in ("!=",)]
    candidates = {str(floor), *_LATER, *named}
    return any(_at_least(v, floor) and spec.contains(v, prereleases=True) for v in candidates)


def _at_least(version: str, floor: Version) -> bool:
    try:
        return Version(version) >= floor
    except ValueError:
        return False


def _parses_training_arguments(src: bytes | None) -> bool:
    return src is not None and b"HfArgumentParser" in src and b"TrainingArguments" in src


def _parser_source(script: str, read: Callable[[str], bytes | None], mods: dict[str, str]) -> bytes | None:
    """The source that parses the script's ``TrainingArguments``: the script's own, or that of a module of the tree
    it imports (LLaVA's ``train_mem.py`` calls ``train()`` of ``llava/train/train.py``, which parses them)."""
    src = read(script) if script.endswith(".py") else None
    if src is None or _parses_training_arguments(src):
        return src
    for rel in sorted(imports_of(script, src, mods)):
        other = read(rel)
        if _parses_training_arguments(other):
            return other
    return None


def launch_settings(
    root: Path, how: dict[str, str], read: Callable[[str], bytes | None], pins: list[Pin], rels: list[str]
) -> list[Finding]:
    """Findings for the ``TrainingArguments`` flags of each entry script's README command (its default command):
    ``--tf32 True`` (blocking), removed fields (``stack-upgrade``; blocking unless the parser keeps unknown
    strings), ``--fsdp`` (the Trainer's FSDP; FSDP2 on a current transformers). A superseded script's command
    (``Entries.superseded``) gets the same findings, none blocking: each blocks when that command is run."""
    out: list[Finding] = []
    mods = _module_names(rels, how)
    superseded: Mapping[str, str] = getattr(how, "superseded", {})
    for script, cmd in [*how.items(), *superseded.items()]:
        first = len(out)
        src = _parser_source(script, read, mods)
        if src is None:
            continue
        command = doc_command(root, cmd)
        lenient = b"return_remaining_strings=True" in src
        where = f"{'superseded script' if script in superseded else 'entry point'} {script} ({cmd[:160]})"
        for name, val, ln, text in command_flags(command):
            doc = command[0][1]
            f = None
            if name == "tf32" and (val or "true").lower() in _TRUE:
                f = _finding("trainer-cuda-setting", doc, ln, f"--tf32 {val}".strip(), text)
                f.severity, f.reason = "blocking", f"{where} passes --tf32: {TF32_STOP}: {doc}:{ln}"
            elif name in REMOVED_FLAGS:
                lib, ver = REMOVED_FLAGS[name]
                msg = f"--{name} (TrainingArguments field removed in {lib} {ver})"
                f = _finding("stack-upgrade", doc, ln, msg, text)
                kept = next((p for p in pins if p.library == lib and not _allows_from(p, Version(ver))), None)
                if lenient:
                    f.reason = (
                        f"{script} parses with return_remaining_strings=True, so on {lib} >= {ver} the flag is "
                        f"dropped silently (the setting is lost, the run goes on): {doc}:{ln}"
                    )
                elif kept is not None:
                    f.reason = (
                        f"the requirement {lib}{kept.spec} ({kept.file}:{kept.line}) installs a release that still "
                        f"has --{name}; the upgrade to {lib} >= {ver} the neuron device needs makes HfArgumentParser "
                        f"raise on it, so the flag goes with that upgrade: {doc}:{ln}"
                    )
                else:
                    f.severity = "blocking"
                    f.reason = (
                        f"{where}: HfArgumentParser raises on --{name}, a field {lib} {ver} removed, so the command "
                        f"stops at argument parsing on the current stack TorchNeuron needs: {doc}:{ln}"
                    )
            elif name == "logging_steps" and val == "1":
                f = _finding("host-sync-in-loop", doc, ln, "--logging_steps 1 (the loss read back every step)", text)
                f.reason = f"performance item: the Trainer reads the loss back to the host every step ({doc}:{ln})"
            elif name == "optim" and val in BNB_OPTIMIZERS:
                f = _finding("bnb-optimizer", doc, ln, f"--optim {val}", text, subject=val)
                f.severity = "blocking"
                f.reason = f"{where} asks the Trainer for bitsandbytes' {val}, which has no Neuron backend: {doc}:{ln}"
            elif name == "deepspeed" and val:
                f = _finding("deepspeed", doc, ln, f"--deepspeed {val}", text, subject="deepspeed")
                f.severity, f.reason = (
                    "blocking",
                    f"{where} runs the Trainer on DeepSpeed: {DEEPSPEED_STOP}: {doc}:{ln}",
                )
            elif name == "fsdp" and val and val.lower() not in ("false", "no", "none", '""'):
                f = _finding("trainer-fsdp", doc, ln, f"--fsdp {val!r}", text)
                tf = next((p for p in pins if p.library == "transformers"), None)
                f.reason = (
                    f"the Trainer's FSDP (--fsdp {val!r}): FSDP2 by default from transformers 5.10, the sharding the "
                    f"Neuron torch.distributed guide lists; the work is validating it on the neuron device"
                    + (f" (requirement {tf.library}{tf.spec} at {tf.file}:{tf.line})" if tf else "")
                )
            if f is not None:
                out.append(f)
        out += _alternatives(root, script, command)
        if script in superseded:
            for f in out[first:]:
                if f.severity == "blocking":
                    f.severity = "warning"
                    f.reason = f"blocks when it is run: {f.reason}"
    return out


def _alternatives(root: Path, script: str, default: list[tuple[int, str, str]]) -> list[Finding]:
    """``--deepspeed`` in another command of the README (or a document it links) that runs ``script``: it blocks
    when that command is used."""
    out: list[Finding] = []
    first = (default[0][1], default[0][0]) if default else None
    for doc in sorted(root.glob("*.md")):
        try:
            lines = doc.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for cmd in logical_lines(doc.name, lines):
            joined = join_continued("\n".join(text for _, _, text in cmd))
            if script not in joined or not _LAUNCH.search(joined) or (doc.name, cmd[0][0]) == first:
                continue
            for name, val, ln, text in command_flags(cmd):
                if name == "deepspeed" and val:
                    f = _finding("deepspeed", doc.name, ln, f"--deepspeed {val}", text, subject="deepspeed")
                    f.reason = (
                        f"blocks when used: another command for {script} ({doc.name}:{cmd[0][0]}) runs the Trainer "
                        f"on DeepSpeed: {DEEPSPEED_STOP}"
                    )
                    out.append(f)
    return list({(f.file, f.line): f for f in out}.values())


def _finding(rule: str, file: str, line: int, message: str, snippet: str, subject: str | None = None) -> Finding:
    return Finding.from_rule(
        RULES[rule], file=file, line=line, message=message, snippet=snippet.strip()[:200], subject=subject
    )


def mark_trainer_stack(findings: list[Finding], pins: list[Pin]) -> None:
    """An ``hf-trainer`` line that blocks an entry point blocks only on a stack pinned below the releases that
    place on the neuron device; on a current one it is a validation item."""
    old = below_neuron(pins)
    for f in findings:
        if f.rule != "hf-trainer" or f.severity != "blocking":
            continue
        if old is not None:
            f.reason = (
                f"{f.reason}; the requirement {old.library}{old.spec} ({old.file}:{old.line}) is below "
                f"{old.library} {NEURON_DEVICE_FROM[old.library]}, the first release that places on the neuron "
                f"device: the work is upgrading the pinned stack"
            )
            continue
        f.severity = "warning"
        f.reason = (
            "validation item: transformers >= 5.4 and accelerate >= 1.13 place on the neuron device (checked in "
            "their wheels; assumed to detect TorchNeuron native, unverified on hardware), and the requirements allow "
            f"them: check the loop, precision and eval/save cadence on neuron ({f.file}:{f.line})"
        )

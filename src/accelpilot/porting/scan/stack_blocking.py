"""When a ``stack-upgrade`` site blocks (``stack_upgrade.py`` finds the sites in one file): an import-time site in a
module the default path imports at module level, a call-time site in an entry point's own file (or, for an ``stft``
or a two-element-kernel ``Conv1d``, in a module the default path imports), each with the stack it fails on; a
call-time site in a helper no source names never runs."""

from __future__ import annotations

from collections.abc import Callable

from accelpilot.porting.findings import NOT_PORTING, Finding
from accelpilot.porting.scan.default_path import unused_holders
from accelpilot.porting.scan.families import _module_names, imports_of
from accelpilot.porting.scan.stack_upgrade import CALL_TIME, IMPORT_TIME, RULE


def _reach(roots: set[str], read: Callable[[str], bytes | None], mods: dict[str, str]) -> set[str]:
    """``default_path.reached`` over module-level imports, reading only the files it reaches."""
    seen = set(roots)
    todo = list(roots)
    while todo:
        rel = todo.pop()
        data = read(rel)
        for t in imports_of(rel, data, mods, top_level=True) if data is not None else ():
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


# The stack a call-time site fails on, by a marker of its message (the first that matches); else Hugging Face's.
UNUSED_HELPER = "unused-helper"
_CALL_STACKS = (
    ("pack_padded_sequence", "the torch 2.x TorchNeuron needs"),
    ("librosa.output", "librosa 0.8 or later, what a fresh install resolves"),
    ("(torchvision ", "the torchvision paired with the torch TorchNeuron needs"),
    ("torchaudio", "the torchaudio paired with the torch TorchNeuron needs"),
    ("(scikit-learn ", "scikit-learn 1.8 or later, what a fresh install resolves"),
    ("numpy.random has no", "any numpy"),
    ("stft(", "the torch 2.x TorchNeuron needs"),
    ("Conv1d(", "the torch 2.x TorchNeuron needs"),
)
_HF_STACK = "the current Hugging Face stack (transformers >= 5.4 is the first to place on the neuron device)"


def mark_stack_blocking(
    findings: list[Finding],
    roots: set[str],
    entries: dict[str, str],
    read: Callable[[str], bytes | None],
    rels: list[str],
) -> None:
    """An import-time site in a module the default path imports at module level blocks: the import fails (or, for
    a version assert, stops unless exactly the pinned version is installed). A call of a removed Hugging Face (or
    torchvision) argument blocks in an entry point's own file: it runs when the entry point does."""
    # a removed call in a helper nothing names never runs (Wav2Lip's ``save_wavenet_wav``); not in an entry point's
    # file (a README example calls it) nor in a package, whose functions are its users' API
    package = any(r in rels for r in ("setup.py", "setup.cfg", "pyproject.toml"))
    calls = [
        f
        for f in findings
        if f.rule == RULE and f.subject == CALL_TIME and f.context is None and f.porting and f.file not in entries
    ]
    unused = unused_holders(calls, read, rels) if calls and not package else set()
    for f in calls:
        if id(f) in unused:
            f.context, f.porting, f.reason = UNUSED_HELPER, False, NOT_PORTING[UNUSED_HELPER]
    for f in findings:
        if f.rule == RULE and f.subject == CALL_TIME and f.context is None and f.porting and f.file in entries:
            f.severity = "blocking"
            stack = next((s for marker, s in _CALL_STACKS if marker in f.message), _HF_STACK)
            f.reason = (
                f"entry point {f.file} ({entries[f.file]}) calls it, and it fails on {stack}: {f.message} at "
                f"{f.file}:{f.line}"
            )
    sites = [f for f in findings if f.rule == RULE and f.subject == IMPORT_TIME and f.context is None and f.porting]
    # ``torch.stft`` without ``return_complex`` in a module the default path imports: a feature extraction
    # (HiFi-GAN's and VITS's mel_spectrogram) that runs on every sample or step, and raises on torch >= 2.0; a
    # ``Conv1d`` with a two-element kernel, built and run by the model the default path imports
    stfts = [
        f
        for f in findings
        if f.rule == RULE
        and f.subject == CALL_TIME
        and f.message.startswith(("stft(", "Conv1d("))
        and f.context is None
        and f.porting
        and f.severity != "blocking"
    ]
    if not (sites or stfts) or not roots:
        return
    default = _reach(roots, read, _module_names(rels, roots))
    for f in stfts:
        if f.file in default:
            f.severity = "blocking"
            what = "STFT raises RuntimeError on a real input" if f.message.startswith("stft(") else "Conv1d raises"
            f.reason = (
                f"the default path imports {f.file} (from {', '.join(sorted(entries or roots)[:3])}), whose {what} "
                f"on the torch 2.x TorchNeuron needs: {f.message} at {f.file}:{f.line}"
            )
    for f in sites:
        if f.file not in default:
            continue
        how = (
            f"entry point {f.file} ({entries[f.file]}) runs it when it starts"
            if f.file in entries
            else f"the default path imports {f.file} at module level (from {', '.join(sorted(roots)[:3])})"
        )
        fails = (
            "it stops the import unless exactly the pinned version is installed, a pin made for an older stack than "
            "the torch 2.x TorchNeuron needs"
            if f.message.startswith("assert")
            else "it fails when the module is imported on the torch 2.x / numpy stack TorchNeuron needs"
        )
        f.severity = "blocking"
        f.reason = f"{how}, and {fails}: {f.message} at {f.file}:{f.line}"

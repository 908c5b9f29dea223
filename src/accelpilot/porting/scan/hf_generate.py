"""Hugging Face generation with a cache that grows one token per step (rule ``growing-sequence``, issue 27: the
held-out labellers' decode-shape items of Alpaca-LoRA, BLIP, LLaVA, QLoRA and TinyLlama).

``model.generate(..., max_new_tokens=64)`` (or ``num_beams=3``, ``do_sample=True``, ``**gen_kwargs``) in a file that
imports transformers, and ``pipeline("text-generation", ...)``: ``generate`` keeps a ``DynamicCache`` that is
concatenated onto every decode step, so each step has a new key/value length and a compiled graph per length; a
beam search also reorders the cache. ``cache_implementation="static"`` (a preallocated cache) is the fix, and a
call that passes it is not a line. The calls of a repository are one item (``items.HF_GENERATE``).
A method of the repository's own named ``generate`` (minGPT's) has no
transformers import beside it, or no generation keyword; a model another package builds (mamba_ssm's
``MambaLMHeadModel.from_pretrained``) has a ``generate`` of its own. A byte check decides whether the file is parsed."""

from __future__ import annotations

import ast

from accelpilot.porting.items import HF_GENERATE
from accelpilot.porting.scan.patterns import RawFinding

RULE = "growing-sequence"
_KWARGS = frozenset(
    {
        "max_new_tokens",
        "max_length",
        "min_length",
        "num_beams",
        "do_sample",
        "generation_config",
        "streamer",
        "top_p",
        "top_k",
        "temperature",
        "use_cache",
        "return_dict_in_generate",
        "output_scores",
        "num_return_sequences",
        "repetition_penalty",
        "assistant_model",
    }
)


def _static(call: ast.Call) -> bool:
    return any(
        k.arg == "cache_implementation" and isinstance(k.value, ast.Constant) and k.value.value == "static"
        for k in call.keywords
    )


_HF = ("transformers", "peft")


def _own_models(tree: ast.Module) -> set[str]:
    """Names bound to a model that another library (or the repository itself) builds: ``model =
    MambaLMHeadModel.from_pretrained(...)`` with ``MambaLMHeadModel`` imported from ``mamba_ssm`` (its ``generate``
    is mamba's own, with a fixed-size recurrent state)."""
    foreign = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and not (n.module or "").startswith(_HF)
        for a in n.names
    }
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            f = n.value.func
            # loaded by ``from_pretrained`` only: a wrapper the repository builds around GenerationMixin (open_clip's
            # ``MultimodalGenerationWrapper(...)``) runs Hugging Face's generate
            built = f.value if isinstance(f, ast.Attribute) and f.attr == "from_pretrained" else None
            if isinstance(built, ast.Name) and built.id in foreign:
                out |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    return out


def generate_calls(data: bytes) -> list[RawFinding]:
    """The ``growing-sequence`` lines of Hugging Face ``generate`` calls and text-generation pipelines."""
    if b"transformers" not in data or not (b".generate(" in data or b"text-generation" in data):
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    own = _own_models(tree)
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call) or _static(n):
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "generate" and isinstance(f, ast.Attribute):
            if not any(k.arg is None or k.arg in _KWARGS for k in n.keywords):
                continue
            if isinstance(f.value, ast.Name) and f.value.id in own:
                continue
            msg = "Hugging Face generate(): the KV cache grows one token per decode step (a new shape every step)"
        elif name == "pipeline" and any(
            isinstance(a, ast.Constant) and a.value == "text-generation"
            for a in [*n.args, *(k.value for k in n.keywords if k.arg == "task")]
        ):
            msg = "text-generation pipeline: generate() with a KV cache grown one token per decode step"
        else:
            continue
        ln = n.lineno
        out.append((RULE, ln, msg, lines[ln - 1] if 0 < ln <= len(lines) else "", HF_GENERATE, None))
    return out

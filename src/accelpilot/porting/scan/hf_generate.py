"""Hugging Face generation with a cache that grows one token per step (rule ``growing-sequence``, issue 27: the
held-out labellers' decode-shape items of Alpaca-LoRA, BLIP, LLaVA, QLoRA and TinyLlama).

``model.generate(..., max_new_tokens=64)`` (or ``num_beams=3``, ``do_sample=True``, ``**gen_kwargs``) in a file that
imports transformers, ``pipeline("text-generation", ...)``, and a Hub chat model's ``model.chat(tokenizer, ...)`` /
``stream_chat`` in a file that loads with ``trust_remote_code=True`` (ChatGLM's remote code decodes through
``generate``): ``generate`` keeps a ``DynamicCache`` that is
concatenated onto every decode step, so each step has a new key/value length and a compiled graph per length; a
beam search also reorders the cache. ``cache_implementation="static"`` (a preallocated cache) is the fix, and a
call that passes it is not a line. The calls of a repository are one item (``items.HF_GENERATE``).
A method of the repository's own named ``generate`` (minGPT's) has no
transformers import beside it, or no generation keyword; a model another package builds (mamba_ssm's
``MambaLMHeadModel.from_pretrained``) has a ``generate`` of its own. A byte check decides whether the file is parsed."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.items import HF_GENERATE
from accelpilot.porting.scan.families import raw_imports
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import unit_trees

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


# The lines that load a model, for ``_own_models``.
_LOADS = re.compile(rb"^[^\n]*from_pretrained\(", re.M)


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _candidates(data: bytes) -> list[int]:
    """Lines that may call ``generate`` (``x.generate(``, ``super().generate(``: a name or a call before the dot,
    not prose's backticked `` `.generate(` ``) or build a text-generation pipeline, outside a doctest
    (transformers' own docstrings hold hundreds of ``>>> model.generate(...)`` examples)."""
    out: list[int] = []
    tokens = [b".generate(", b"text-generation"]
    if b"trust_remote_code=True" in data:
        tokens += [b".chat(", b".stream_chat("]  # a Hub chat model's own decode loop (ChatGLM's)
    for token in tokens:
        i = data.find(token)
        while i != -1:
            before = data[i - 1 : i]
            if (token != b"text-generation" and (before.isalnum() or before in (b")", b"]", b"_"))) or (
                token == b"text-generation" and before in (b"'", b'"')
            ):
                start = data.rfind(b"\n", 0, i) + 1
                if not data[start:i].lstrip().startswith((b">>>", b"...")):
                    out.append(_line_of(data, i))
            i = data.find(token, i + 1)
    return out


def _own_models(data: bytes, trees: list[ast.Module]) -> set[str]:
    """Names bound to a model that another library (or the repository itself) builds: ``model =
    MambaLMHeadModel.from_pretrained(...)`` with ``MambaLMHeadModel`` imported from ``mamba_ssm`` (its ``generate``
    is mamba's own, with a fixed-size recurrent state)."""
    foreign = {
        name.strip().split(" as ")[-1].strip().rstrip(")")
        for module, names, _ in raw_imports(data)
        if module is not None and not module.startswith(_HF)
        for name in names.split(",")
    }
    out: set[str] = set()
    for n in (n for t in trees for n in ast.walk(t)):
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
    remote = b"trust_remote_code=True" in data
    if b"transformers" not in data or not (
        b".generate(" in data or b"text-generation" in data or (remote and b"chat(" in data)
    ):
        return []
    at = _candidates(data)
    if not at:
        return []
    # only the top-level blocks holding a candidate are parsed: a fraction of a large file; those loading a model
    # only when a call's receiver is a name that one may have loaded
    trees = unit_trees(data, at)
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    own: set[str] | None = None
    for n in (n for t in trees for n in ast.walk(t)):
        if not isinstance(n, ast.Call) or _static(n):
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "generate" and isinstance(f, ast.Attribute):
            if not any(k.arg is None or k.arg in _KWARGS for k in n.keywords):
                continue
            if isinstance(f.value, ast.Name):
                if own is None:
                    own = _own_models(
                        data, unit_trees(data, [_line_of(data, m.start()) for m in _LOADS.finditer(data)])
                    )
                if f.value.id in own:
                    continue
            msg = "Hugging Face generate(): the KV cache grows one token per decode step (a new shape every step)"
        elif name in ("chat", "stream_chat") and isinstance(f, ast.Attribute) and n.args and remote:
            msg = f"the Hub model's {name}() (trust_remote_code) decodes with generate(): a KV cache grown every step"
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

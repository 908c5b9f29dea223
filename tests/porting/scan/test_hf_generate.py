"""Hugging Face generation (``scan/hf_generate.py``, rule ``growing-sequence``): each ``generate`` call and
text-generation pipeline found, beside the near misses, and every call of a repository one item."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.hf_generate import generate_calls

HEAD = "from transformers import AutoModelForCausalLM\n"


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (HEAD + "out = model.generate(input_ids=ids, num_beams=4, max_new_tokens=128)\n", [2]),
        (HEAD + "out = self.model.generate(**gen_kwargs)\n", [2]),
        ("import transformers\npipe = transformers.pipeline('text-generation', model=m)\n", [2]),
        # open_clip: a wrapper the repository builds around GenerationMixin runs Hugging Face's generate
        (HEAD + "wrapper = MultimodalGenerationWrapper(m)\nout = wrapper.generate(t, generation_config=gc)\n", [3]),
        # ChatGLM: a Hub chat model's remote code decodes through generate()
        (
            "from transformers import AutoModel\n"
            "model = AutoModel.from_pretrained('THUDM/chatglm-6b', trust_remote_code=True)\n"
            "for r, h in model.stream_chat(tokenizer, query, history=h):\n    print(r)\n",
            [3],
        ),
    ],
)
def test_a_hugging_face_generation_is_found(source: str, lines: list[int]) -> None:
    found = generate_calls(source.encode())
    assert [r[1] for r in found] == lines
    assert all(r[0] == "growing-sequence" and r[4] == "hf-generate" for r in found)


@pytest.mark.parametrize(
    "source",
    [
        "out = model.generate(x, 500, do_sample=True, top_k=10)\n",  # minGPT's own generate: no transformers
        HEAD + "out = model.generate(ids)\n",  # no generation keyword: maybe the repository's own method
        HEAD + "out = model.generate(ids, max_new_tokens=8, cache_implementation='static')\n",  # the fix
        # mamba's own MambaLMHeadModel.generate (a fixed-size recurrent state)
        HEAD
        + "from mamba_ssm.models import MambaLMHeadModel\n"
        + "model = MambaLMHeadModel.from_pretrained(name)\n"
        + "out = model.generate(input_ids=ids, max_length=100)\n",
        HEAD + "pipe = pipeline('fill-mask', model=m)\n",
        HEAD + "reply = client.chat(messages)\n",  # a chat() of no Hub remote code (an API client)
    ],
)
def test_near_misses_are_not_found(source: str) -> None:
    assert generate_calls(source.encode()) == []


def test_every_generate_call_of_a_repository_is_one_item_of_its_own(tmp_path: Path) -> None:
    """BLIP's caption and VQA generate calls are one port (a static cache): one item, which does not absorb the
    other compile hazards of a file holding a call (VQA's boolean mask in ``rank_answer`` is its own item)."""
    (tmp_path / "caption.py").write_text(HEAD + "def caption(m, x):\n    return m.generate(x, num_beams=3)\n")
    (tmp_path / "vqa.py").write_text(
        "import torch\n"
        + HEAD
        + "def answer(m, x):\n    return m.generate(x, max_length=10)\n\n"
        + "def rank(ids, top):\n    return ids[top >= 0, top]\n"
    )
    items = build_items(scan_path(tmp_path).findings)
    gen = [i for i in items if i.rule == "growing-sequence"]
    assert len(gen) == 1
    assert sorted((ln.file, ln.line) for ln in gen[0].lines) == [("caption.py", 3), ("vqa.py", 4)]
    assert any(i.rule == "boolean-mask-index" for i in items)

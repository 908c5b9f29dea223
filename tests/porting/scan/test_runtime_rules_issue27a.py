"""Framework runtimes on the default training path (issue 27): a model loaded through bitsandbytes
(``load_in_8bit=True``) on an entry point blocks, with the line that reaches it; the opt-in flag does not."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


FINETUNE = """\
from transformers import AutoModelForCausalLM
from peft import prepare_model_for_int8_training
model = AutoModelForCausalLM.from_pretrained(
    "base",
    load_in_8bit=True,
)
model = prepare_model_for_int8_training(model)
"""

GENERATE = """\
from transformers import AutoModelForCausalLM
def main(load_8bit: bool = False):
    return AutoModelForCausalLM.from_pretrained("base", load_in_8bit=load_8bit)
if __name__ == "__main__":
    main()
"""

README = "Train: `python finetune.py`. Serve: `python generate.py`.\n"


def test_a_hard_coded_8bit_load_on_an_entry_point_blocks(tmp_path: Path) -> None:
    """``load_in_8bit=True`` and ``prepare_model_for_int8_training`` in ``finetune.py`` (a README command) are one
    bitsandbytes item, blocking with its line named. Stays out: ``load_in_8bit=load_8bit`` (opt-in, default
    False)."""
    _write(tmp_path, {"finetune.py": FINETUNE, "generate.py": GENERATE, "README.md": README})
    log = scan_path(tmp_path, jobs=1)
    (item,) = [i for i in log.items if i.rule == "bitsandbytes"]
    assert [(ln.file, ln.line) for ln in item.lines] == [("finetune.py", 5), ("finetune.py", 7)]
    assert item.severity == "blocking"
    assert item.reason is not None and "load_in_8bit=True at finetune.py:5" in item.reason
    assert not [f for f in log.findings if f.file == "generate.py" and f.rule == "bitsandbytes"]

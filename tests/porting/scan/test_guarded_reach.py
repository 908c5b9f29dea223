"""Blocking by reach, from round 29's held-out misses: a runtime library reached only through an import inside
``try: ... except ImportError`` (``scan/guarded_reach.py``, llm-awq's TinyChat behind ``pre_quant.py``), or not
reached from the default path at all in a package; CPU fallbacks written with ``torch.device('cuda')`` in the arm
or a parenthesised condition (PANNs); and ``attn_implementation="flash_attention_2"`` on an entry point's own line
(LLaVA's ``train_mem.py``), which blocks."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path

GUARDED = "import torch\ntry:\n    from extra.models import Net\nexcept ImportError:\n    Net = None\n\nprint(torch.ones(1))\n"
OPEN = "import torch\nfrom extra.models import Net\n\nprint(torch.ones(1))\n"
MODELS = "from flash_attn import flash_attn_func\n\n\nclass Net:\n    pass\n"


def _lines(root: Path, rule: str) -> dict[tuple[str, int], tuple[str, str]]:
    return {
        (f.file or "", f.line or 0): (f.severity, f.reason or "")
        for f in scan_path(root, jobs=1).findings
        if f.rule == rule and f.context is None
    }


def test_a_runtime_behind_an_import_error_guard_blocks_only_when_used(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'thing'\n",
        "README.md": "Run `python run.py`.\n",
        "run.py": GUARDED,
        "extra/__init__.py": "",
        "extra/models.py": MODELS,
        "extra/kernels.py": "import deepspeed\n",  # a module of the package nothing on the default path imports
    }
    root = write_tree(tmp_path, files)
    severity, reason = _lines(root, "flash-attn")[("extra/models.py", 1)]
    assert severity == "warning"
    assert reason.startswith("reached only through an import inside `try: ... except ImportError` (run.py:3)")
    assert "runs without flash_attn" in reason
    severity, reason = _lines(root, "deepspeed")[("extra/kernels.py", 1)]
    assert (severity, reason.split(":")[0]) == ("warning", "blocks when extra/kernels.py is imported")
    (root / "run.py").write_text(OPEN)  # near miss: the same import, unguarded
    assert _lines(root, "flash-attn")[("extra/models.py", 1)][0] == "blocking"


def test_cpu_fallbacks_with_the_device_built_in_the_arm_do_not_block(tmp_path: Path) -> None:
    infer = (
        "import argparse\nimport torch\n\nargs = argparse.ArgumentParser().parse_args()\n"
        "a = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')\n"
        "b = 'cuda' if (args.cuda and torch.cuda.is_available()) else 'cpu'\n"
        "c = torch.device('cuda')\n"
        "d = torch.device('cuda:' + str(args.gpu)\n"
        "                 if torch.cuda.is_available() else 'cpu')\n"  # torchdiffeq's cnf.py, over two lines
        "e = [torch.device('cuda:' + str(k)) for k in range(2)]\n"  # a device list: read since round 42, no fallback
        # federated-learning's main_fed.py, and the f-string form
        "f = torch.device('cuda:{}'.format(args.gpu) if torch.cuda.is_available() and args.gpu != -1 else 'cpu')\n"
        "g = torch.device(f'cuda:{args.gpu}' if torch.cuda.is_available() else 'cpu')\n"
        "h = torch.device('cuda:{}'.format(args.gpu))\n"
        "i = torch.device('cuda' if args.cuda\n"  # pytorch-maml's train.py: the test on the next line
        "                 and torch.cuda.is_available() else 'cpu')\n"
        "j = torch.device('cuda' if args.cuda\n"  # near miss: no availability test, only the flag
        "                 and args.fast else 'cpu')\n"
    )
    root = write_tree(tmp_path, {"README.md": "Run `python infer.py --cuda`.\n", "infer.py": infer})
    lines = _lines(root, "cuda-device-literal")
    assert lines[("infer.py", 5)][0] == lines[("infer.py", 6)][0] == "warning"
    assert lines[("infer.py", 5)][1].startswith("performance item: off CUDA it falls back to the CPU")
    assert lines[("infer.py", 7)][0] == "blocking"  # near miss: no fallback
    assert lines[("infer.py", 8)][1].startswith("performance item: off CUDA it falls back to the CPU")
    assert lines[("infer.py", 10)][0] == "blocking"
    for line in (11, 12):
        assert lines[("infer.py", line)][1].startswith("performance item: off CUDA it falls back to the CPU"), line
    assert lines[("infer.py", 13)][0] == "blocking"  # near miss: the same string with no fallback
    assert lines[("infer.py", 14)][1].startswith("performance item: off CUDA it falls back to the CPU")
    assert lines[("infer.py", 16)][0] == "blocking"


def test_flash_attention_2_asked_on_an_entry_points_line_blocks(tmp_path: Path) -> None:
    train = (
        "from transformers import AutoModelForCausalLM\n\n"
        "model = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2')\n"
    )
    helper = "def load(m):\n    return m.from_pretrained('m', attn_implementation='flash_attention_2')\n"
    root = write_tree(
        tmp_path,
        {"README.md": "Train with `python train.py`.\n", "train.py": train + "import helper\n", "helper.py": helper},
    )
    lines = _lines(root, "flash-attn")
    severity, reason = lines[("train.py", 3)]
    assert severity == "blocking" and "attn_implementation='flash_attention_2'" in reason
    assert lines[("helper.py", 2)][0] == "warning"  # not the entry point's own line

"""Round 25's tuning fixes (issue 27): StreamingLLM's only README command runs a script in ``examples/`` (after a
``python setup.py develop``), and its patched Llama attention grows the legacy tuple KV cache with ``torch.cat``; the
EGNN scripts choose ``"cuda" if args.cuda else "cpu"`` with ``args.cuda = ... torch.cuda.is_available()`` and wrap in
DataParallel only when ``torch.cuda.device_count() > 1``; Denoiser's config sets ``device: cuda`` and its solver,
not the entry point, reads ``args.device``."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import rule_lines

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.python import scan_python

ATTENTION = """\
import torch


def forward(self, hidden_states, past_key_value=None, use_cache=False):
    key_states = self.k_proj(hidden_states)
    value_states = self.v_proj(hidden_states)
    if past_key_value is not None:
        key_states = torch.cat([past_key_value[0], key_states], dim=2)
        value_states = torch.cat([past_key_value[1], value_states], dim=2)
    past_key_value = (key_states, value_states) if use_cache else None
    return key_states, past_key_value
"""


def test_the_legacy_tuple_kv_cache_grown_with_cat_is_a_growing_sequence() -> None:
    lines = [(ln, m) for r, ln, m, *_ in scan_python(ATTENTION) if r == "growing-sequence"]
    assert [ln for ln, _ in lines] == [8, 9] and "KV cache" in lines[0][1]
    # near miss: a concatenation of two of this step's tensors grows nothing
    assert not [
        r
        for r, *_ in scan_python(
            ATTENTION.replace("past_key_value[0]", "value_states[0]").replace("past_key_value[1]", "key_states[1]")
        )
        if r == "growing-sequence"
    ]


def test_the_readmes_only_command_runs_its_example_script_after_the_package_install(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "```bash\npip install transformers==4.33.0\npython setup.py develop\n```\n\n"
        "```bash\nCUDA_VISIBLE_DEVICES=0 python examples/run_streaming_llama.py --enable_streaming\n```\n"
    )
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='streaming_llm')\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "run_streaming_llama.py").write_text(
        "import torch\n\n\nif __name__ == '__main__':\n    x = torch.zeros(2).cuda()\n"
    )
    # the example folder is the default path: its CUDA placement stops the README's command
    assert rule_lines(tmp_path, "cuda-call") == [("examples/run_streaming_llama.py", 5, "blocking")]
    # near miss: a README that also runs a script of its own keeps the example apart
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "README.md").write_text((tmp_path / "README.md").read_text() + "\n```\npython train.py\n```\n")
    assert [s for *_, s in rule_lines(tmp_path, "cuda-call")] == ["info"]


def test_a_device_chosen_by_an_attribute_flag_bound_to_the_probe_falls_back(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython main_qm9.py --n_epochs 3000\n```\n")
    (tmp_path / "main_qm9.py").write_text(
        "import argparse\nimport torch\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--no-cuda', action='store_true')\nargs = parser.parse_args()\n"
        "args.cuda = not args.no_cuda and torch.cuda.is_available()\n"
        "device = torch.device('cuda' if args.cuda else 'cpu')\nmodel = torch.nn.Linear(2, 2).to(device)\n"
        "if torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model.cpu()).cuda()\n"
    )
    assert {s for *_, s in rule_lines(tmp_path, "cuda-device-literal") + rule_lines(tmp_path, "cuda-call")} == {
        "warning"
    }
    # near miss: a flag the file does not bind to the probe is the user's choice, defaulting to CUDA
    (tmp_path / "main_qm9.py").write_text(
        (tmp_path / "main_qm9.py").read_text().replace(" and torch.cuda.is_available()", "")
    )
    assert ("main_qm9.py", 8, "blocking") in rule_lines(tmp_path, "cuda-device-literal")


def test_a_config_device_blocks_when_any_module_reads_the_configs_device(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython train.py\n```\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.yaml").write_text("device: cuda\nepochs: 500\n")
    (tmp_path / "train.py").write_text(
        "import hydra\nfrom solver import Solver\n\n\n@hydra.main(config_path='conf/config.yaml')\n"
        "def main(args):\n    Solver(args).train()\n"
    )
    (tmp_path / "solver.py").write_text(
        "class Solver:\n    def __init__(self, args):\n        self.device = args.device\n"
    )
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.key == "setting|config-device"]
    assert [i.severity for i in items] == ["blocking"]
    # near miss: no module reads a device from the config
    (tmp_path / "solver.py").write_text("class Solver:\n    def __init__(self, args):\n        self.device = 'cpu'\n")
    assert [i.severity for i in scan_path(tmp_path, jobs=1).items if i.key == "setting|config-device"] == ["warning"]


def test_a_pad_sequence_in_a_helper_a_collator_calls_pads_each_batch(tmp_path: Path) -> None:
    """The E(3) diffusion's ``qm9/data/collate.py``: ``collate_fn`` applies ``batch_stack`` (``pad_sequence``) to
    every property, so each batch is padded to its largest molecule. Near miss: a helper no collator calls."""
    source = (
        "import torch\n\n\ndef batch_stack(props):\n    return torch.nn.utils.rnn.pad_sequence(props, batch_first=True)\n"
        "\n\nclass PreprocessQM9:\n    def collate_fn(self, batch):\n"
        "        return {k: batch_stack([m[k] for m in batch]) for k in batch[0]}\n"
    )
    assert [ln for r, ln, *_ in scan_python(source) if r == "dynamic-padding"] == [5]
    unused = source.replace("batch_stack([m[k] for m in batch])", "[m[k] for m in batch]")
    assert [ln for r, ln, *_ in scan_python(unused) if r == "dynamic-padding"] == []

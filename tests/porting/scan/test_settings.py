"""Settings false by default gate kernels and modules (issue 27: "one behind a flag is 'blocks when FLAG is set'"):
GPT-NeoX's fused kernels behind ``neox_args`` flags that the default command's configs leave false, its fused
softmax behind a kernel probe with a PyTorch path, and its MoE module imported only when ``num_experts > 1``."""

from __future__ import annotations

import ast
from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.settings import code_defaults, default_configs

_ARGS = """\
from dataclasses import dataclass


@dataclass
class NeoXArgsModel:
    rope_fusion: bool = False
    moe_num_experts: int = 1
"""

_README = """\
```
python3 deepy.py train.py /path/to/configs/my_model.yml
python ./deepy.py train.py -d configs 125M.yml local_setup.yml
```
"""

_KERNELS = """\
from torch.utils import cpp_extension


def load(neox_args=None):
    return cpp_extension.load(name="fused_rope", sources=["fused_rope.cpp", "fused_rope_cuda.cu"])
"""

_INIT = """\
from megatron import fused_kernels


def initialize_megatron(neox_args):
    if neox_args.rope_fusion:
        fused_kernels.load(neox_args)
"""

_DEEPY = """\
import sys
from megatron.initialize import initialize_megatron
from megatron.model.transformer import Layer

if __name__ == "__main__":
    initialize_megatron(sys.argv)
    Layer(sys.argv, 0)
"""

_LAYER = """\
class Layer:
    def __init__(self, neox_args, layer_number):
        self.num_experts = neox_args.moe_num_experts if layer_number % 2 == 0 else 1
        if self.num_experts > 1:
            from megatron.model.moe import MoE
            self.mlp = MoE()
"""

_MOE = """\
import megablocks.ops


class MoE:
    def forward(self, x):
        return megablocks.ops.sort(x)
"""


def _neox(root: Path, rope: str = "false", experts: str = "1") -> None:
    (root / "README.md").write_text(_README)
    (root / "deepy.py").write_text(_DEEPY)
    (root / "configs").mkdir()
    (root / "configs" / "125M.yml").write_text(f'{{\n  "rope_fusion": {rope},\n  "moe_num_experts": {experts}\n}}\n')
    (root / "configs" / "local_setup.yml").write_text('{\n  "data_path": "data/enwik8"\n}\n')
    (root / "configs" / "llama.yml").write_text('{\n  "rope_fusion": true\n}\n')  # shipped, not the default
    pkg = root / "megatron"
    (pkg / "neox_arguments").mkdir(parents=True)
    (pkg / "model").mkdir()
    (pkg / "fused_kernels").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model" / "__init__.py").write_text("")
    (pkg / "neox_arguments" / "__init__.py").write_text("")
    (pkg / "neox_arguments" / "neox_args.py").write_text(_ARGS)
    (pkg / "fused_kernels" / "__init__.py").write_text(_KERNELS)
    (pkg / "fused_kernels" / "fused_rope_cuda.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    (pkg / "initialize.py").write_text(_INIT)
    (pkg / "model" / "transformer.py").write_text(_LAYER)
    (pkg / "model" / "moe.py").write_text(_MOE)


def _line(root: Path, file: str, start: str) -> tuple[str, str | None]:
    [f] = [f for f in scan_path(root, jobs=1).findings if f.file == file and f.message.startswith(start)]
    return f.severity, f.reason


def test_defaults_come_from_dataclass_fields_and_argparse() -> None:
    tree = ast.parse(
        _ARGS + "import argparse\np = argparse.ArgumentParser()\np.add_argument('--use_fused', action='store_true')\n"
        "p.add_argument('--layers', type=int, default=12)\np.add_argument('--use-amp', '--amp', action='store_false')\n"
    )
    assert code_defaults([tree]) == {
        "rope_fusion": False,
        "moe_num_experts": 1,
        "use_fused": False,
        "layers": 12,
        "use_amp": True,  # argparse names it after the first long option
    }


def test_the_first_command_whose_config_files_exist_is_the_default_configuration() -> None:
    present = {"deepy.py", "configs/125M.yml", "configs/local_setup.yml", "configs/my_model.yml.example"}
    assert default_configs([_README], ["deepy.py"], present) == ["configs/125M.yml", "configs/local_setup.yml"]
    assert default_configs(["python deepy.py train.py /path/to/configs/my_model.yml\n"], ["deepy.py"], present) == []


def test_a_kernel_built_only_when_a_setting_is_on_blocks_only_when_it_is(tmp_path: Path) -> None:
    _neox(tmp_path)
    severity, reason = _line(tmp_path, "megatron/fused_kernels/__init__.py", "load(")
    assert severity == "warning"
    assert reason is not None and "blocks when `neox_args.rope_fusion`" in reason and "configs/125M.yml" in reason


def test_the_same_kernel_blocks_when_the_default_config_turns_the_setting_on(tmp_path: Path) -> None:
    _neox(tmp_path, rope="true")
    assert _line(tmp_path, "megatron/fused_kernels/__init__.py", "load(")[0] == "blocking"


def test_a_module_imported_only_under_a_setting_is_optional(tmp_path: Path) -> None:
    _neox(tmp_path)
    severity, reason = _line(tmp_path, "megatron/model/moe.py", "import megablocks")
    assert severity == "warning"
    assert reason is not None and "`self.num_experts > 1`" in reason


def test_the_module_blocks_when_the_default_config_asks_for_experts(tmp_path: Path) -> None:
    _neox(tmp_path, experts="8")
    assert _line(tmp_path, "megatron/model/moe.py", "import megablocks")[0] == "blocking"


def test_without_a_default_command_a_setting_some_shipped_config_sets_is_unknown(tmp_path: Path) -> None:
    _neox(tmp_path)
    (tmp_path / "README.md").write_text("```\npython deepy.py train.py /path/to/configs/my_model.yml\n```\n")
    # configs/llama.yml turns rope_fusion on, and no command says which config the default run reads
    assert _line(tmp_path, "megatron/fused_kernels/__init__.py", "load(")[0] == "blocking"


_SOFTMAX = """\
import torch


class ScaledSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, scale):
        import scaled_softmax_cuda
        return scaled_softmax_cuda.forward(inputs, scale)


class FusedScaleMaskSoftmax(torch.nn.Module):
    def forward(self, x):
        if self.is_kernel_available(x):
            return self.forward_fused_softmax(x)
        else:
            return self.forward_torch_softmax(x)

    def is_kernel_available(self, x):
        return self.fusion and x.dtype == torch.float16

    def forward_fused_softmax(self, x):
        return ScaledSoftmax.apply(x, 1.0)

    def forward_torch_softmax(self, x):
        return torch.softmax(x, -1)
"""


def test_an_autograd_function_behind_a_kernel_probe_with_a_torch_path_is_a_performance_item(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('scaled_softmax_cuda', ['scaled_softmax.cpp', 'scaled_softmax_cuda.cu'])\n"
    )
    (tmp_path / "scaled_softmax_cuda.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    (tmp_path / "softmax.py").write_text(_SOFTMAX)
    (tmp_path / "train.py").write_text("from softmax import FusedScaleMaskSoftmax\nFusedScaleMaskSoftmax()(None)\n")
    severity, reason = _line(tmp_path, "softmax.py", "imports the built extension")
    assert severity == "warning"
    assert reason is not None and "forward_torch_softmax" in reason


def test_decoding_state_in_a_params_dataclass_is_no_setting(tmp_path: Path) -> None:
    """mamba's ``if inference_params.seqlen_offset > 0:`` runs the step kernel on every decoding step."""
    (tmp_path / "README.md").write_text("```\npython generate.py\n```\n")
    (tmp_path / "utils.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass InferenceParams:\n    seqlen_offset: int = 0\n"
    )
    (tmp_path / "step.py").write_text(
        "import triton\n\n\n@triton.jit\ndef _kernel(x):\n    pass\n\n\ndef update(x):\n    _kernel[(1,)](x)\n"
    )
    (tmp_path / "generate.py").write_text(
        "from step import update\n\n\ndef decode(x, inference_params):\n"
        "    if inference_params.seqlen_offset > 0:\n        return update(x)\n    return x\n\n\n"
        "if __name__ == '__main__':\n    decode(None, None)\n"
    )
    findings = scan_path(tmp_path, jobs=1).findings
    [launch] = [f for f in findings if f.file == "step.py" and f.message.startswith("launches kernel")]
    assert launch.severity == "blocking"

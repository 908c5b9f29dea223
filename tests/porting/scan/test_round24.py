"""Round 24's tuning fixes (issue 27): ColBERT's host C++ ``load()`` builds and its CUDA builds behind ``if not
use_gpu: return``; GPTQ's CUDA extension that the code imports behind a bare ``except``; DreamerV3's unused
``torch.cuda.Event`` helper, its resume of its own checkpoint and its ``configs.yaml`` that sets ``device: 'cuda:0'``;
Chronos-2's README example with ``device_map="cuda"``."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import rule_lines

from accelpilot.porting.scan import scan_path

EXT = """\
import os
from torch.utils.cpp_extension import load


class Codec:
    @classmethod
    def try_load(cls, use_gpu):
        if hasattr(cls, "loaded") or not use_gpu:
            return
        cls.gpu = load(name="decompress_cu", sources=[os.path.join("d", "decompress.cpp"), "decompress.cu"])


class Scorer:
    @classmethod
    def try_load(cls, use_gpu):
        if hasattr(cls, "loaded") or use_gpu:
            return
        cls.host = load(name="maxsim_cpp", sources=[os.path.join("d", "maxsim.cpp")], extra_cflags=["-O3"])
"""


def _items(root: Path, rule: str) -> dict[str, str]:
    return {i.title: i.severity for i in scan_path(root, jobs=1).items if i.rule == rule}


def test_a_host_cpp_load_is_no_cuda_extension_and_a_gpu_flag_return_guards_the_cuda_build(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython index.py\n```\n")
    (tmp_path / "index.py").write_text(
        "from codec import Codec, Scorer\nCodec.try_load(False)\nScorer.try_load(False)\n"
    )
    (tmp_path / "codec.py").write_text(EXT)
    items = _items(tmp_path, "cpp-extension-cuda")
    # the C++-only build is host code: no item; the CUDA build runs only when the caller says a GPU is in use
    assert items == {"CUDA C++ extension: kernel decompress_cu (codec.py)": "warning"}
    # near miss: the same build without the flag's early return stops the default path
    (tmp_path / "codec.py").write_text(EXT.replace(" or not use_gpu:\n            return", ":\n            return"))
    assert _items(tmp_path, "cpp-extension-cuda") == {"CUDA C++ extension: kernel decompress_cu (codec.py)": "blocking"}


def test_an_extension_the_code_imports_behind_a_fallback_does_not_block_unless_the_package_builds_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "README.md").write_text("```\npython opt.py facebook/opt-125m c4\n```\n")
    (tmp_path / "opt.py").write_text("import torch\nfrom quant import *\n")
    (tmp_path / "quant.py").write_text("try:\n    import quant_cuda\nexcept:\n    print('not installed')\n")
    setup = (
        "from setuptools import setup\nfrom torch.utils import cpp_extension\n"
        "setup(name='quant_cuda', ext_modules=[cpp_extension.CUDAExtension('quant_cuda', ['quant_cuda.cpp', "
        "'quant_kernel.cu'])], cmdclass={'build_ext': cpp_extension.BuildExtension})\n"
    )
    (tmp_path / "setup_cuda.py").write_text(setup)
    (tmp_path / "quant_kernel.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "quant_cuda.cpp").write_text("// binding\n")
    assert set(_items(tmp_path, "cpp-extension-cuda").values()) == {"warning"}
    # near miss: the package's own setup.py builds it, which installing the package runs
    (tmp_path / "setup_cuda.py").rename(tmp_path / "setup.py")
    assert set(_items(tmp_path, "cpp-extension-cuda").values()) == {"blocking"}


def test_an_unused_event_helper_and_a_resume_of_the_runs_own_checkpoint_do_not_block(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython3 dreamer.py --logdir ./logdir\n```\n")
    (tmp_path / "tools.py").write_text(
        "import torch\n\n\nclass TimeRecording:\n    def __enter__(self):\n"
        "        self._st = torch.cuda.Event(enable_timing=True)\n\n\ndef helper():\n    return 1\n"
    )
    (tmp_path / "dreamer.py").write_text(
        "import pathlib\nimport torch\nimport tools\n\n\ndef main(logdir, agent):\n"
        "    agent = agent.cuda()\n"
        "    if (logdir / 'latest.pt').exists():\n        ckpt = torch.load(logdir / 'latest.pt')\n"
        "    torch.save(agent.state_dict(), logdir / 'latest.pt')\n    tools.helper()\n"
    )
    assert rule_lines(tmp_path, "torch-cuda-api") == [("tools.py", 6, "warning")]
    assert [s for *_, s in rule_lines(tmp_path, "checkpoint-map-location")] == ["warning"]
    # near misses: a helper the entry point uses is code that runs; a load of another path is no resume
    (tmp_path / "dreamer.py").write_text(
        (tmp_path / "dreamer.py")
        .read_text()
        .replace("tools.helper()", "tools.TimeRecording()")
        .replace("ckpt = torch.load(logdir / 'latest.pt')", "ckpt = torch.load(logdir / 'pretrained.pt')")
    )
    assert rule_lines(tmp_path, "torch-cuda-api") == [("tools.py", 6, "blocking")]
    assert [s for *_, s in rule_lines(tmp_path, "checkpoint-map-location")] == ["blocking"]


def test_a_config_device_the_entry_point_reads_blocks_and_configs_make_one_item(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython3 dreamer.py --configs dmc_vision\n```\n")
    (tmp_path / "configs.yaml").write_text("defaults:\n  logdir: null\n  device: 'cuda:0'\n  compile: True\n")
    (tmp_path / "other.yaml").write_text("model:\n  ema_device: cuda  # the EMA copy\n")
    (tmp_path / "dreamer.py").write_text(
        "import pathlib\nimport yaml\n\n\ndef main(config, model):\n    model.to(config.device)\n\n\n"
        "if __name__ == '__main__':\n    yaml.safe_load((pathlib.Path('.') / 'configs.yaml').read_text())\n"
    )
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.key == "setting|config-device"]
    assert len(items) == 1 and len(items[0].lines) == 2 and items[0].severity == "blocking"
    assert "configs.yaml" in (items[0].reason or "") and "dreamer.py" in (items[0].reason or "")
    # near miss: an entry point that names the config but places on its own device
    (tmp_path / "dreamer.py").write_text(
        (tmp_path / "dreamer.py").read_text().replace("config.device", "accelerator.device")
    )
    assert [i.severity for i in scan_path(tmp_path, jobs=1).items if i.key == "setting|config-device"] == ["warning"]


def test_a_cuda_placement_in_the_readme_example_blocks_when_the_example_is_the_default_path(tmp_path: Path) -> None:
    (tmp_path / "src" / "chronos").mkdir(parents=True)
    (tmp_path / "src" / "chronos" / "__init__.py").write_text("from .pipeline import Pipeline\n")
    (tmp_path / "src" / "chronos" / "pipeline.py").write_text(
        "class Pipeline:\n    @classmethod\n    def from_pretrained(cls, name, device_map=None):\n        return cls()\n"
    )
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'chronos'\n")
    example = (
        "```python\nfrom chronos import Pipeline\n\npipe = Pipeline.from_pretrained('a/b', device_map='cuda')\n```\n"
    )
    (tmp_path / "README.md").write_text("# Chronos\n\n## Forecasting\n\n" + example)
    assert rule_lines(tmp_path, "cuda-device-literal") == [("README.md", 8, "blocking")]
    # near miss: a README that runs a command has that command as its default path, not the example
    (tmp_path / "README.md").write_text(
        "# Chronos\n\n```\npython src/chronos/pipeline.py\n```\n\n## Forecasting\n\n" + example
    )
    assert rule_lines(tmp_path, "cuda-device-literal") == []


def test_a_cuda_device_constant_of_an_imported_module_blocks_where_the_entry_point_uses_it(tmp_path: Path) -> None:
    """GPTQ: ``modelutils.DEV = torch.device('cuda:0')``, and ``opt.py`` (the README's command) passes ``DEV`` to
    every layer. Near miss: an entry point that uses it only under a CUDA test."""
    (tmp_path / "README.md").write_text("```\npython opt.py facebook/opt-125m c4\n```\n")
    (tmp_path / "modelutils.py").write_text("import torch\n\n\nDEV = torch.device('cuda:0')\n")
    (tmp_path / "opt.py").write_text(
        "import torch\nfrom modelutils import *\n\n\nif __name__ == '__main__':\n    model = torch.nn.Linear(2, 2)\n"
        "    model.to(DEV)\n"
    )
    assert rule_lines(tmp_path, "cuda-device-literal") == [("modelutils.py", 4, "blocking")]
    (tmp_path / "opt.py").write_text(
        (tmp_path / "opt.py")
        .read_text()
        .replace("    model.to(DEV)", "    if torch.cuda.is_available():\n        model.to(DEV)")
    )
    assert rule_lines(tmp_path, "cuda-device-literal") == [("modelutils.py", 4, "warning")]


def test_a_repositorys_own_tokenizer_wrapper_padding_to_the_longest_is_porting_work(tmp_path: Path) -> None:
    """ColBERT's ``doc_tokenization.py`` calls its tokenizer with ``padding='longest', return_tensors='pt'`` for
    every document batch the encoder runs: the batch's length changes per batch, on the device. Near miss: the same
    call in an image processor's file stays host-side (a library's option)."""
    (tmp_path / "README.md").write_text("```\npython index.py\n```\n")
    (tmp_path / "index.py").write_text("from doc_tokenization import DocTokenizer\n")
    call = (
        "class DocTokenizer:\n    def tensorize(self, batch_text):\n"
        "        return self.tok(batch_text, padding='longest', return_tensors='pt')\n"
    )
    (tmp_path / "doc_tokenization.py").write_text(call)
    assert rule_lines(tmp_path, "dynamic-padding") == [("doc_tokenization.py", 3, "warning")]
    (tmp_path / "doc_tokenization.py").rename(tmp_path / "image_processing.py")
    (tmp_path / "index.py").write_text("from image_processing import DocTokenizer\n")
    assert [s for *_, s in rule_lines(tmp_path, "dynamic-padding")] == ["info"]

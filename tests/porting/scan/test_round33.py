"""Round 33's tuning fixes (issue 27): OpenRLHF's Dockerfile uninstalls transformer_engine from its NGC base image,
and its README's first run is ``deepspeed --module openrlhf.cli.train_sft``; Graph WaveNet builds ``nn.Conv1d`` with
a two-dimensional kernel, which current torch rejects at the first forward."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def test_a_package_a_removal_command_takes_out_is_no_dependency(tmp_path: Path) -> None:
    """``pip uninstall ... transformer_engine -y`` removes the package from the image: no CUDA-only-library finding.
    The same name installed after ``&&`` on that line, or on its own ``pip install`` line, stays one."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.11\n"
        "RUN pip uninstall xgboost transformer_engine flash_attn -y\n"
        "RUN apt-get purge -y bitsandbytes && pip install flash_attn\n"
        "RUN pip install transformer_engine\n"
    )
    found = sorted((f.line, f.rule) for f in scan_path(tmp_path, jobs=1).findings if f.rule != "cuda-base-image")
    assert found == [(3, "flash-attn"), (4, "cuda-only-library")]


def test_a_conv1d_with_a_two_element_kernel_blocks_where_the_default_path_builds_it(tmp_path: Path) -> None:
    """Graph WaveNet's ``nn.Conv1d(..., kernel_size=(1, 2))`` in the model ``train.py`` imports: a 4-D weight that
    conv1d rejects at every forward on torch 2.13 (tried), so the default run stops at its first step. A one-element
    or integer kernel, and ``nn.Conv2d(kernel_size=(1, 2))``, are no site."""
    (tmp_path / "README.md").write_text("```\npython train.py\n```\n")
    (tmp_path / "train.py").write_text("import model\n\nnet = model.Net()\n")
    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.gate = nn.Conv1d(32, 32, kernel_size=(1, 2), dilation=2)\n"
        "        self.skip = nn.Conv1d(32, 32, (1, 1))\n"
        "        self.ok = nn.Conv1d(32, 32, kernel_size=(3,))\n"
        "        self.also = nn.Conv1d(32, 32, 3)\n"
        "        self.filt = nn.Conv2d(32, 32, kernel_size=(1, 2))\n"
    )
    sites = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "stack-upgrade"]
    assert sorted((f.line, f.severity) for f in sites) == [(6, "blocking"), (7, "blocking")]
    assert "Conv1d raises" in (sites[0].reason or "")


def test_a_documented_command_passing_device_cuda_to_the_scripts_own_option_blocks(tmp_path: Path) -> None:
    """RobustVideoMatting's documented run, ``python inference.py ... --device cuda``, for a script with its own
    ``--device`` option: blocking on the document's line. Near misses: ``--device cpu``, and a script that
    declares no ``--device`` option (the flag is someone else's)."""
    script = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', type=str, required=True)\n"
    (tmp_path / "README.md").write_text("See [inference](docs/inference.md).\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "inference.md").write_text(
        "```sh\npython inference.py \\\n    --variant mobilenetv3 \\\n    --device cuda \\\n    --output out.mp4\n```\n"
    )
    (tmp_path / "inference.py").write_text(script)

    def cuda_flags() -> list[tuple[str | None, int | None, str]]:
        found = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-device-literal"]
        assert all("entry point inference.py" in (f.reason or "") for f in found)
        return [(f.file, f.line, f.severity) for f in found]

    assert cuda_flags() == [("docs/inference.md", 4, "blocking")]
    (tmp_path / "docs" / "inference.md").write_text("```sh\npython inference.py --device cpu\n```\n")
    assert cuda_flags() == []
    (tmp_path / "docs" / "inference.md").write_text("```sh\npython inference.py --device cuda:0\n```\n")
    (tmp_path / "inference.py").write_text("import torch\n")  # no --device option of its own
    assert cuda_flags() == []

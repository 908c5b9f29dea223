"""Classes read on round 19's repositories after their first score (OLMo): object-store paths are one item per
bucket, and a project copied under ``dependencies/`` is off the repository's default path."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def test_object_store_paths_are_one_item_per_bucket(tmp_path: Path) -> None:
    """OLMo's configs name 6,656 object paths in two buckets: one data-movement item per bucket, not per path.
    Near miss: another bucket is another item."""
    paths = "\n".join(f"  - s3://ai2-llm/preprocessed/part-{i:05d}.npy" for i in range(40))
    (tmp_path / "config.yaml").write_text(f"data:\n  paths:\n{paths}\n  other: gs://other-bucket/x.npy\n")
    log = scan_path(tmp_path, jobs=1)
    titles = sorted(i.title for i in log.items if i.rule == "object-store-uri")
    assert titles == ["object-store location: gs://other-bucket", "object-store location: s3://ai2-llm"]


def test_a_vendored_project_under_dependencies_is_off_the_default_path(tmp_path: Path) -> None:
    """OLMo's ``inference/compression/dependencies/AutoGPTQ/`` (a copy of AutoGPTQ with its own setup.py and CUDA
    extensions): its lines are a warning, "vendored", not the default path's blockers. Near miss: the same
    extension in the repository's own ``ops/`` blocks."""
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='x', ext_modules=[CUDAExtension('qlinear_cuda', ['qlinear.cu'])])\n"
    )
    for base in ("inference/dependencies/AutoGPTQ", "ops"):
        (tmp_path / base).mkdir(parents=True)
        (tmp_path / base / "setup.py").write_text(setup)
        (tmp_path / base / "qlinear.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "inference/dependencies/AutoGPTQ/util.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    log = scan_path(tmp_path, jobs=1)
    by_file = {f.file: f for f in log.findings if f.rule == "cpp-extension-cuda"}
    vendored = by_file["inference/dependencies/AutoGPTQ/setup.py"]
    assert (vendored.severity, vendored.context) == ("warning", "vendored")
    assert by_file["ops/setup.py"].severity == "blocking"
    # the copy is one unit of work (1-5 days), its extension and device lines together
    [copy] = [i for i in log.items if i.key.startswith("vendored|")]
    assert (copy.title, copy.severity, copy.days_low, copy.days_high) == (
        "vendored project inference/dependencies/AutoGPTQ/",
        "warning",
        1,
        5,
    )
    assert {ln.file for ln in copy.lines} >= {
        "inference/dependencies/AutoGPTQ/setup.py",
        "inference/dependencies/AutoGPTQ/util.py",
    }


SSM = """\
import torch


class SSMKernel(torch.nn.Module):
    def __init__(
        self,
        backend: str = "cuda",
        device: str = "cuda",
    ):
        super().__init__()
        self.backend = backend
        assert self.backend in ["cuda", "keops", "naive"]
        self.device = device

    def forward(self, x):
        if self.backend == "cuda":
            return x
        return x * 2
"""


def test_a_name_compared_with_other_kernel_implementations_is_a_selector_not_a_device() -> None:
    """S4's ``backend: str = 'cuda'`` chooses its Cauchy kernel among ``['cuda', 'keops', 'naive']``: an
    implementation selector like ``impl="cuda"``, not a device. Near misses: ``device: str = "cuda"`` (line 8)
    stays, and so does ``backend`` where it is compared only with ``"cpu"``."""
    from accelpilot.porting.scan import scan_python

    lines = [ln for r, ln, *_ in scan_python(SSM) if r == "cuda-device-literal"]
    assert lines == [8]
    plain = SSM.replace('"keops", "naive"', '"cpu"')
    assert [ln for r, ln, *_ in scan_python(plain) if r == "cuda-device-literal"] == [7, 8]


def test_a_folder_named_for_a_demo_is_example_code() -> None:
    """CoTracker's ``gradio_demo/`` (its app and the requirements that pin torch==1.13.0): example code, listed apart,
    even where the README installs its requirements. Near miss: ``demonstration_utils/`` is the project's own."""
    from accelpilot.porting.findings import context_of_path

    assert context_of_path("gradio_demo/app.py") == "example"
    assert context_of_path("gradio_demo/requirements.txt") == "example"
    assert context_of_path("demo_app/server.py") == "example"
    assert context_of_path("demonstration_utils/x.py") is None

"""Classes read on round 16's repositories after their first score: a device string built from a template
(HiFi-GAN's ``"cuda:{:d}".format(rank)``) is a device, and a device name edited as text (YOLOv5's
``device.replace("cuda:", "")``) is not."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python


def _devices(src: str) -> list[int | None]:
    return [ln for r, ln, *_ in scan_python(src) if r == "cuda-device-literal"]


def test_a_templated_device_string_is_a_device_and_text_editing_is_not() -> None:
    """``torch.device("cuda:{:d}".format(rank))`` and ``"cuda:%d" % rank`` name CUDA devices. Near misses: the
    same name as text to cut (``.replace("cuda:", "")``, ``.split("cuda:")``) is no device. A ``"cuda:"`` head an
    index completes (``"cuda:" + str(k)``) is a device too since round 42 (``literals.indexed_device``)."""
    src = (
        "import torch\n"
        'a = torch.device("cuda:{:d}".format(rank))\n'
        'b = torch.device("cuda:%d" % rank)\n'
        'c = str(device).replace("cuda:", "")\n'
        'd = name.split("cuda:0")\n'
        'e = torch.device("cuda:" + str(k))\n'
    )
    assert _devices(src) == [2, 3, 6]


def test_a_library_name_compared_in_startswith_is_no_load() -> None:
    """open_clip's logger setup skips ``logger.name.startswith(("torch", "triton"))``: a name compared, not Triton
    loaded. Near miss: ``importlib.import_module("triton")`` names the library."""
    src = (
        'import importlib\nif name.startswith(("torch", "triton")):\n    pass\nm = importlib.import_module("triton")\n'
    )
    assert [ln for r, ln, *_ in scan_python(src) if r == "triton-kernel"] == [4]


def test_a_script_under_docs_is_an_example(tmp_path: Path) -> None:
    """``docs/script_examples/train.sh`` (open_clip) illustrates the documentation: its launcher settings are example
    lines. Near miss: the same script under ``scripts/`` stays porting work."""
    (tmp_path / "docs" / "script_examples").mkdir(parents=True)
    (tmp_path / "scripts").mkdir()
    body = "torchrun --nproc_per_node 8 -m training.main --s3 s3://bucket/logs\n"
    (tmp_path / "docs" / "script_examples" / "train.sh").write_text(body)
    (tmp_path / "scripts" / "train.sh").write_text(body)
    contexts = {f.file: f.context for f in scan_path(tmp_path, jobs=1).findings if f.rule == "object-store-uri"}
    assert contexts == {"docs/script_examples/train.sh": "example", "scripts/train.sh": None}

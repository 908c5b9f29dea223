"""Classes read on round 16's repositories after their first score: a device string built from a template
(HiFi-GAN's ``"cuda:{:d}".format(rank)``) is a device, and a device name edited as text (YOLOv5's
``device.replace("cuda:", "")``) is not."""

from __future__ import annotations

from accelpilot.porting.scan import scan_python


def _devices(src: str) -> list[int | None]:
    return [ln for r, ln, *_ in scan_python(src) if r == "cuda-device-literal"]


def test_a_templated_device_string_is_a_device_and_text_editing_is_not() -> None:
    """``torch.device("cuda:{:d}".format(rank))`` and ``"cuda:%d" % rank`` name CUDA devices. Near misses: the
    same name as text to cut (``.replace("cuda:", "")``, ``.split("cuda:")``) is no device; a bare ``"cuda:"``
    head (``"cuda:" + str(k)``) is not read (a documented limit: DLRM's is on a path its command never takes)."""
    src = (
        "import torch\n"
        'a = torch.device("cuda:{:d}".format(rank))\n'
        'b = torch.device("cuda:%d" % rank)\n'
        'c = str(device).replace("cuda:", "")\n'
        'd = name.split("cuda:0")\n'
        'e = torch.device("cuda:" + str(k))\n'
    )
    assert _devices(src) == [2, 3]

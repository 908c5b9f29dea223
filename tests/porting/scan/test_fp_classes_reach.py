"""False-positive classes of reach (issue 27): lines that run somewhere other than the model's default path (CI,
install, data preparation, optional extras, a dependency only declared, varlen handed on by an optional parameter),
each beside the near miss that stays."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import findings_in

from accelpilot.porting.items import DECLARED_REASON
from accelpilot.porting.scan import scan_path


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_cuda_pins_in_ci_workflows_are_listed_apart(tmp_path: Path) -> None:
    """A CUDA pin in ``.github/workflows/`` builds on the CI's runners: ``ci``, not porting work. Stays: the same
    pin in requirements.txt, which the user installs."""
    _write(
        tmp_path,
        {
            ".github/workflows/build.yml": "jobs:\n  build:\n    env:\n      cuda-version: '12.4'\n",
            "requirements.txt": "torch==2.3.0+cu121\n",
        },
    )
    assert findings_in(tmp_path, ".github/workflows/build.yml") == [("cuda-version-pin", 4, "ci")]
    assert findings_in(tmp_path, "requirements.txt") == [("cuda-version-pin", 1, None)]
    assert [i.key for i in scan_path(tmp_path, jobs=1).items] == ["setting|cuda-version-pin|+cu121"]


def test_downloads_at_install_or_data_preparation_are_not_porting_work(tmp_path: Path) -> None:
    """``setup.py`` fetching a wheel runs at install (``install-time``); a data preparation script's download runs
    once on any host (``data-prep``); one in the model's code at run time is the same on any accelerator
    (``any-host-download``): listed apart, no item."""
    get = "import requests\nr = requests.get('https://example.com/x')\n"
    _write(tmp_path, {"setup.py": get, "data/owt/prepare.py": get, "download_data.py": get, "model.py": get})
    assert findings_in(tmp_path, "setup.py") == [("http-download", 2, "install-time")]
    assert findings_in(tmp_path, "data/owt/prepare.py") == [("http-download", 2, "data-prep")]
    assert findings_in(tmp_path, "download_data.py") == [("http-download", 2, "data-prep")]
    assert findings_in(tmp_path, "model.py") == [("http-download", 2, "any-host-download")]
    log = scan_path(tmp_path, jobs=1)
    assert log.items == []
    assert log.summary.not_porting == {"install-time": 1, "data-prep": 2, "any-host-download": 1}


PYPROJECT = """\
[project]
name = "pkg"
dependencies = [
    "deepspeed>=0.14",
    "causal-conv1d>=1.2",
]

[project.optional-dependencies]
conv = [
    "flash-attn>=2.5",
]
"""


def test_optional_extras_and_declared_only_dependencies_do_not_block(tmp_path: Path) -> None:
    """A package in ``[project.optional-dependencies]`` installs only when asked for: ``optional``. A hard
    dependency no code path imports unguarded blocks nothing by itself (a warning that says so). Stays blocking:
    a hard dependency the code imports at module level with no guard."""
    _write(tmp_path, {"pyproject.toml": PYPROJECT, "train.py": "import deepspeed\n"})
    assert findings_in(tmp_path, "pyproject.toml") == [
        ("cuda-kernel-library", 5, None),
        ("deepspeed", 4, None),
        ("flash-attn", 10, "optional"),
    ]
    items = {i.key: (i.severity, i.reason) for i in scan_path(tmp_path, jobs=1).items}
    assert items["package|cuda-kernel-library|causal_conv1d"] == ("warning", DECLARED_REASON)
    assert items["package|flash-attn|flash-attn"][0] == "warning"
    assert items["package|deepspeed|deepspeed"][0] == "blocking"


VARLEN = """\
def forward(x, seq_idx=None, cu_seqlens=None):
    batch = cu_seqlens.shape[0] - 1 if cu_seqlens is not None else x.shape[0]
    if cu_seqlens is None:
        return kernel(x)
    return kernel(x, cu_seqlens, seq_idx=seq_idx, offsets=cu_seqlens)


def required(x, cu_seqlens):
    return kernel(x, cu_seqlens)


def sliced(x, cu_seqlens=None):
    return kernel(x, cu_seqlens[1:])
"""


def test_cu_seqlens_an_optional_parameter_hands_on_is_not_packing(tmp_path: Path) -> None:
    """``cu_seqlens=None`` only tested against None, counted or handed on to a call: packing is opt-in and built by
    the caller. Stays: a required ``cu_seqlens`` handed on, and an optional one whose values are read (a slice)."""
    _write(tmp_path, {"mixer.py": VARLEN})
    assert findings_in(tmp_path, "mixer.py") == [
        ("varlen-packing", 8, None),
        ("varlen-packing", 9, None),
        ("varlen-packing", 12, None),
        ("varlen-packing", 13, None),
    ]

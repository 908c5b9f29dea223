"""Code written for an old torch/numpy stack (``scan/stack_upgrade.py``, rule ``stack-upgrade``): every site is a
line of one repository item; an import-time site in a module the default path imports blocks, with its reason.
Near misses: fallbacks, current numpy names, lower-bound version checks, sites in functions or off the path."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest

from accelpilot.porting.item_keys import stack_library
from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.hf_stack import REMOVED_METHODS
from accelpilot.porting.scan.stack_upgrade import (
    BACK_IN_NUMPY2,
    CALL_TIME,
    IMPORT_TIME,
    REMOVED_NUMPY,
    REMOVED_NUMPY2,
    stack_sites,
)


def _sites(source: str) -> list[tuple[int | None, str | None]]:
    return [(ln, sub) for _, ln, _, _, sub, _ in stack_sites(source.encode())]


@pytest.mark.parametrize(
    ("source", "sites"),
    [
        ("from torch._six import inf\n", [(1, IMPORT_TIME)]),
        ("import torch._six\n", [(1, IMPORT_TIME)]),
        ("from torch import _six\n", [(1, IMPORT_TIME)]),
        ("import torch\n\ndef f():\n    return torch._six.string_classes\n", [(4, None)]),
        ("import numpy as np\n\ndef f(n):\n    return np.arange(n, dtype=np.float)\n", [(4, None)]),
        ("import numpy as onp\nX = onp.zeros(3, dtype=onp.int)\n", [(2, IMPORT_TIME)]),
        ("import numpy\nclass A:\n    kind = numpy.object\n", [(3, IMPORT_TIME)]),  # a class body runs at import
        ("import numpy as np\nB = np.bool\n", [(2, None)]),  # back in numpy 2.0: listed, never blocking
        ("import timm\nassert timm.__version__ == '0.3.2'\n", [(2, IMPORT_TIME)]),
        ("import timm\nassert timm.__version__ in ('0.3.2', '0.4.5')\n", [(2, IMPORT_TIME)]),
        ("import timm\nassert timm.__version__.startswith('0.3')\n", [(2, IMPORT_TIME)]),
        ("import torch\n\ndef spec(y):\n    return torch.stft(y, 1024, hop_length=256)\n", [(4, CALL_TIME)]),
        ("import torch\n\ndef spec(y):\n    return y.stft(512, center=False)\n", [(4, CALL_TIME)]),
        # TabPFN's fit: scikit-learn 1.8 removed ``force_all_finite`` (renamed ``ensure_all_finite`` in 1.6)
        (
            "from sklearn.utils import check_X_y\n\ndef fit(X, y):\n    return check_X_y(X, y, force_all_finite=False)\n",
            [(4, CALL_TIME)],
        ),
        # CLAP's long-audio crop: numpy.random has no ``integers`` (a Generator method)
        ("import numpy as np\n\ndef crop(n):\n    return np.random.integers(0, n + 1)\n", [(4, None)]),
        # GroundingDINO's BertModelWarper: methods transformers' PreTrainedModel no longer has (5.0 and 5.17)
        (
            "from transformers import BertModel\n\nclass W:\n    def __init__(self, bert):\n"
            "        self.mask = bert.get_extended_attention_mask\n        self.heads = bert.get_head_mask\n",
            [(5, CALL_TIME), (6, CALL_TIME)],
        ),
    ],
)
def test_each_removed_api_is_a_site(source: str, sites: list[tuple[int, str | None]]) -> None:
    assert _sites(source) == sites


@pytest.mark.parametrize(
    "source",
    [
        "try:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf\n",  # a fallback
        "import numpy as np\nx = np.float32(1) + np.float64(2) + np.int64(3)\ny = np.bool_(True)\n",
        "import torch\nx = torch.ones(2).float().int()\n",  # tensor methods, not numpy aliases
        "import numpy as np\nf = getattr(np, 'float', float)\n",  # a guarded read by name
        "import torch\nassert torch.__version__ >= '2.0'\n",  # a lower bound, not a pin
        "import timm\nif timm.__version__ == '0.3.2':\n    pass\n",  # a test, not an assert
        "import somelib as np\nx = np.float\n",  # no numpy import: not numpy's alias
        "from sklearn.utils import check_array\nX = check_array([[1.0]], ensure_all_finite=False)\n",
        # numpy.random's own names, a Generator's method, and a module-level import-time draw
        "import numpy as np\nrng = np.random.default_rng(0)\nk = rng.integers(0, 3) + np.random.randint(3)\n",
        "import numpy as np\nnp.random.seed(0)\nx = np.random.RandomState(1).random_integers(1, 2)\n",
        "import torch\nS = torch.stft(y, 1024, return_complex=True)\n",  # the argument torch 2.0 asks for
        "import librosa\nS = librosa.stft(y, n_fft=1024)\n",  # librosa's stft, not torch's
        "from scipy import signal\nf, t, S = signal.stft(y)\n",
        # a model that keeps its own method (BLIP's med.py), and a file that does not import transformers
        "from transformers import BertModel\n\ndef get_head_mask(m, n):\n    return m\n\nh = x.get_head_mask(1, 2)\n",
        "import torch\nh = model.get_extended_attention_mask(mask, shape)\n",
    ],
)
def test_near_misses_are_not_sites(source: str) -> None:
    assert _sites(source) == []


def test_the_removed_names_match_the_installed_stack() -> None:
    np = pytest.importorskip("numpy")
    with warnings.catch_warnings():  # numpy 2.4 warns that np.object/np.str may come back as scalar types
        warnings.simplefilter("ignore", FutureWarning)
        assert not any(hasattr(np, name) for name in REMOVED_NUMPY)
    if int(np.__version__.split(".")[0]) >= 2:
        assert all(hasattr(np, name) for name in BACK_IN_NUMPY2)
    if int(np.__version__.split(".")[0]) >= 2:
        major_minor = tuple(int(x) for x in np.__version__.split(".")[:2])
        gone = [n for n, v in REMOVED_NUMPY2.items() if tuple(int(x) for x in v.split(".")) <= major_minor]
        assert gone and not any(hasattr(np, name) for name in gone)
    if importlib.util.find_spec("torch") is not None:
        assert importlib.util.find_spec("torch._six") is None
    if importlib.util.find_spec("transformers") is not None:
        import transformers
        from transformers import PreTrainedModel

        installed = tuple(int(x) for x in transformers.__version__.split(".")[:2])
        gone = [m for m, (_, v) in REMOVED_METHODS.items() if tuple(int(x) for x in v.split(".")) <= installed]
        assert not any(hasattr(PreTrainedModel, m) for m in gone)


MAIN = """\
import timm

assert timm.__version__ == "0.3.2"
import util.misc as misc
from util.pos import embed


def main():
    import util.lazy
    return embed(3)


if __name__ == "__main__":
    main()
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "__init__.py").write_text("")
    (tmp_path / "util" / "misc.py").write_text("from torch._six import inf\n")
    (tmp_path / "util" / "pos.py").write_text("import numpy as np\n\ndef embed(n):\n    return np.zeros(n, np.float)\n")
    (tmp_path / "util" / "lazy.py").write_text("from torch._six import string_classes\n")  # imported in a def only
    (tmp_path / "util" / "unused.py").write_text("import numpy as np\nX = np.int\n")  # nobody imports it
    (tmp_path / "train.py").write_text(MAIN)
    return tmp_path


def test_import_time_sites_on_the_default_path_block_and_the_rest_are_listed(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path), jobs=1)
    by_file = {f.file: f for f in log.findings if f.rule == "stack-upgrade"}
    assert set(by_file) == {"train.py", "util/misc.py", "util/pos.py", "util/lazy.py", "util/unused.py"}
    assert by_file["train.py"].severity == "blocking"
    assert "entry point train.py" in (by_file["train.py"].reason or "") and "train.py:3" in (
        by_file["train.py"].reason or ""
    )
    misc = by_file["util/misc.py"]
    assert misc.severity == "blocking" and "util/misc.py:1" in (misc.reason or "") and "torch._six" in misc.message
    assert by_file["util/pos.py"].severity == "warning"  # in a function: fails when called, not at import
    assert by_file["util/lazy.py"].severity == "warning"  # a lazy import is not the module-level reach
    assert by_file["util/unused.py"].severity == "warning"  # not imported by the default path
    items = {i.title.rsplit(": ", 1)[1]: i for i in build_items(log.findings) if i.rule == "stack-upgrade"}
    # one upgrade per library: the timm pin, torch's removed module, numpy's removed aliases
    assert {lib: (len(i.lines), i.severity) for lib, i in items.items()} == {
        "timm": (1, "blocking"),
        "torch": (2, "blocking"),
        "numpy": (2, "warning"),
    }
    assert items["torch"].reason and items["torch"].effort == "days"
    # numpy's removed names are one-line edits with no pin to lift: a smaller range than a library upgrade
    assert (items["numpy"].days_low, items["numpy"].days_high) == (0.25, 1)
    assert (items["torch"].days_low, items["torch"].days_high) == (1, 3)


def test_an_stft_without_return_complex_in_a_module_the_default_path_imports_blocks(tmp_path: Path) -> None:
    """HiFi-GAN: ``train.py`` (the README's command) imports ``meldataset.py``, whose ``mel_spectrogram`` calls
    ``torch.stft(y, n_fft, ...)`` with no ``return_complex``: it raises on a real input on torch >= 2.0, on every
    sample. Near miss: the same call in a module nothing imports stays a warning."""
    (tmp_path / "README.md").write_text("```\npython train.py --config config_v1.json\n```\n")
    (tmp_path / "train.py").write_text("import torch\nfrom meldataset import mel_spectrogram\n")
    stft = "import torch\n\n\ndef mel_spectrogram(y):\n    return torch.stft(y, 1024, hop_length=256)\n"
    (tmp_path / "meldataset.py").write_text(stft)
    (tmp_path / "spec_tools.py").write_text(stft)
    sites = {
        f.file: f.severity for f in scan_path(tmp_path, jobs=1).findings if f.rule == "stack-upgrade" and f.porting
    }
    assert sites == {"meldataset.py": "blocking", "spec_tools.py": "warning"}


def test_numpy2_names_timm_modules_and_torchtext_are_sites_and_a_feature_test_is_not() -> None:
    """Depth Anything V2's ``np.RankWarning`` (gone in numpy 2.0), VideoMAE's ``timm.optim.novograd`` (gone in timm
    1.0: listed, as a timm pin keeps it), the Annotated Transformer's ``torchtext.data`` (torchtext's native library
    does not load on a torch after 2.3). Near miss: yolov5's ``np.trapezoid if hasattr(np, "trapezoid") else
    np.trapz`` already picks what exists."""
    source = (
        "import warnings\nimport numpy as np\nfrom timm.optim.novograd import NovoGrad\nimport torchtext.data\n"
        "from torchtext import datasets\nwarnings.simplefilter('ignore', np.RankWarning)\n"
        "trapezoid = np.trapezoid if hasattr(np, 'trapezoid') else np.trapz\n"
        "if hasattr(np, 'in1d'):\n    isin = np.in1d\n"
    )
    sites = {(ln, subject) for _, ln, _, _, subject, _ in stack_sites(source.encode())}
    assert sites == {(3, None), (4, "import-time"), (5, "import-time"), (6, "import-time")}
    messages = {ln: m for _, ln, m, _, _, _ in stack_sites(source.encode())}
    assert "timm 1.0" in messages[3] and "torch 2.3" in messages[4] and "numpy 2.0" in messages[6]
    assert messages[5].startswith("from torchtext import")


def test_matplotlib_and_python_removals_are_sites_of_their_own_library() -> None:
    """E(3) diffusion's ``ax.w_xaxis`` (matplotlib 3.8), CoTracker's ``cm.get_cmap`` (3.9) and ``from collections
    import Mapping`` (Python 3.10), each checked on the installed matplotlib 3.11 and Python 3.11. Near misses:
    ``from collections import OrderedDict`` and ``plt.get_cmap``, which remain."""
    source = (
        "from collections import Mapping, OrderedDict\nimport matplotlib.cm as cm\nimport matplotlib.pyplot as plt\n"
        "\n\ndef f(ax):\n    ax.w_xaxis.line.set_color('k')\n    return cm.get_cmap('jet'), plt.get_cmap('jet')\n"
    )
    sites = {ln or 0: (m, subject) for _, ln, m, _, subject, _ in stack_sites(source.encode())}
    assert sorted(sites) == [1, 7, 8]
    assert sites[1][1] == "import-time" and "Python 3.10" in sites[1][0]
    assert "matplotlib 3.8" in sites[7][0] and "matplotlib 3.9" in sites[8][0] and sites[8][0].startswith("cm.")
    assert (
        stack_sites(b"from collections import OrderedDict\nimport matplotlib.pyplot as plt\nplt.get_cmap('x')\n") == []
    )


def test_pkg_resources_is_a_setuptools_site_with_its_own_effort(tmp_path: Path) -> None:
    """ImageBind's ``import pkg_resources`` (setuptools 82.0 removed it): an import-time site of its own library,
    blocking on the default path, sized as a few calls to replace (0.1-0.5 d), not as a library upgrade. Near miss:
    the word in a string."""
    sites = stack_sites(b"import pkg_resources\n\nPATH = pkg_resources.resource_filename('lib', 'v.txt')\n")
    assert [(ln, subject) for _, ln, _, _, subject, _ in sites] == [(1, "import-time")]
    assert "setuptools removed pkg_resources in 82.0" in sites[0][2]
    assert stack_sites(b"import torch\nNOTE = 'pkg_resources is gone'\n") == []
    (tmp_path / "run.py").write_text("from pkg_resources import resource_filename\n\nprint(resource_filename)\n")
    (tmp_path / "README.md").write_text("Run `python run.py`.\n")
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "stack-upgrade"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("blocking", 0.1, 0.5)]
    assert items[0].title.endswith("setuptools")


def test_a_removed_scikit_learn_argument_is_a_line_of_the_scikit_learn_upgrade() -> None:
    message = "check_X_y(force_all_finite=...) (scikit-learn 1.8 removed the argument: TypeError)"
    assert stack_library(message) == "scikit-learn"

"""False-positive classes of the device-placement, data-dependent-op and tensor-control-flow families found on the
installed transformers (issue 12, round scanfp7), each beside the near miss that must stay a finding: exact findings
and items, and pruned scans equal to full parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path, scan_python


def _raw(src: str) -> list[tuple[str, int | None, str | None]]:
    """(rule, line, context) of every finding, asserting the pruned scan equals the full parse."""
    full = sorted((r, ln, ctx) for r, ln, _m, _s, _sub, ctx in scan_python(src, prune=False))
    assert sorted((r, ln, ctx) for r, ln, _m, _s, _sub, ctx in scan_python(src, prune=True)) == full
    return full


def test_a_type_annotation_naming_a_cuda_type_places_nothing() -> None:
    """``stream: torch.cuda.Stream`` (an argument, a return, an annotated assignment) names a type; the stream is
    made where it is created. Stays: ``torch.cuda.Stream()`` called (as a value or a default), ``torch.cuda`` in the
    annotated assignment's value."""
    src = (
        "from __future__ import annotations\n"
        "import torch\n"
        "def make(device: torch.device, stream: torch.cuda.Stream | None = None) -> torch.cuda.Stream:\n"  # 3: types
        "    other: torch.cuda.Stream = device_module(device).Stream()\n"  # 4: annotation only
        "    mine: torch.cuda.Stream = torch.cuda.Stream()\n"  # 5: the value creates a CUDA stream
        "    return other\n"
        "def graph(g: 'torch.cuda.CUDAGraph', s=torch.cuda.Stream()):\n"  # 7: the default is a call
        "    x: int\n"
        "    return g\n"
    )
    assert _raw(src) == [("torch-cuda-api", 5, None), ("torch-cuda-api", 7, None)]


def test_annotations_leave_the_continuous_batching_item_shape(tmp_path: Path) -> None:
    """A file whose only CUDA mentions are annotations makes no item; the file that creates the stream keeps one."""
    (tmp_path / "io.py").write_text(
        "import torch\n"
        "class IO:\n"
        "    def __init__(self, device):\n"
        "        self.h2d: torch.cuda.Stream = make_stream(device)\n"
        "    def send(self, stream: torch.cuda.Stream) -> None:\n"
        "        pass\n"
    )
    (tmp_path / "streams.py").write_text(
        "import torch\ndef make_stream(device) -> torch.cuda.Stream:\n    return torch.cuda.Stream(device)\n"
    )
    log = scan_path(tmp_path, jobs=1)
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [("file|device-placement|streams.py", [3])]


GUARDED = """\
import torch

if torch.cuda.is_available():
    torch_device = "cuda"
print(torch.cuda.device_count())


def pick():
    import deepspeed
    return torch.device("cuda")
"""


def test_a_guarded_path_of_test_code_is_still_test_code(tmp_path: Path) -> None:
    """In ``testing_utils.py`` (a test file by its name), ``if torch.cuda.is_available(): torch_device = "cuda"`` is
    an optional path of test code: test-only, like the file's unguarded lines and its lazy imports. The same code in
    a library file stays porting work (the guarded line a warning, ``optional``); a probe keeps its own context."""
    (tmp_path / "testing_utils.py").write_text(GUARDED)
    (tmp_path / "lib.py").write_text(GUARDED)
    log = scan_path(tmp_path, jobs=1)
    by_file = {
        name: sorted((f.rule, f.line or 0, f.context) for f in log.findings if f.file == name)
        for name in ("testing_utils.py", "lib.py")
    }
    assert by_file["testing_utils.py"] == [
        ("cuda-device-literal", 4, "test-only"),
        ("cuda-device-literal", 10, "test-only"),
        ("deepspeed", 9, "test-only"),
        ("torch-cuda-api", 3, "probe"),
        ("torch-cuda-api", 5, "test-only"),
    ]
    assert by_file["lib.py"] == [
        ("cuda-device-literal", 4, "optional"),
        ("cuda-device-literal", 10, None),
        ("deepspeed", 9, "lazy-import"),
        ("torch-cuda-api", 3, "probe"),
        ("torch-cuda-api", 5, None),
    ]
    assert sorted(i.key for i in log.items) == ["file|device-placement|lib.py", "package|deepspeed|deepspeed"]


def test_a_cuda_call_that_does_nothing_without_cuda_is_not_porting_work(tmp_path: Path) -> None:
    """``torch.cuda.empty_cache()`` and the CUDA seeds do nothing on a machine with no CUDA device (measured on the
    CPU-only torch: no error, no effect), guarded or not: ``no-op-elsewhere``, no item. Stays: ``synchronize`` (it
    raises there), a memory statistic the code uses (0 there), ``set_device``."""
    (tmp_path / "lib.py").write_text(
        "import torch\n"
        "def set_seed(seed):\n"
        "    torch.manual_seed(seed)\n"
        "    torch.cuda.manual_seed_all(seed)\n"  # 4
        "def unload(model):\n"
        "    del model\n"
        "    if torch.cuda.is_available():\n"  # 7: probe
        "        torch.cuda.empty_cache()\n"  # 8
        "    torch.cuda.synchronize()\n"  # 9: stays
        "    free = torch.cuda.memory_allocated()\n"  # 10: stays
        "    torch.cuda.set_device(0)\n"  # 11: stays
    )
    log = scan_path(tmp_path, jobs=1)
    assert sorted((f.line, f.context) for f in log.findings) == [
        (4, "no-op-elsewhere"),
        (7, "probe"),
        (8, "no-op-elsewhere"),
        (9, None),
        (10, None),
        (11, None),
    ]
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [("file|device-placement|lib.py", [9, 10, 11])]


LONE = """\
import torch


def communicate(tensor, comm_device):
    send(tensor)
    if comm_device.type == "cuda":
        torch.cuda.synchronize()
    return tensor


def run(model):
    if model.device.type == "cuda" and model.device.index is not None:
        torch.cuda.set_device(model.device)
    if model.device.type == "cuda":
        torch.cuda.set_device(0)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    if model.device.type == "cuda" or model.forced:
        torch.cuda.synchronize()
    if model.device.type == "cuda":
        torch.cuda.synchronize()
    else:
        model.sync()
"""


def test_a_lone_branch_on_a_given_devices_type_only_tunes_that_backend(tmp_path: Path) -> None:
    """``if comm_device.type == "cuda": torch.cuda.synchronize()`` (no ``else``; also ``... == "cuda" and x.index is
    not None: torch.cuda.set_device(x.device)``): on another device the test is false and the code goes on, so the
    branch is ``backend-branch``. Stays: a lone branch that places anew (``set_device(0)``), a lone branch on an
    availability probe, an ``or`` test (it runs elsewhere too); a one-backend branch with an ``else`` stays work as an
    optional path (its CUDA arm runs only on CUDA, k-diffusion's timing), so it blocks no entry point."""
    (tmp_path / "m.py").write_text(LONE)
    log = scan_path(tmp_path, jobs=1)
    assert sorted((f.line or 0, f.context) for f in log.findings) == [
        (7, "backend-branch"),
        (13, "backend-branch"),
        (15, None),
        (16, "probe"),
        (17, "optional"),
        (19, None),
        (21, "optional"),
    ]
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [
        ("file|device-placement|m.py", [15, 17, 19, 21])
    ]


def test_a_lone_device_type_branch_that_returns_is_an_alternative_and_stays() -> None:
    """A lone branch whose body leaves (``return``, ``yield``) is a CUDA-only alternative of what follows, with its
    own result: porting work, unlike the same call in a branch the code falls through."""
    src = (
        "import torch\n"
        "def on_device(device):\n"
        "    if device.type == 'cuda':\n"
        "        with torch.cuda.device(device):\n"  # 4: stays
        "            yield\n"
        "            return\n"
        "    yield\n"
        "def tune(device):\n"
        "    if device.type == 'cuda':\n"
        "        with torch.cuda.device(device):\n"  # 10: falls through
        "            warm()\n"
        "    return 0\n"
    )
    assert _raw(src) == [("torch-cuda-api", 4, None), ("torch-cuda-api", 10, "backend-branch")]


WRAPPED = """\
import torch
from torch import nn

from .moe import use_experts_implementation


class FP8Experts(nn.Module):
    def forward(self, hidden_states, top_k_index):
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        return hit


if ready:
    idx = x.nonzero()


class Router(nn.Module):
    def forward(self, x):
        return x.nonzero()


def replace(model, config):
    cls = use_experts_implementation(experts_class=FP8Experts, has_bias=False)
    return cls(config)
"""


def test_a_class_a_dispatcher_call_wraps_is_an_eager_reference(tmp_path: Path) -> None:
    """``use_experts_implementation(experts_class=FP8Experts)`` is the decorator's call form: the wrapped class's
    forward is the eager reference the dispatcher replaces by default (``reference-fallback``) and the call is a line
    of the repository's dispatch item. Stays: another class of the file, a module-level block after the class."""
    assert _raw(WRAPPED) == [
        ("data-dependent-op", 9, "reference-fallback"),
        ("data-dependent-op", 14, None),
        ("data-dependent-op", 19, None),
        ("moe-experts-dispatch", 23, None),
    ]
    (tmp_path / "fp8.py").write_text(WRAPPED)
    log = scan_path(tmp_path, jobs=1)
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [
        ("file|data-dependent-op|fp8.py", [14, 19]),
        ("repo|moe-experts-dispatch", [23]),
    ]


def test_the_default_device_of_a_wrappers_own_cuda_is_delegation() -> None:
    """In ``def cuda(self, *args, **kwargs)``, ``kwargs.get("device", "cuda")`` is the device the caller's ``.cuda()``
    asked for (that call is the finding). Stays: "cuda:0" there (a fixed device), "cuda" in any other def."""
    src = (
        "import torch\n"
        "class Model:\n"
        "    def cuda(self, *args, **kwargs):\n"
        "        device = kwargs.get('device', 'cuda')\n"  # 4: delegation
        "        pinned = 'cuda:0'\n"  # 5: stays
        "        return device, pinned\n"
        "    def place(self, **kwargs):\n"
        "        return kwargs.get('device', 'cuda')\n"  # 8: stays
    )
    assert _raw(src) == [("cuda-device-literal", 5, None), ("cuda-device-literal", 8, None)]


def test_device_names_added_one_by_one_to_an_inventory_are_not_placement() -> None:
    """``devices.add("cuda")`` beside ``devices.add("mps")`` in the same def lists the backends present (like a
    literal naming two device types): no finding. Stays: a device type added alone (``targets.append("cuda")`` with
    only ``"cuda:1"`` besides), or beside another device added to a different collection."""
    src = (
        "import torch\n"
        "def available():\n"
        "    devices = {'cpu'}\n"
        "    if torch.cuda.is_available():\n"  # 4: probe
        "        devices.add('cuda')\n"  # 5: inventory
        "    if has_mps():\n"
        "        devices.add('mps')\n"  # 7: inventory
        "    return devices\n"
        "def chosen(flag):\n"
        "    targets, other = [], []\n"
        "    targets.append('cuda')\n"  # 11: stays
        "    targets.append('cuda:1')\n"  # 12: stays
        "    other.append('xpu')\n"
        "    return targets\n"
    )
    assert _raw(src) == [
        ("cuda-device-literal", 11, None),
        ("cuda-device-literal", 12, None),
        ("torch-cuda-api", 4, "probe"),
    ]


def test_a_cuda_query_under_its_own_cuda_probe_with_a_fallback_is_part_of_the_probe() -> None:
    """Issue 12 (scanfp8): ``if torch.cuda.is_available(): major, _ = torch.cuda.get_device_capability()`` (lower a
    setting on old GPUs) and ``if len(torch.cuda.default_generators) > 0: <seed from the current CUDA generator>
    else: <generic seed>`` only read facts of the device the test found; without CUDA the code after (or the else)
    runs. Stay: the same query when the body raises (a requirement of the path), a placement or a synchronize under
    the probe, and the query under no probe."""
    src = (
        "import sys\n"
        "import torch\n"
        "def validate(cfg):\n"
        "    if torch.cuda.is_available():\n"
        "        major, minor = torch.cuda.get_device_capability()\n"  # 5: query, falls back: probe
        "        if major < 8:\n"
        "            cfg.dequantize = True\n"
        "            return\n"
        "def seed(self):\n"
        "    if len(torch.cuda.default_generators) > 0:\n"  # 10: count probe
        "        idx = torch.cuda.current_device()\n"  # 11
        "        self.seed = torch.cuda.default_generators[idx].seed()\n"  # 12
        "    else:\n"
        "        self.seed = int(torch.seed() % sys.maxsize)\n"
        "    torch.manual_seed(self.seed)\n"
        "def require(cfg):\n"
        "    if is_torch_cuda_available():\n"
        "        major, _ = torch.cuda.get_device_capability()\n"  # 18: the body raises: stays
        "        if major < 9:\n"
        "            raise ValueError('needs sm90')\n"
        "def place(x):\n"
        "    if torch.cuda.is_available():\n"
        "        torch.cuda.synchronize()\n"  # 23: not a query: stays
        "        x = x.cuda()\n"
        "    return x\n"
        "def unguarded():\n"
        "    return torch.cuda.get_device_capability()\n"  # 27: no probe: stays
        "def default_map(device_map):\n"
        "    if torch.cuda.is_available():\n"  # 29
        "        device_map = {'': torch.cuda.current_device()}\n"  # 30: the device placed on: stays
        "    else:\n"
        "        device_map = {'': 'cpu'}\n"
        "    return device_map\n"
        "def index_used_elsewhere(self):\n"
        "    if len(torch.cuda.default_generators) > 0:\n"  # 35
        "        idx = torch.cuda.current_device()\n"  # 36: also placed on below: stays
        "        self.seed = torch.cuda.default_generators[idx].seed()\n"
        "        self.device = idx\n"
    )
    assert _raw(src) == [
        ("cuda-call", 24, "optional"),
        ("torch-cuda-api", 4, "probe"),
        ("torch-cuda-api", 5, "probe"),
        ("torch-cuda-api", 10, "probe"),
        ("torch-cuda-api", 11, "probe"),
        ("torch-cuda-api", 12, "probe"),
        ("torch-cuda-api", 18, "optional"),
        ("torch-cuda-api", 22, "probe"),
        ("torch-cuda-api", 23, "optional"),
        ("torch-cuda-api", 27, None),
        ("torch-cuda-api", 29, "probe"),
        ("torch-cuda-api", 30, "optional"),
        ("torch-cuda-api", 35, None),
        ("torch-cuda-api", 36, None),
        ("torch-cuda-api", 37, None),
    ]


def test_cuda_queries_under_their_probe_make_no_item_beside_a_requirement(tmp_path: Path) -> None:
    """The quantizer that lowers itself on old GPUs makes no item; the one that raises keeps its line."""
    (tmp_path / "lowers.py").write_text(
        "import torch\n"
        "def validate(cfg):\n"
        "    if torch.cuda.is_available():\n"
        "        major, minor = torch.cuda.get_device_capability()\n"
        "        if (major, minor) < (8, 9):\n"
        "            cfg.dequantize = True\n"
    )
    (tmp_path / "requires.py").write_text(
        "import torch\n"
        "def validate(cfg):\n"
        "    if torch.cuda.is_available():\n"
        "        major, minor = torch.cuda.get_device_capability()\n"
        "        if major < 9:\n"
        "            raise ValueError('needs sm90')\n"
    )
    log = scan_path(tmp_path, jobs=1)
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [("file|device-placement|requires.py", [4])]


def test_a_concat_in_a_loop_over_the_modules_submodules_grows_nothing_per_step(tmp_path: Path) -> None:
    """Issue 12 (scanfp8): MTP drafting concatenates one token per MTP layer (``for i in range(len(self.layers))``):
    the trip count is the module's structure, a trace unrolls it and every concat's shape follows from the input's.
    Stay: a loop over a generated length (an argument, a config number such as ``prediction_length``), a ``while``,
    and a submodule loop inside a decode ``while`` (the sequence also grows once per step)."""
    src = (
        "import torch\n"
        "class Mtp:\n"
        "    def forward(self, ids, full):\n"
        "        for i in range(len(self.layers)):\n"
        "            full = torch.cat([full, ids], dim=-1)\n"  # 5: per submodule: unrolled
        "        for layer in self.mtp.layers:\n"
        "            full = torch.cat([full, layer(ids)], dim=-1)\n"  # 7
        "        for i, layer in enumerate(self.layers):\n"
        "            full = torch.cat([full, layer(ids)], dim=-1)\n"  # 9
        "        return full\n"
        "    def generate(self, ids, max_new_tokens):\n"
        "        for _ in range(max_new_tokens):\n"
        "            ids = torch.cat([ids, self.step(ids)], dim=-1)\n"  # 13: a generated length: stays
        "        for _ in range(self.config.prediction_length):\n"
        "            ids = torch.cat([ids, self.step(ids)], dim=-1)\n"  # 15: a config number, generated: stays
        "        while ids.shape[-1] < 10:\n"
        "            for layer in self.layers:\n"
        "                ids = torch.cat([ids, layer(ids)], dim=-1)\n"  # 18: inside a decode loop: stays
        "        return ids\n"
    )
    assert _raw(src) == [("growing-sequence", 13, None), ("growing-sequence", 15, None), ("growing-sequence", 18, None)]
    (tmp_path / "mtp.py").write_text("\n".join(src.splitlines()[:10]) + "\n")
    assert scan_path(tmp_path, jobs=1).items == []


def test_a_chain_with_an_arm_for_the_targets_device_leaves_the_other_arms_and_the_else_to_their_backends() -> None:
    """Issue 12 (scanfp10): ``if self.use_cpu: ... elif is_torch_mps_available(): ... elif
    is_torch_neuron_available(): device = torch.device("neuron:0") ... else: device = torch.device("cuda:0" if
    torch.cuda.is_available() else "cpu")``: on the target its own arm runs, so the final ``else`` and the other
    backends' arms are their branches. ``elif is_sagemaker_mp_enabled(): torch.device("cuda", smp.local_rank())``
    runs only under SageMaker's GPU-only model-parallel library. Stay: the same chain without the target's arm (the
    port takes the CUDA else), a target arm that raises (the target is refused), an ``or`` with the SageMaker test,
    and a link testing no backend (``if self.use_cpu``) before the target's arm, which the target can take."""
    src = (
        "import torch\n"
        "def setup(self):\n"
        "    if self.use_cpu:\n"
        "        device = torch.device('cuda:1')\n"  # 4: a link testing no backend: stays (None)
        "    elif torch.cuda.is_available():\n"  # 5: probe
        "        device = torch.device('cuda:2')\n"  # 6: another backend's arm: backend-branch
        "    elif is_torch_neuron_available():\n"
        "        device = torch.device('neuron:0')\n"  # 8: the target's arm: optional as before
        "    else:\n"
        "        device = torch.device('cuda:0')\n"  # 10: the else: backend-branch
        "        torch.cuda.set_device(device)\n"  # 11
        "    return device\n"
        "def no_target(self):\n"
        "    if is_torch_xpu_available():\n"
        "        device = torch.device('xpu:0')\n"
        "    else:\n"
        "        device = torch.device('cuda:0')\n"  # 17: no arm for the target: stays
        "    return device\n"
        "def refused(self):\n"
        "    if is_torch_neuron_available():\n"
        "        raise ValueError('not on neuron')\n"
        "    else:\n"
        "        device = torch.device('cuda:0')\n"  # 23: the target is refused: stays
        "    return device\n"
        "def smp_setup(self):\n"
        "    if self.use_cpu:\n"
        "        pass\n"
        "    elif is_sagemaker_mp_enabled():\n"
        "        device = torch.device('cuda', smp.local_rank())\n"  # 29: SageMaker MP only: other-runtime
        "        torch.cuda.set_device(device)\n"  # 30
        "    elif is_sagemaker_mp_enabled() or self.force:\n"
        "        device = torch.device('cuda', 0)\n"  # 32: an ``or``: stays
        "    return device\n"
    )
    assert _raw(src) == [
        ("cuda-device-literal", 4, None),
        ("cuda-device-literal", 6, "backend-branch"),
        ("cuda-device-literal", 10, "backend-branch"),
        ("cuda-device-literal", 17, "optional"),
        ("cuda-device-literal", 23, "optional"),
        ("cuda-device-literal", 29, "other-runtime"),
        ("cuda-device-literal", 32, None),
        ("neuron-api", 8, "optional"),
        ("torch-cuda-api", 5, "probe"),
        ("torch-cuda-api", 11, "backend-branch"),
        ("torch-cuda-api", 30, "other-runtime"),
    ]


def test_a_cuda_fact_behind_a_cached_probe_flag_or_worded_into_an_import_error_is_part_of_the_probe() -> None:
    """Issue 12 (scanfp10), extending scanfp8's rule: ``pt_cuda_available = torch.cuda.is_available()`` then ``if
    pt_cuda_available: info["GPU type"] = torch.cuda.get_device_name()`` asks the same as the probe itself, and
    ``elif ... and is_torch_cuda_available(): major, _ = get_device_capability(); if major < 8: raise
    ImportError(...)`` answers whether an optional package (flash-attn) can be used. Stay: a flag also assigned
    something else, a flag that is a parameter, and the capability check raising ``ValueError`` (a requirement)."""
    src = (
        "import torch\n"
        "def env():\n"
        "    pt_cuda_available = 'NA'\n"
        "    pt_cuda_available = torch.cuda.is_available()\n"  # 4: probe
        "    info = {}\n"
        "    if pt_cuda_available:\n"
        "        info['GPU type'] = torch.cuda.get_device_name()\n"  # 7: part of the probe
        "    return info\n"
        "def env_mixed(force):\n"
        "    flag = torch.cuda.is_available()\n"  # 10: probe
        "    flag = flag or force\n"
        "    if flag:\n"
        "        return torch.cuda.get_device_name()\n"  # 13: the flag is not only the probe: stays
        "def env_param(flag):\n"
        "    if flag:\n"
        "        return torch.cuda.get_device_name()\n"  # 16: a parameter: stays
        "def fa_error(version, min_major):\n"
        "    if not version:\n"
        "        raise ImportError('not installed')\n"
        "    elif min_major is not None and is_torch_cuda_available():\n"
        "        major, _ = torch.cuda.get_device_capability()\n"  # 21: part of the probe
        "        if major < min_major:\n"
        "            raise ImportError(f'needs sm{min_major}, found {torch.cuda.get_device_capability()}')\n"  # 23
        "def fp8_requirement():\n"
        "    if is_torch_cuda_available():\n"
        "        major, _ = torch.cuda.get_device_capability()\n"  # 26: ValueError: a requirement, stays
        "        if major < 9:\n"
        "            raise ValueError('needs sm90')\n"
    )
    assert _raw(src) == [
        ("torch-cuda-api", 4, "probe"),
        ("torch-cuda-api", 7, "probe"),
        ("torch-cuda-api", 10, "probe"),
        ("torch-cuda-api", 13, None),
        ("torch-cuda-api", 16, None),
        ("torch-cuda-api", 21, "probe"),
        ("torch-cuda-api", 23, "probe"),
        ("torch-cuda-api", 26, "optional"),
    ]


def test_a_cuda_key_looked_up_in_parsed_data_is_not_a_device() -> None:
    """Issue 12 (scanfp10): ``components.get("cuda_nvcc", components.get("cuda", {}))`` reads the CUDA toolkit's
    version.json: ``"cuda"`` is a key of the data. Stays: ``"cuda"`` as the lookup's default (a device chosen when
    the key is missing) and as a plain value."""
    src = (
        "def toolkit(components, kwargs):\n"
        "    version = components.get('cuda_nvcc', components.get('cuda', {})).get('version', '')\n"  # 2: a key
        "    device = kwargs.get('device', 'cuda')\n"  # 3: a default device: stays
        "    other = 'cuda'\n"  # 4: stays
        "    return version, device, other\n"
    )
    assert _raw(src) == [("cuda-device-literal", 3, None), ("cuda-device-literal", 4, None)]


@pytest.mark.parametrize("kernel", [False, True])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_device_default_every_call_overrides_is_not_porting_work(
    tmp_path: Path, kernel: bool, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12 (scanfp10): ``def replace_with_sinq_linear(model, ..., device="cuda:0")`` whose only call (in another
    file) passes ``device=device_str``: the CUDA default never runs. Stay: a default some call relies on, one passed
    positionally or through ``**kwargs``, a def also handed on as a value, and a def no file calls. With a kernel in
    the tree the sources are gathered during the cross-file pass, without one read by the check itself (by the
    worker processes when the scan has them: ``jobs=2``, one file per chunk)."""
    import accelpilot.porting.scan.run as sc

    monkeypatch.setattr(sc, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(sc, "CHUNK", 1)
    if kernel:
        (tmp_path / "k.py").write_text("import triton\n@triton.jit\ndef add_kernel(x):\n    pass\n")
    (tmp_path / "lib.py").write_text(
        "import torch\n"
        "def place(x, device='cuda:0'):\n"  # 2: every call passes device=: set apart
        "    return x\n"
        "def relied(x, device='cuda:0'):\n"  # 4: a call leaves it out: stays
        "    return x\n"
        "def positional(x, device='cuda:0'):\n"  # 6: passed positionally: stays
        "    return x\n"
        "def spread(x, *, device=torch.device('cuda')):\n"  # 8: through **kwargs: stays
        "    return x\n"
        "def handed(x, device='cuda:0'):\n"  # 10: also handed on as a value: stays
        "    return x\n"
        "def uncalled(x, device='cuda:0'):\n"  # 12: never called here: stays
        "    return x\n"
    )
    (tmp_path / "caller.py").write_text(
        "from lib import handed, place, positional, relied, spread\n"
        "def run(x, d, kw):\n"
        "    place(x, device=d)\n"
        "    place(x, 'unused', device=d)\n"
        "    relied(x, device=d)\n"
        "    relied(x)\n"
        "    positional(x, d)\n"
        "    spread(x, **kw)\n"
        "    handed(x, device=d)\n"
        "    fn = handed\n"
        "    return fn(x)\n"
    )
    log = scan_path(tmp_path, jobs=jobs)
    contexts = {f.line: f.context for f in log.findings if f.file == "lib.py" and f.rule == "cuda-device-literal"}
    assert contexts == {2: "overridden-default", 4: None, 6: None, 8: None, 10: None, 12: None}
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items if "lib.py" in i.key] == [
        ("file|device-placement|lib.py", [4, 6, 8, 10, 12])
    ]
    assert any(i.key == "kernel|triton-kernel|k.py|*" for i in log.items) == kernel  # the family of k.py


def test_a_cuda_call_on_a_given_object_with_a_no_op_fallback_is_that_backends_branch() -> None:
    """Issue 12 (scanfp10): ``torch.cuda.stream(s) if s is not None else nullcontext()``: the call enters a stream
    made elsewhere (the creation is its own finding), and without one the no-op context runs. Stay: the stream
    created inline, another fallback, the test naming another object, and the call with no fallback."""
    src = (
        "from contextlib import nullcontext\n"
        "import torch\n"
        "def copy(self, s, t, flag):\n"
        "    a = torch.cuda.stream(s) if s is not None else nullcontext()\n"  # 4: backend-branch
        "    b = torch.cuda.stream(self.stream) if self.stream else nullcontext()\n"  # 5: backend-branch
        "    c = torch.cuda.stream(torch.cuda.Stream()) if flag else nullcontext()\n"  # 6: created here: stays
        "    d = torch.cuda.stream(s) if s is not None else other()\n"  # 7: another fallback: stays
        "    e = torch.cuda.stream(t) if s is not None else nullcontext()\n"  # 8: another object: stays
        "    f = torch.cuda.stream(s)\n"  # 9: no fallback: stays
        "    return a, b, c, d, e, f\n"
    )
    assert _raw(src) == [
        ("torch-cuda-api", 4, "backend-branch"),
        ("torch-cuda-api", 5, "backend-branch"),
        ("torch-cuda-api", 6, None),
        ("torch-cuda-api", 7, None),
        ("torch-cuda-api", 8, None),
        ("torch-cuda-api", 9, None),
    ]

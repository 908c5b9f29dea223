"""The Python visitor: what is and is not a code path."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_python

REPO = Path(__file__).parent.parent / "fixtures" / "repo"


def test_docstrings_and_comments_are_not_code() -> None:
    src = '"""torch.cuda.synchronize() and "cuda" in a docstring."""\n# x.cuda()\ndef f():\n    """s3://b/k"""\n'
    assert scan_python(src) == []
    assert scan_python(src, prune=False) == []


def test_numpy_unique_and_non_forward_item_are_not_hazards() -> None:
    src = "import numpy as np\nimport torch\n\ndef prep(a):\n    return np.unique(a), a.sum().item()\n"
    assert scan_python(src) == []


def test_a_comparison_with_a_device_string_is_not_placement() -> None:
    """``== "mps"``, ``in ("cpu", "mps")``, ``!= "cuda"`` branch on another backend; ``torch.device("mps")``,
    ``.to("mps")``, ``device="cuda"`` select one, and stay findings."""
    src = (
        "import torch\n"
        'if x.device.type == "mps":\n'  # 2: comparison
        '    y = 1 if d.type in ("cpu", "mps") else 2\n'  # 3: comparison in a tuple
        'if device_map != "cuda" and dev not in ["cuda:0"]:\n'  # 4: comparisons
        '    m = torch.device("mps")\n'  # 5: placement
        'x = x.to("mps")\n'  # 6: placement
        'z = torch.ones(2, device="cuda")\n'  # 7: placement
        'ok = "xla" == kind\n'  # 8: an XLA branch is run by a Neuron port: stays
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("cuda-device-literal", 7),
            ("mps-device", 5),
            ("mps-device", 6),
            ("xla-api", 8),
        ]


def test_device_names_in_a_table_of_backends_are_not_placement() -> None:
    """A dict keyed only by device names (``kernels``' per-device mappings, ``Device(type="cuda")`` keys included),
    and lists naming two or more device types, are vocabularies of backends; one device type listed alone, a device
    as a dict value, or a dict with other keys still chooses CUDA/MPS."""
    src = (
        "import torch\n"
        'MAP = {"Layer": {"cuda": Repo(), "xpu": Repo()},\n'  # 2: table keyed by devices
        '       "Norm": {Device(type="cuda", cap=9): Repo()}}\n'  # 3: kernels.Device key
        'GGML = {"Router": {"mps": {Mode.INFERENCE: Repo()}}}\n'  # 4: one device, still a dict keyed by devices
        'NAMES = ["cpu", "cuda", "xla", "mps"]\n'  # 5: vocabulary (xla stays: a Neuron port runs it)
        'KERNEL_DEVICES = {"fa2": ("cuda", "xpu"), "fa3": ("cuda",), "metal": ("mps",)}\n'  # 6-: one table
        'ids = ["cuda:0", "cuda:1"]\n'  # 7: one device type: placement on two GPUs
        'cfg = {"device": "cuda"}\n'  # 8: a device as a value
        'mixed = {"cuda": 1, "batch": 2}\n'  # 9: not keyed by devices only
        'one = ("mps",)\n'  # 10: one device type alone
        'dm = {"": "mps"}\n'  # 11: a device_map placing everything on MPS
        'd = torch.device("cuda", 0)\n'  # 12: call arguments are not a literal
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("cuda-device-literal", 7),
            ("cuda-device-literal", 8),
            ("cuda-device-literal", 9),
            ("cuda-device-literal", 12),
            ("mps-device", 10),
            ("mps-device", 11),
            ("xla-api", 5),
        ]


def test_a_dtype_table_names_float64_without_using_it() -> None:
    """``"F64": torch.float64`` in a name -> dtype table (or dtype -> other runtime's dtype) computes nothing in
    float64; a single-entry dict of keyword arguments and a dict with a non-dtype entry still use it."""
    src = (
        "import torch\n"
        'STR_TO_DTYPE = {"F32": torch.float32, "F64": torch.float64}\n'  # 2: table
        "TO_ONNX = {torch.float64: DataType.DOUBLE, torch.complex64: DataType.C64}\n"  # 3: table (both dtypes)
        'kw = {"dtype": torch.float64}\n'  # 4: one entry: the dtype used below
        'opts = {"dtype": torch.float64, "device": dev}\n'  # 5: an entry without a dtype: options, not a table
        "y = x.to(torch.float64)\n"  # 6: a use
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("float64-dtype", 4),
            ("float64-dtype", 5),
            ("float64-dtype", 6),
        ]


def test_a_dtype_compared_with_is_not_a_float64_or_complex_use() -> None:
    """``x.dtype == torch.float64`` / ``t.dtype in (torch.float32, torch.float64)`` test which dtype is in use and
    convert nothing; a conversion in the branch, an ordering comparison's operand computed in float64, or a dtype
    passed to a call inside the comparison still use it."""
    src = (
        "import torch\n"
        "if t.dtype in (torch.float32, torch.float64):\n"  # 2: membership test
        "    t = t.float()\n"
        "ok = x.dtype == torch.float64 or y.dtype is not torch.complex64\n"  # 4: equality / identity tests
        "if x.dtype != torch.double:\n"  # 5: inequality test
        "    x = x.to(torch.float64)\n"  # 6: a conversion: a use
        "big = x.to(torch.float64) > 1\n"  # 7: the dtype is a call's argument, not an operand: a use
        "z = torch.view_as_complex(a) == b\n"  # 8: a complex op compared: a use
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("complex-dtype", 8),
            ("float64-dtype", 6),
            ("float64-dtype", 7),
        ]


def test_cuda_inside_a_wrappers_own_cuda_or_to_is_delegation() -> None:
    """``.cuda()`` as the body of ``def cuda`` (or forwarding the device in ``def to``) moves what the caller asked
    for; a bare ``.cuda()`` in ``def to`` ignores the requested device, and one anywhere else places on CUDA."""
    src = (
        "import torch\n"
        "class Rot:\n"
        "    def cuda(self):\n"
        "        return Rot(self.m.cuda())\n"  # 4: delegation
        "    def to(self, device):\n"
        "        return Rot(self.m.cuda(device))\n"  # 6: forwards the device
        "class Bad:\n"
        "    def to(self, device):\n"
        "        return self.m.cuda()\n"  # 9: ignores the device
        "    def step(self, x):\n"
        "        return x.cuda()\n"  # 11: placement
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [("cuda-call", 9), ("cuda-call", 11)]


def test_a_concat_under_if_loop_variable_equals_runs_once_and_grows_nothing() -> None:
    """``if idx == k:`` inside ``for idx ...`` is true on one iteration: the concat under it is a one-time join.
    Its ``else``, a ``<`` test, and a loop nested under it run on many iterations and stay growing sequences."""
    src = (
        "import torch\n"
        "for idx, layer in enumerate(layers):\n"
        "    if idx == n_layers - n_blocks:\n"
        "        h = torch.cat((q, h), dim=1)\n"  # 4: once
        "    else:\n"
        "        g = torch.cat((g, t), dim=1)\n"  # 6: every other iteration
        "    if 0 == idx and ready:\n"
        "        s = torch.cat([s, t])\n"  # 8: once
        "for i in range(n):\n"
        "    if i < k:\n"
        "        s = torch.cat([s, t])\n"  # 11: many iterations
        "    if i == 0:\n"
        "        for j in range(m):\n"
        "            s = torch.cat([s, t])\n"  # 14: the inner loop grows it
        "    if i == i0 + i:\n"
        "        s = torch.cat([s, t])\n"  # 16: the value uses the loop variable: not shown once
        "    while more:\n"
        "        if i == 0:\n"
        "            s = torch.cat([s, t])\n"  # 19: the innermost loop is the while: it grows
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("growing-sequence", 6),
            ("growing-sequence", 11),
            ("growing-sequence", 14),
            ("growing-sequence", 16),
            ("growing-sequence", 19),
        ]


def test_a_concat_onto_a_name_set_afresh_each_iteration_grows_nothing() -> None:
    """The hazard is a sequence carried from one iteration to the next. A name the ``for`` binds, or one the loop
    body sets without reading it before the concat (``chunk = x[:, i]``), starts anew each iteration: a per-item
    join. A name carried in (first set from itself, set afresh only after the concat, or grown by an inner loop) is
    flagged."""
    src = (
        "import torch\n"
        "for image in images:\n"
        "    image = torch.cat((image, newline), dim=-1)\n"  # 3: the loop variable: per item
        "for i in range(n):\n"
        "    chunk = x[:, i]\n"
        "    if cls:\n"
        "        chunk = torch.cat([cls_tok, chunk], dim=1)\n"  # 7: fresh from line 5
        "    seq = torch.cat([seq, chunk])\n"  # 8: carried
        "for i in range(n):\n"
        "    buf = buf * 2\n"
        "    buf = torch.cat([buf, t])\n"  # 11: its first assignment reads it: carried
        "for i in range(n):\n"
        "    if c:\n"
        "        y = torch.cat([y, t])\n"  # 14: set afresh only after the concat: taken as carried
        "    y = z[i]\n"
        "for a in A:\n"
        "    s = init\n"
        "    for b in B:\n"
        "        s = torch.cat([s, b])\n"  # 19: the inner loop carries it
        "while cond:\n"
        "    w = x0\n"
        "    w = torch.cat([w, t])\n"  # 22: fresh in the while body
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("growing-sequence", 8),
            ("growing-sequence", 11),
            ("growing-sequence", 14),
            ("growing-sequence", 19),
        ]

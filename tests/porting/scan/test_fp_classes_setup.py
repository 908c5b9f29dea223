"""False-positive classes of host-side setup and guarded CUDA code (issue 27, held-out round), each beside the near
miss that must stay a finding. Small synthetic trees; no repository's names."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import findings_in

from accelpilot.porting.scan.python import scan_python


def _pruned_is_full(source: str) -> None:
    """The pruned scan (only the blocks holding trigger lines parsed) agrees with the scan of the whole file."""
    full = sorted((r, ln, str(ctx)) for r, ln, _, _, _, ctx in scan_python(source, prune=False))
    assert sorted((r, ln, str(ctx)) for r, ln, _, _, _, ctx in scan_python(source)) == full


SCHEDULES = """\
import math

import torch


def linear_schedule(steps):
    return torch.linspace(1e-4, 0.02, steps, dtype=torch.float64)


def cosine_schedule(steps):
    t = torch.linspace(0, steps, steps + 1, dtype=torch.float64) / steps
    f = torch.cos(t * math.pi / 2) ** 2
    return torch.clip(1 - f[1:] / f[:-1], 0, 0.999)


def raw_schedule(steps):
    return torch.linspace(0, 1, steps, dtype=torch.float64)


def noise_levels(steps):
    return torch.linspace(0, 1, steps, dtype=torch.float64)


class Diffusion(torch.nn.Module):
    def __init__(self, steps=1000, schedule="cosine"):
        super().__init__()
        if schedule == "linear":
            schedule_fn = linear_schedule
        else:
            schedule_fn = cosine_schedule
        betas = schedule_fn(steps)
        alphas = torch.cumprod(1.0 - betas, dim=0)
        (n,) = betas.shape
        self.num_steps = int(n)
        keep = lambda name, val: self.register_buffer(name, val.to(torch.float32))
        keep("betas", betas)
        keep("sqrt_alphas", torch.sqrt(alphas))
        scale = torch.ones(4, dtype=torch.float64) * 2
        keep("scale", scale)
        self.register_buffer("raw", raw_schedule(steps))
        self.offsets = torch.zeros(3, dtype=torch.float64)

    def forward(self, x, t):
        return x * noise_levels(1000)[t].to(x)
"""


def test_float64_in_a_helper_that_only_builds_the_module_and_is_cast_before_kept_is_host_setup(
    tmp_path: Path,
) -> None:
    """A float64 schedule made by module-level helpers that only ``__init__`` calls (by name or through a local
    alias), derived into locals and kept through a local lambda that casts to float32, runs once on the host; so does
    float64 made in ``__init__`` itself and kept only through that lambda. Stays: a helper whose result is registered
    as it is (``raw_schedule``), a helper the forward calls (``noise_levels``), and a float64 attribute."""
    (tmp_path / "diffusion.py").write_text(SCHEDULES)
    assert findings_in(tmp_path, "diffusion.py") == [
        ("float64-dtype", 7, "host-setup"),
        ("float64-dtype", 11, "host-setup"),
        ("float64-dtype", 17, None),
        ("float64-dtype", 21, None),
        ("float64-dtype", 38, "host-setup"),
        ("float64-dtype", 41, None),
    ]
    _pruned_is_full(SCHEDULES)


KEPT_SCHEDULES = """\
import torch


def schedule(steps):
    return torch.linspace(0, 1, steps, dtype=torch.float64)


def later_schedule(steps):
    return torch.linspace(0, 1, steps, dtype=torch.float64)


class Kept(torch.nn.Module):
    def __init__(self, steps):
        super().__init__()
        betas = schedule(steps)
        self.register_buffer("betas", betas)


class Later(torch.nn.Module):
    def __init__(self, steps):
        super().__init__()
        self.register_buffer("betas", later_schedule(steps).float())
        self.make = lambda: later_schedule(steps)


def base_schedule(steps):
    return torch.linspace(0, 1, steps, dtype=torch.float64)


class Handed(Kept):
    def __init__(self, steps):
        super().__init__(base_schedule(steps))
"""


def test_a_setup_helper_whose_result_is_kept_as_float64_stays(tmp_path: Path) -> None:
    """A helper only ``__init__`` calls stays a finding when ``__init__`` registers its result as it is
    (``schedule``), also keeps a lambda that calls it later (``later_schedule``: then any def may run it), or hands
    it to the base class (``base_schedule``)."""
    (tmp_path / "kept.py").write_text(KEPT_SCHEDULES)
    assert findings_in(tmp_path, "kept.py") == [
        ("float64-dtype", 5, None),
        ("float64-dtype", 9, None),
        ("float64-dtype", 27, None),
    ]


EARLY_RETURN = """\
import torch


class Attend(torch.nn.Module):
    def __init__(self, flash=True):
        super().__init__()
        self.config = None
        if not torch.cuda.is_available() or not flash:
            return
        props = torch.cuda.get_device_properties(torch.device("cuda"))
        self.config = (props.major, props.minor)


def warm_up(x):
    if not torch.cuda.is_available():
        return x
    torch.cuda.synchronize()
    return x


def placed(x):
    if not torch.cuda.is_available():
        print("no GPU")
    return x.to(torch.device("cuda"))
"""


def test_cuda_queries_after_an_early_return_cuda_guard_are_the_probe(tmp_path: Path) -> None:
    """``if not torch.cuda.is_available() or not flash: return`` then device queries: the lines after the guard run
    only on CUDA and only ask about the device, as the body of ``if torch.cuda.is_available():`` would (`probe`).
    Stays: CUDA work after the same guard is an optional path (a warning, as under ``if
    torch.cuda.is_available():``), and a guard whose body does not leave keeps what follows on the main path."""
    (tmp_path / "attend.py").write_text(EARLY_RETURN)
    assert findings_in(tmp_path, "attend.py") == [
        ("cuda-device-literal", 10, "probe"),
        ("cuda-device-literal", 24, None),
        ("torch-cuda-api", 8, "probe"),
        ("torch-cuda-api", 10, "probe"),
        ("torch-cuda-api", 15, "probe"),
        ("torch-cuda-api", 17, "optional"),
        ("torch-cuda-api", 22, "probe"),
    ]
    _pruned_is_full(EARLY_RETURN)


EVALUATOR = """\
import torch


class Evaluator:
    def __init__(self, model, device="cuda"):
        self.model = model.to(device)


class Scorer:
    def __init__(self, model, device="cuda"):
        self.model = model.to(device)
"""

TRAINER = """\
from evaluator import Evaluator, Scorer


class Trainer:
    def __init__(self, model, device):
        self.evaluator = Evaluator(model, device=device)
        self.scorer = Scorer(model)
"""


def test_a_constructor_default_that_every_instantiation_overrides_is_an_overridden_default(tmp_path: Path) -> None:
    """``device="cuda"`` in a class's ``__init__`` whose every instantiation in the repository passes ``device=`` by
    keyword (``Evaluator(model, device=device)``, in another file): the calls name the class, not ``__init__``.
    Stays: a class instantiated once without the argument (``Scorer(model)``)."""
    (tmp_path / "evaluator.py").write_text(EVALUATOR)
    (tmp_path / "trainer.py").write_text(TRAINER)
    assert findings_in(tmp_path, "evaluator.py") == [
        ("cuda-device-literal", 5, "overridden-default"),
        ("cuda-device-literal", 10, None),
    ]


TRAINERS = """\
import torch


class BaseTrainer:
    def __init__(self, plans, device=torch.device("cuda")):
        self.device = device


class FiveEpochs(BaseTrainer):
    def __init__(self, plans, device: torch.device = torch.device("cuda")):
        super().__init__(plans, device)


class NoMirroring(BaseTrainer):
    def __init__(self, plans, device=torch.device("cuda")):
        super().__init__(plans, device=device)


class OwnDevice(BaseTrainer):
    def __init__(self, plans, device=torch.device("cuda")):
        super().__init__(plans)
        self.net = torch.nn.Linear(2, 2).to(device)


class Placed(BaseTrainer):
    def __init__(self, plans, where="cuda"):
        super().__init__(plans, where)
"""


def test_a_subclass_default_handed_to_the_base_init_is_a_forwarded_default(tmp_path: Path) -> None:
    """nnU-Net's trainer variants: ``def __init__(self, plans, device=torch.device('cuda')):
    super().__init__(plans, device)``. The default is a copy of the base class's, found where the base defines it.
    Stays: the base's own default, a subclass that keeps the parameter for itself instead of passing it on, and
    a forwarded parameter that is not named a device (torchdiffeq's ``dtype=torch.float64`` is one, and its base
    takes it without a default)."""
    (tmp_path / "trainers.py").write_text(TRAINERS)
    assert findings_in(tmp_path, "trainers.py") == [
        ("cuda-device-literal", 5, None),
        ("cuda-device-literal", 10, "forwarded-default"),
        ("cuda-device-literal", 15, "forwarded-default"),
        ("cuda-device-literal", 20, None),
        ("cuda-device-literal", 26, None),
    ]


DRAWS = """\
import torch


class Diffusion(torch.nn.Module):
    def forward(self, x):
        b = x.shape[0]
        t = torch.randint(0, self.num_timesteps, (b,), device=x.device).long()
        u = torch.randint(x.shape[1], (b,)).long()
        seed = torch.randint(0, 2**62, (b,)).long()
        ids = torch.randint(0, self.max_seed, (b,)).long()
        return x[t] + u + seed + ids
"""


def test_a_long_of_a_random_draw_below_a_count_is_not_an_int64_line(tmp_path: Path) -> None:
    """``torch.randint(0, self.num_timesteps, (b,)).long()``: every value is below the count of steps (and randint
    already returns int64), so int64 computed as int32 cannot overflow it. Stays: a draw below ``2**62`` (a seed or a
    hash) and one whose bound is not read as a count (``self.max_seed``)."""
    (tmp_path / "model.py").write_text(DRAWS)
    assert findings_in(tmp_path, "model.py") == [("int64-index", 9, None), ("int64-index", 10, None)]


def test_a_list_of_three_or_more_dtypes_is_a_table_not_a_use() -> None:
    """nanotron's P2P metadata: ``ID_TO_DTYPE = [torch.float32, torch.float64, torch.complex64, ...]`` names the
    dtypes a tensor may have, to send an index for each; nothing is computed in them. Stays: a pair of dtypes (a
    choice), and a tensor made in float64."""
    from accelpilot.porting.scan import scan_python

    src = (
        b"import torch\nID_TO_DTYPE = [\n    torch.float32,\n    torch.float64,\n    torch.complex64,\n"
        b"    torch.float16,\n]\nTWO = (torch.float32, torch.float64)\nx = torch.zeros(2, dtype=torch.float64)\n"
    )
    assert sorted((r, ln) for r, ln, *_ in scan_python(src)) == [("float64-dtype", 8), ("float64-dtype", 9)]


def test_a_cuda_query_in_a_conditional_expression_under_a_cuda_test_is_the_probe() -> None:
    """RFdiffusion's run metadata: ``device=torch.cuda.get_device_name(torch.cuda.current_device()) if
    torch.cuda.is_available() else "CPU"`` reads a fact of the device the test found, as ``if is_available():`` would.
    Stay: a placement in that arm (``.cuda()``), and a query under a test that does not ask for CUDA."""
    from accelpilot.porting.scan import scan_python

    src = (
        b"import torch\ntrb = dict(\n    device=torch.cuda.get_device_name(torch.cuda.current_device())\n"
        b'    if torch.cuda.is_available()\n    else "CPU",\n)\n'
        b"x = torch.zeros(1).cuda() if torch.cuda.is_available() else None\n"
        b'y = torch.cuda.get_device_name(0) if flag else "CPU"\n'
    )
    found = sorted((r, ln, c) for r, ln, _, _, _, c in scan_python(src))
    assert ("torch-cuda-api", 3, "probe") in found
    assert ("cuda-call", 7, None) in found and ("torch-cuda-api", 8, None) in found

"""False-positive classes found on public vision/diffusion repositories (issue 27, second round), appended to
``fp_rows_reach.CLASSES``: the table the README's list is generated from (``fp_classes.py``)."""

from __future__ import annotations

from accelpilot.porting.fp_rows import FalsePositiveClass
from accelpilot.porting.fp_rows_reach import CLASSES as _EARLIER

_VI = "tests/porting/scan/test_fp_classes_vision.py::"

CLASSES: tuple[FalsePositiveClass, ...] = (
    *_EARLIER,
    FalsePositiveClass(
        "gpus-option-in-prose",
        "no finding",
        '`--gpus` followed by a word of prose (`"--gpus must be at least 1"`, a CLI\'s error message through any '
        "call) names the option; a Slurm/launcher request needs a value (a count, `type:count`, `all`, a "
        "variable): `srun --gpus=4` stays.",
        (_VI + "test_a_gpus_option_named_in_prose_is_not_a_slurm_request",),
    ),
    FalsePositiveClass(
        "container-mount-target",
        "no finding",
        "A scratch/NVMe path that a container run mounts onto (`docker run -v `pwd`:/scratch --workdir=/scratch`, "
        "a compose `- ./data:/scratch`) is a path inside the container, the same on any host; the host side of a "
        "mount (`-v /raid/datasets:/data`) stays.",
        (
            _VI + "test_a_container_mount_target_is_not_a_local_scratch_dependency",
            _VI + "test_a_compose_volume_target_is_not_a_local_scratch_dependency",
        ),
    ),
    FalsePositiveClass(
        "pin-memory-on-cuda-branch",
        "no finding",
        '`x.pin_memory()` in the body of `if device_type == "cuda":` (`x.is_cuda`, `torch.cuda.is_available()`) '
        "runs only on CUDA: the target takes the other branch. An unguarded call stays.",
        (_VI + "test_a_pin_memory_call_under_a_cuda_test_is_the_cuda_branch_not_the_targets",),
    ),
)

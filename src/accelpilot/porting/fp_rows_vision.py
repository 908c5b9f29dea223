"""False-positive classes found on public vision/diffusion repositories (issue 27, second round), appended to
``fp_rows_reach.CLASSES``: the table the README's list is generated from (``fp_classes.py``)."""

from __future__ import annotations

from accelpilot.porting.fp_rows import FalsePositiveClass
from accelpilot.porting.fp_rows_reach import CLASSES as _EARLIER

_VI = "tests/porting/scan/test_fp_classes_vision.py::"
_SE = "tests/porting/scan/test_fp_classes_setup.py::"
_EM = "tests/porting/scan/test_fp_classes_entry_main.py::"
_LK = "tests/porting/scan/test_fp_classes_lock.py::"
_R17 = "tests/porting/scan/test_fp_classes_round17.py::"
_R18 = "tests/porting/scan/test_fp_classes_round18.py::"
_R19 = "tests/porting/scan/test_fp_classes_round19.py::"
_R21 = "tests/porting/scan/test_round21.py::"

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
    FalsePositiveClass(
        "host-setup-helper",
        "host-setup",
        "float64 made by a helper that only module-building defs call (by name, or through a local alias: "
        "`schedule_fn = cosine_schedule`), or in `__init__` itself, followed through locals and derived values to "
        "where it is kept: kept only after a cast to a narrower float (a local `lambda name, val: "
        "self.register_buffer(name, val.to(torch.float32))`), it is host setup. A helper's result registered as it "
        "is or handed to the base class, a helper also called from a forward or from a lambda kept for later, and a "
        "float64 attribute stay.",
        (
            _SE + "test_float64_in_a_helper_that_only_builds_the_module_and_is_cast_before_kept_is_host_setup",
            _SE + "test_a_setup_helper_whose_result_is_kept_as_float64_stays",
        ),
    ),
    FalsePositiveClass(
        "after-early-return-cuda-guard",
        "probe",
        "The lines after `if not torch.cuda.is_available() or not flag: return` (`continue`, `break`) in the same "
        "block run only on CUDA and are read as the body of `if torch.cuda.is_available():`: device queries alone "
        "are the probe; CUDA work there is an optional path (a warning). A guard that raises stays a requirement, "
        "one whose body does not leave changes nothing after it.",
        (_SE + "test_cuda_queries_after_an_early_return_cuda_guard_are_the_probe",),
    ),
    FalsePositiveClass(
        "constructor-default-overridden",
        "overridden-default",
        '`device="cuda"` in a class\'s `__init__` whose every instantiation in the repository passes it by keyword '
        "(`Evaluator(model, device=device)`, in any file): the calls name the class, not `__init__`. An "
        "instantiation without it, or a subclass (the class named in its bases), keeps it.",
        (_SE + "test_a_constructor_default_that_every_instantiation_overrides_is_an_overridden_default",),
    ),
    FalsePositiveClass(
        "cuda-query-in-conditional-expression",
        "probe",
        '`torch.cuda.get_device_name(torch.cuda.current_device()) if torch.cuda.is_available() else "CPU"` '
        "(RFdiffusion's run metadata): the arm under the CUDA test only reads a fact of the device it found, as the "
        "body of `if torch.cuda.is_available():` would. A placement in that arm, or a test that does not ask for "
        "CUDA, stays.",
        (_SE + "test_a_cuda_query_in_a_conditional_expression_under_a_cuda_test_is_the_probe",),
    ),
    FalsePositiveClass(
        "dtype-list",
        "no finding",
        "Three or more torch dtypes in a list, tuple or set (nanotron's P2P `ID_TO_DTYPE = [torch.float32, "
        "torch.float64, torch.complex64, ...]`): a table that names dtypes to send an index for each, computing "
        "nothing in them. A pair of dtypes (a choice) and a tensor made in float64 stay.",
        (_SE + "test_a_list_of_three_or_more_dtypes_is_a_table_not_a_use",),
    ),
    FalsePositiveClass(
        "per-device-install-choice",
        "no finding",
        "A README pip line pinning a CUDA build of torch inside a folded `<details>` block whose summary names a "
        "device (F5-TTS's `NVIDIA GPU`, beside `AMD GPU`, `Intel GPU`, `Apple Silicon`): one install per device, of "
        "which a Neuron host runs none. The same pin in a block that names no device stays.",
        (
            "tests/porting/scan/test_install.py::test_a_readme_pip_line_in_a_folded_per_device_choice_is_no_install_of_the_target",
        ),
    ),
    FalsePositiveClass(
        "forwarded-default",
        "forwarded-default",
        "`device=torch.device('cuda')` in a subclass's `__init__` that hands `device` unchanged to "
        "`super().__init__` (nnU-Net's trainer variants): the base places with it, so the default repeats the base's "
        "choice, found where the base makes it. A subclass that keeps the parameter, or a forwarded non-device value "
        "(`dtype=torch.float64`), stays.",
        (_SE + "test_a_subclass_default_handed_to_the_base_init_is_a_forwarded_default",),
    ),
    FalsePositiveClass(
        "bounded-random-draw",
        "no finding",
        "`torch.randint(0, self.num_timesteps, (b,)).long()`: a draw below a count (an int literal under 2**31, a "
        "count's name such as `num_*`, `*_steps`, `*_size`, `len(...)`, a size) cannot overflow int64 computed as "
        "int32, and randint is int64 already. A draw below `2**62` (a seed, a hash) or below a bound not read as a "
        "count stays.",
        (_SE + "test_a_long_of_a_random_draw_below_a_count_is_not_an_int64_line",),
    ),
    FalsePositiveClass(
        "entry-point-main-block",
        "warning",
        'The `if __name__ == "__main__":` block of a script a README (or linked document) command runs is that '
        "entry point's default path, whatever the script's name: its findings are porting work, judged as any entry "
        'line (`"cuda" if torch.cuda.is_available() and args.cuda else "cpu"` falls back to the CPU: a '
        "performance item). The same block in a module no command runs stays `main-block`.",
        (
            _EM + "test_the_main_block_of_a_readme_entry_point_is_its_run_and_a_modules_stays_a_demo",
            _EM + "test_an_entry_points_cuda_or_cpu_choice_with_a_further_condition_falls_back",
        ),
    ),
    FalsePositiveClass(
        "torch-cuda-wheels",
        "joins an item",
        "`nvidia-*-cu12` and `triton` lines of an exported lock (uv/pip-compile `requirements.txt`) whose `# via` "
        "parents are only torch (or other such wheels) are the torch build's own dependencies: with the torch line "
        "they are one item, `<torch pin> CUDA build` (the work: a torch build for the target and a re-lock). A wheel "
        "with another parent (`-r requirements.in`, a library) stays its own item.",
        (
            _LK + "test_torchs_cuda_wheels_in_an_exported_lock_are_one_item_about_the_torch_pin",
            _LK + "test_a_cuda_wheel_the_project_requires_itself_stays_its_own_item",
            _LK + "test_a_file_without_a_torch_pin_has_no_followers",
        ),
    ),
    FalsePositiveClass(
        "script-gpus-argument",
        "no finding",
        "`--gpus 0 1` after `python train.py` on a shell line is the script's own argument (RAFT's DataParallel "
        "device ids), asked of no scheduler; `srun --gpus=8` and `#SBATCH --gpus=4` stay Slurm requests.",
        (_R17 + "test_a_scripts_own_gpus_argument_is_no_slurm_request",),
    ),
    FalsePositiveClass(
        "host-mask-and-nonzero",
        "no finding",
        "A boolean mask read from a name last bound to a numpy call or an `.astype(...)` (RAFT's augmentor "
        "`coords[valid >= 1]`), and `torch.nonzero(t)` of a tensor built on the CPU, are host data; the same on a "
        "tensor, or on one given a device, stay.",
        (_R17 + "test_numpy_masks_and_torch_nonzero_on_host_data_are_not_device_hazards",),
    ),
    FalsePositiveClass(
        "skip-connection-concat",
        "no finding",
        "A concat in a layer loop whose result a later statement of the loop passes through a call that rebinds it "
        "(NeRF's `xyz_ = torch.cat([input_xyz, xyz_], -1)` then `xyz_ = layer(xyz_)`) grows nothing; a decode loop "
        "that only reads the concatenated sequence stays `growing-sequence`.",
        (_R17 + "test_a_skip_connections_concat_in_a_layer_loop_grows_nothing",),
    ),
    FalsePositiveClass(
        "cpu-cpp-extension",
        "no finding",
        "A file whose only extension builder is `CppExtension` and that names no CUDA source (no `.cu`, no "
        "`CUDAExtension`, no `cuda_sources=`) builds host C++ (YOLOX's COCOeval op, through `CppExtension` or its JIT "
        "`load()` fallback): no `cpp-extension-cuda` line; the same file naming a `.cu` source stays one.",
        (_R17 + "test_a_cpp_extension_with_no_cuda_source_is_no_cuda_kernel",),
    ),
    FalsePositiveClass(
        "example-benchmark",
        "example",
        "A benchmark folder inside an example folder no README command runs (LoRA's vendored transformers copy, "
        "`examples/NLU/src/transformers/benchmark/`) is the example's, listed apart; a top-level `benchmarks/` "
        "script, or one inside the example folder a README command runs, stays a benchmark's warning.",
        (_R17 + "test_a_benchmark_inside_an_example_folder_is_an_example",),
    ),
    FalsePositiveClass(
        "record-launch-script",
        "unreached-module",
        "A shell script no README command runs, in a sub-folder, that launches only scripts of its own folder "
        "that nothing imports or runs, each named as a copy of an entry script (modded-nanogpt's "
        "`records/.../run.sh` beside a `train_gpt_*.py` snapshot, after the root's data download it names by "
        "path), is a past run, listed apart with its folder's "
        "`requirements.txt`; one launching the root's trainer, or its folder's own differently named script "
        "(ChatGLM's `ptuning/train.sh`), stays.",
        (_R17 + "test_a_past_records_launch_script_is_on_no_path",),
    ),
    FalsePositiveClass(
        "submitit-zero-gpus",
        "no finding",
        "A submitit request of `gpus_per_node=0` (SAM 2's CPU frame-extraction job) asks Slurm for no GPU; "
        "`gpus_per_node=1` stays a request.",
        (_R18 + "test_a_submitit_request_of_zero_gpus_asks_for_none",),
    ),
    FalsePositiveClass(
        "dataset-mixer-multinomial",
        "host-side",
        "`probs.multinomial(1)` in a data file (SAM 2's `training/dataset/`, a loader choosing which dataset to read "
        "next) is host work, no token sampled on the device; the same loop in a model file stays a sampling line.",
        (_R18 + "test_a_loader_drawing_which_dataset_to_read_with_multinomial_is_host_work",),
    ),
    FalsePositiveClass(
        "tokenizer-encode-in-loop",
        "no finding",
        "A tokenizer's `encode` in a loop (`tokenizer = RustBPETokenizer.from_pretrained(...)`, nanochat; ChatGLM's "
        "preprocessing) is host tokenisation, no pretrained model on the device; a pretrained encoder's `encode` "
        "in the loop stays.",
        (_R18 + "test_a_tokenizers_encode_in_a_loop_is_no_pretrained_encoder_on_the_device",),
    ),
    FalsePositiveClass(
        "host-random-draw-read",
        "no finding",
        "A random draw made with no `device=` (`torch.rand(1, generator=self.rng).item()`, "
        "`int(torch.randint(...).item())`: audiocraft's condition and quantizer dropout) is a CPU tensor: reading it "
        "back, or branching on it, waits on no device; the same draw on `x.device`, a model value and the loss "
        "stay.",
        (_R18 + "test_a_random_draw_made_on_the_host_read_back_is_no_device_sync",),
    ),
    FalsePositiveClass(
        "dict-items-concat",
        "no finding",
        "`torch.cat` in a loop over a dict's `items()` (audiocraft's ConditionFuser joining each condition type) "
        "runs once per key, a count the structure fixes: nothing grows; a decode loop over `range(steps)` stays.",
        (_R18 + "test_a_concat_over_a_dicts_conditions_grows_no_sequence",),
    ),
    FalsePositiveClass(
        "cuda-function-chosen-with-no-op",
        "backend-branch",
        '`synchronize = torch.cuda.synchronize if device_type == "cuda" else lambda: None` (nanochat) takes the '
        "no-op off CUDA: the README script holding it does not stop; another function as the other arm stays a "
        "use of CUDA.",
        (
            "tests/porting/scan/test_fp_classes_scanfp13.py::"
            "test_a_cuda_function_chosen_only_on_a_cuda_device_type_with_a_no_op_lambda_elsewhere_does_not_stop",
        ),
    ),
    FalsePositiveClass(
        "masked-read-to-numpy",
        "no finding",
        "A masked read turned into numpy on the spot (`c_dets[mask_c].numpy()`, YOLOX's VOC evaluator) is of host "
        "data: `.numpy()` raises on a device tensor; the same read kept as a tensor stays.",
        (_R18 + "test_a_masked_read_turned_into_numpy_is_the_hosts",),
    ),
    FalsePositiveClass(
        "object-store-path-per-item",
        "one item",
        "Object-store paths are one item per bucket (`s3://ai2-llm`), not one per path: OLMo's configs name 6,656 "
        "paths in two buckets; another bucket is another item.",
        (_R19 + "test_object_store_paths_are_one_item_per_bucket",),
    ),
    FalsePositiveClass(
        "vendored-project",
        "warning",
        "A project copied into the repository under `dependencies/`, `third_party/`, `thirdparty/`, `3rdparty/`, "
        "`vendor/` or `vendored/` (OLMo's `inference/compression/dependencies/AutoGPTQ/`, with its own setup.py and "
        "CUDA extensions) is run by its own tools, not the default commands: a warning (`vendored`), one item for "
        "the copy (1-5 days: port what the repository calls, or use the upstream release); the same extension in "
        "the repository's own folders blocks.",
        (_R19 + "test_a_vendored_project_under_dependencies_is_off_the_default_path",),
    ),
    FalsePositiveClass(
        "kernel-backend-selector",
        "no finding",
        "A parameter whose name the file compares with another kernel implementation's name (S4's `backend: str = "
        "'cuda'` beside `self.backend in ['cuda', 'keops', 'naive']`) selects an implementation, like `impl=\"cuda\"`: "
        'its default is no device string; a `device` default, and a name compared only with `"cpu"`, stay.',
        (_R19 + "test_a_name_compared_with_other_kernel_implementations_is_a_selector_not_a_device",),
    ),
    FalsePositiveClass(
        "demo-named-folder",
        "example",
        "A folder named for a demo (`gradio_demo/`, `demo_app/`: CoTracker's gradio app and the requirements that pin "
        "torch 1.13) is example code, listed apart, even where the README installs its requirements; "
        "`demonstration_utils/` stays the project's.",
        (_R19 + "test_a_folder_named_for_a_demo_is_example_code",),
    ),
    FalsePositiveClass(
        "linked-sub-project",
        "warning",
        "A folder the README links that holds its own README and its own install (Depth-Anything-V2's "
        "`metric_depth/`: a README, a `requirements.txt`, its own copy of the model and a `dist_train.sh`) is a "
        "project of its own: its shell scripts are no default commands, so what they reach stays a warning; a "
        "linked folder of scripts only (TinyLlama's `sft/`) is the README's own step, and its scripts still run.",
        (
            _R21 + "test_a_linked_folder_with_its_own_readme_and_install_is_no_default_path",
            _R21 + "test_a_linked_folder_of_scripts_is_the_readmes_own_step",
        ),
    ),
    FalsePositiveClass(
        "package-list-not-requirement",
        "no finding",
        "A package named in a list that is no requirement (isort's `known_third_party = PIL,basicsr,cv2` in "
        "Real-ESRGAN's setup.cfg) installs nothing; the same name on a requirements line or a pip line stays.",
        (_R21 + "test_basicsr_blocks_where_the_readme_installs_it_unless_its_spec_excludes_1_4_2",),
    ),
)

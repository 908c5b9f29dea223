"""The false-positive classes of the scan, one row each (rendered into the README by ``fp_classes.py``)."""

from __future__ import annotations

from dataclasses import dataclass

# What a class becomes besides a context of ``NOT_PORTING`` (findings.py): no finding at all, a line joined to
# another item's work, or one item for the repository.
OUTCOMES = frozenset({"no finding", "joins an item", "one item", "blocking", "warning"})

_FP = "tests/porting/scan/test_fp_classes.py::"
_FP12 = "tests/porting/scan/test_fp_classes_scanfp12.py::"
_FP13 = "tests/porting/scan/test_fp_classes_scanfp13.py::"
_FP14 = "tests/porting/scan/test_fp_classes_scanfp14.py::"
_PL = "tests/porting/scan/test_placement_classes.py::"
_VI = "tests/porting/scan/test_visitor.py::"
_IT = "tests/porting/test_items.py::"
_IF = "tests/porting/test_items_function.py::"
_I27 = "tests/porting/scan/test_fp_classes_issue27.py::"


@dataclass(frozen=True, slots=True)
class FalsePositiveClass:
    """One class of lines that look like porting work and are not (or are less than they look)."""

    id: str
    outcome: str  # a NOT_PORTING context, or one of OUTCOMES
    text: str  # Markdown, one or more sentences: the class and the near miss that stays a finding
    tests: tuple[str, ...]  # "path::test_name" of each test that holds the class beside its near miss


CLASSES: tuple[FalsePositiveClass, ...] = (
    FalsePositiveClass(
        "probe",
        "probe",
        "Availability/version probes (`is_available`, `find_spec`, `_is_package_available`, `is_*_available`), "
        "`pytest.importorskip` and skip guards; `triton.testing` helpers are `benchmark-tool`.",
        (_IT + "test_not_porting_work_is_never_blocking_and_counted_apart",),
    ),
    FalsePositiveClass(
        "requirement",
        "probe",
        "A probe whose branch raises (`if not torch.cuda.is_available(): raise ...`) is a requirement, a warning "
        "item, not a probe.",
        (_IT + "test_a_probe_whose_branch_raises_is_a_requirement_not_a_probe",),
    ),
    FalsePositiveClass(
        "probe-logs-only",
        "probe",
        "A device query whose `if` only logs a message is a probe.",
        (_IT + "test_a_device_query_that_only_decides_a_log_message_is_a_probe",),
    ),
    FalsePositiveClass(
        "test-only",
        "test-only",
        "Test-only code (files under `tests/`, `test_*.py`, `conftest.py`, `testing_utils.py`); a test file stays "
        "`test-only` under a line's own porting reach (`optional`, `requirement`, a lazy import).",
        (_PL + "test_a_guarded_path_of_test_code_is_still_test_code",),
    ),
    FalsePositiveClass(
        "host-side-files",
        "host-side",
        "Compile hazards in host-side files (tokenisers, image/video processors, data loading, trainers).",
        (
            _IT + "test_video_processors_are_host_side",
            _FP + "test_a_video_processor_is_host_side_like_an_image_processor",
        ),
    ),
    FalsePositiveClass(
        "generator-source",
        "generator-source",
        "A transformers `modular_X.py` whose generated `modeling_X.py` sits beside it.",
        (_IT + "test_modular_source_with_its_generated_twin_is_not_porting_work",),
    ),
    FalsePositiveClass(
        "device-comparison",
        "no finding",
        'A device string in a comparison (`device.type == "mps"`, `in ("cpu", "mps")`, `device_map != '
        '"cuda"`) is a branch for a backend, not placement.',
        (_VI + "test_a_comparison_with_a_device_string_is_not_placement",),
    ),
    FalsePositiveClass(
        "per-backend-dispatch",
        "backend-branch",
        "A backend's own API call (memory statistics, caches, seeds, synchronisation) in that backend's branch of a "
        "per-backend dispatch (an `if`/`elif` chain probing two or more backends, ending in an `else` fallback that "
        'does not raise), unless the branch places work (a device string, `torch.device("cuda")`, `.cuda()`, '
        '`set_device`); `device = "cuda" if torch.cuda.is_available() else "cpu"` stays placement.',
        (_FP + "test_a_backend_call_in_its_branch_of_a_per_backend_dispatch_is_not_porting_work",),
    ),
    FalsePositiveClass(
        "http-upload",
        "no finding",
        "An HTTP request that sends a body (`requests.post/put/patch`, `urlopen(url, data)`, `urlopen` of a "
        '`Request` with `data=` or `method="POST"`) is an upload or telemetry, not a download.',
        (_FP + "test_an_http_request_that_sends_a_body_is_not_a_download",),
    ),
    FalsePositiveClass(
        "bounded-long",
        "no finding",
        "A `.long()` whose values are bounded by a size (a boolean, a count of booleans, lengths whose maximum is a "
        "`torch.arange` extent, the index argument of `scatter`/`gather`/`index_select`) is not an int64 line.",
        (_FP + "test_a_long_whose_values_are_bounded_by_a_size_is_not_an_int64_item",),
    ),
    FalsePositiveClass(
        "int64-repo-item",
        "one item",
        "The remaining int64 lines are one info item for the repository (`repo|int64-index`): a static scan cannot "
        "see value ranges, so the work is one range check, not an item per file.",
        (_FP + "test_int64_casts_in_many_files_are_one_range_check_for_the_repository",),
    ),
    FalsePositiveClass(
        "def-cuda-delegation",
        "no finding",
        "`.cuda()` inside a `def cuda` (a wrapper mirroring `Tensor.cuda()`) is delegation: the caller's `.cuda()` "
        "is the finding; so is a `.cuda(device)` forwarding the requested device inside a wrapper's `def to` (a "
        "bare `.cuda()` there stays).",
        (_FP + "test_cuda_inside_a_def_cuda_is_delegation_and_its_callers_are_findings",),
    ),
    FalsePositiveClass(
        "wrapper-default-delegation",
        "no finding",
        "The default device of a wrapper's own `cuda` method is delegation too.",
        (_PL + "test_the_default_device_of_a_wrappers_own_cuda_is_delegation",),
    ),
    FalsePositiveClass(
        "device-type-chain",
        "backend-branch",
        'A chain on a device\'s type (`if self.device.type == "cuda": ... elif self.device.type == "xpu": ... '
        "else: ...`) is a dispatch too: selecting the device it was given (`torch.cuda.device(self.device)`) is "
        "`backend-branch`, a literal (`set_device(0)`) stays. A body under one availability probe of another "
        "accelerator (`if is_torch_xpu_available():`, or its cached result; not CUDA, XLA or Neuron) runs only there.",
        (_FP + "test_a_branch_chosen_by_the_device_type_or_by_another_accelerator_is_not_porting_work",),
    ),
    FalsePositiveClass(
        "experts-dispatch",
        "reference-fallback",
        "An experts module behind transformers' `@use_experts_implementation` (which runs grouped_mm unless eager is "
        "asked for) is one line of one repository item, `repo|moe-experts-dispatch`; the class body is its eager "
        "reference.",
        (_FP + "test_an_experts_class_the_library_dispatches_by_default_is_one_repository_item",),
    ),
    FalsePositiveClass(
        "experts-dispatch-call",
        "reference-fallback",
        "A class handed to `use_experts_implementation(experts_class=...)` by a call is an eager reference like a "
        "decorated one (the call is a line of `repo|moe-experts-dispatch`).",
        (_PL + "test_a_class_a_dispatcher_call_wraps_is_an_eager_reference",),
    ),
    FalsePositiveClass(
        "device-table",
        "no finding",
        "Device names listed as a table or vocabulary of backends (a dict keyed only by device names, such as the "
        '`kernels` package\'s per-device mappings with `Device(type="cuda")` keys, or a list/tuple/set literal '
        "naming two or more device types); one device type alone, a device as a dict value and "
        '`torch.device("cuda")` stay placement.',
        (_VI + "test_device_names_in_a_table_of_backends_are_not_placement",),
    ),
    FalsePositiveClass(
        "device-inventory",
        "no finding",
        "Device names added one call at a time to one collection that receives two or more device types in the same "
        'def (`devices.add("cuda")` beside `devices.add("mps")`) are an inventory of backends.',
        (_PL + "test_device_names_added_one_by_one_to_an_inventory_are_not_placement",),
    ),
    FalsePositiveClass(
        "dtype-table",
        "no finding",
        'Torch dtypes in a dtype table (`"F64": torch.float64`) are not float64 uses.',
        (_VI + "test_a_dtype_table_names_float64_without_using_it",),
    ),
    FalsePositiveClass(
        "dtype-test",
        "no finding",
        "A torch dtype that is an operand of a dtype test (`x.dtype == torch.float64`, `t.dtype in (torch.float32, "
        "torch.float64)`) converts nothing.",
        (_VI + "test_a_dtype_compared_with_is_not_a_float64_or_complex_use",),
    ),
    FalsePositiveClass(
        "concat-once",
        "no finding",
        "A `torch.cat` under `if i == k:` in `for i ...` runs once and grows nothing.",
        (_VI + "test_a_concat_under_if_loop_variable_equals_runs_once_and_grows_nothing",),
    ),
    FalsePositiveClass(
        "concat-fresh-name",
        "no finding",
        "A `torch.cat` onto a name set afresh each iteration (the loop's own variable, or assigned earlier in the body "
        "without reading itself) is a per-item join, not a growing sequence.",
        (_VI + "test_a_concat_onto_a_name_set_afresh_each_iteration_grows_nothing",),
    ),
    FalsePositiveClass(
        "concat-fresh-on-path",
        "no finding",
        "A `torch.cat` onto a name set afresh earlier in the same iteration also counts as a per-item join when the "
        "assignment is inside the `if` that holds the concat, in both branches of an `if`/`else`, or under an earlier "
        "`if` with the same test.",
        (_FP + "test_a_concat_of_a_name_set_afresh_earlier_in_the_same_iteration_does_not_grow",),
    ),
    FalsePositiveClass(
        "concat-per-submodule",
        "no finding",
        "A `torch.cat` onto a carried name is no growing sequence when every loop around it in its def runs once per "
        "submodule (`for layer in self.layers`, `range(len(self.layers))`): a trace unrolls it; a loop over a number "
        "or a `while` stays.",
        (_PL + "test_a_concat_in_a_loop_over_the_modules_submodules_grows_nothing_per_step",),
    ),
    FalsePositiveClass(
        "other-runtime",
        "other-runtime",
        "Every line of a file named for another runtime's export or runner (ONNX/ONNX Runtime, OpenVINO/NNCF, "
        "ExecuTorch, TFLite, Core ML); torch.export/dynamo files and TensorRT stay porting work.",
        (_IT + "test_exporters_for_other_runtimes_are_counted_apart",),
    ),
    FalsePositiveClass(
        "weight-init",
        "weight-init",
        "float64 in a def reached, by its same-file callers, only from `_init_weights`/`initialize_weights`; the same "
        "helper called from `forward`, at module level, or by nobody in the file stays a finding.",
        (_IT + "test_float64_reached_only_from_weight_initialisation_is_set_apart",),
    ),
    FalsePositiveClass(
        "host-built-tensor",
        "no finding",
        "`.item()`/`.tolist()` of a tensor built from Python values (`torch.as_tensor([n])`, through "
        "`clamp`/`.float()`/a name's last assignment in the def) is not a host sync of model data.",
        (_FP + "test_reading_back_a_tensor_built_from_python_values_is_not_a_host_sync",),
    ),
    FalsePositiveClass(
        "host-count-over-ranks",
        "no finding",
        "A tensor built from Python values stays so when summed over ranks (`reduce`/`all_reduce`) and divided by a "
        "number no input decides (`num_boxes / world_size`, the DETR losses).",
        (_FP + "test_a_host_count_summed_over_ranks_and_scaled_by_the_world_size_is_not_a_host_sync",),
    ),
    FalsePositiveClass(
        "apple-kernel",
        "backend-branch",
        "A hub kernel whose repo id has the word `mlx` or `metal` runs only on Apple's GPU stack.",
        (_FP + "test_a_hub_kernel_built_for_metal_or_mlx_is_another_backends_branch",),
    ),
    FalsePositiveClass(
        "mps-link",
        "backend-branch",
        "The MPS link of an if/elif chain that also has a generic branch (a link testing no backend, or an `else` "
        'that does not raise; `"mps" in gpus` counts as an MPS test, `device.startswith("mps")` as a comparison).',
        (_FP + "test_an_mps_branch_beside_a_generic_branch_is_another_backends_branch",),
    ),
    FalsePositiveClass(
        "mps-probe-link",
        "backend-branch",
        "An MPS probe as an `elif` link (after a probe head) or as an operand of an `and` "
        "(`torch.backends.mps.is_available() and hasattr(...)`).",
        (_FP + "test_an_mps_elif_link_or_an_mps_probe_in_an_and_is_another_backends_branch",),
    ),
    FalsePositiveClass(
        "backend-flag",
        "backend-branch",
        'A flag assigned once from comparisons naming one backend (`is_mps = any(d == "mps" ...)`; `if is_mps:` '
        "beside a generic branch).",
        (_FP + "test_a_flag_set_from_one_device_comparison_is_that_comparison",),
    ),
    FalsePositiveClass(
        "flash-requested",
        "backend-branch",
        "The body of `if is_flash_attention_requested(...)` is flash-attn's own path, counted by its package item; "
        "the sdpa/eager else stays.",
        (_FP + "test_the_body_of_a_flash_attention_request_test_is_flash_attns_branch",),
    ),
    FalsePositiveClass(
        "generation-repo-item",
        "one item",
        "The growing sequences of a `generation/` package (the generate loops, assisted decoding, candidate "
        "generators) are one repository item, `repo|growing-sequence|generation`, which also takes the hazards "
        "sharing a function with them.",
        (_IT + "test_growing_sequences_of_a_generation_package_are_one_repository_item",),
    ),
    FalsePositiveClass(
        "generation-file-hazards",
        "joins an item",
        "A `generation/` file that holds a growing sequence of the generate loops has its other compile hazards in "
        "that repository item; a `generation/` file without one (logits processors) keeps its own items.",
        (_FP + "test_hazards_of_a_generate_loop_file_join_the_generation_item",),
    ),
    FalsePositiveClass(
        "probe-def",
        "probe",
        "The body of a def named `is_*_available`/`is_*_loadable`.",
        (_FP + "test_the_body_of_an_is_available_or_is_loadable_def_is_a_probe",),
    ),
    FalsePositiveClass(
        "packing-refused",
        "no finding",
        'A `cu_seqlens` test whose branch only raises (`if kwargs.get("cu_seqlens") is not None: raise ...`) refuses '
        "packing and is no varlen use.",
        (_FP + "test_a_test_of_packed_input_whose_branch_only_raises_is_not_packing",),
    ),
    FalsePositiveClass(
        "mask-from-state",
        "no finding",
        "A mask read keeps a fixed count when the mask is made only from the module's own state, constants and "
        "host-typed arguments (`int | None`, `torch.device`: a vocabulary map, a config-only noise schedule).",
        (_FP + "test_a_mask_made_only_from_module_state_and_host_arguments_is_not_a_data_dependent_read",),
    ),
    FalsePositiveClass(
        "mask-as-positions",
        "no finding",
        "A `*mask` name built as integer positions in its def (`argmax`, `dtype=torch.long`) is a gather.",
        (_FP + "test_a_name_ending_in_mask_built_as_integer_positions_is_a_gather_not_a_mask",),
    ),
    FalsePositiveClass(
        "helper-joins-caller",
        "joins an item",
        "A hazard in a helper that one def of the file alone calls joins that def's item, when every line of the "
        "helper's rules then lies in that def (so no other work is pulled in).",
        (_IF + "test_a_helper_one_function_alone_calls_joins_that_functions_item",),
    ),
    FalsePositiveClass(
        "type-annotation",
        "no finding",
        "A type annotation (`stream: torch.cuda.Stream`, on an argument, a return or an annotated assignment) names a "
        "type and places nothing.",
        (
            _PL + "test_a_type_annotation_naming_a_cuda_type_places_nothing",
            _PL + "test_annotations_leave_the_continuous_batching_item_shape",
        ),
    ),
    FalsePositiveClass(
        "cuda-no-op",
        "no-op-elsewhere",
        "`torch.cuda` calls that do nothing where no CUDA device is initialised (`empty_cache`, `manual_seed[_all]`, "
        "`seed[_all]`; checked on the CPU-only torch); `synchronize`, `mem_get_info` and the memory statistics stay.",
        (_PL + "test_a_cuda_call_that_does_nothing_without_cuda_is_not_porting_work",),
    ),
    FalsePositiveClass(
        "lone-tuning-branch",
        "backend-branch",
        "A lone branch on the type of a device the code already holds, with no `else` and a body that falls through "
        '(`if comm_device.type == "cuda": torch.cuda.synchronize()`), only tunes that backend, unless it places work '
        "anew (`set_device(0)`).",
        (_PL + "test_a_lone_branch_on_a_given_devices_type_only_tunes_that_backend",),
    ),
    FalsePositiveClass(
        "lone-returning-branch-stays",
        "no finding",
        "(Near miss kept:) a lone device-type branch whose body returns or yields is a CUDA-only alternative and "
        "stays a finding.",
        (_PL + "test_a_lone_device_type_branch_that_returns_is_an_alternative_and_stays",),
    ),
    FalsePositiveClass(
        "cuda-query-under-probe",
        "probe",
        "The body of an `if` that tests for CUDA alone (`torch.cuda.is_available()`, `is_torch_cuda_available()`, "
        "also as an `and` operand, or `torch.cuda.device_count() > 0`) when it only reads device facts "
        "(`get_device_capability`, `get_device_name`/`_properties`, `is_bf16_supported`) and raises nothing; a body "
        "that raises or places work stays.",
        (
            _PL + "test_a_cuda_query_under_its_own_cuda_probe_with_a_fallback_is_part_of_the_probe",
            _PL + "test_cuda_queries_under_their_probe_make_no_item_beside_a_requirement",
        ),
    ),
    FalsePositiveClass(
        "cuda-query-cached-flag",
        "probe",
        "The CUDA-query-under-probe rule also reads a local flag every assignment of which is a CUDA probe or a "
        "constant placeholder, and a body whose raise is an `ImportError` (an optional package refused on an old "
        "GPU: that package's item); any other raise stays a requirement.",
        (_PL + "test_a_cuda_fact_behind_a_cached_probe_flag_or_worded_into_an_import_error_is_part_of_the_probe",),
    ),
    FalsePositiveClass(
        "target-arm-chain",
        "backend-branch",
        "An `if`/`elif` chain with an arm for the target's own device (`elif is_torch_neuron_available(): device = "
        'torch.device("neuron:0")`, or XLA\'s, not raising) already supports the port: its arms probing other '
        "backends and its final `else` are `backend-branch`.",
        (_PL + "test_a_chain_with_an_arm_for_the_targets_device_leaves_the_other_arms_and_the_else_to_their_backends",),
    ),
    FalsePositiveClass(
        "version-json-key",
        "no finding",
        '`"cuda"` as the key of a `.get(...)` lookup (a parsed version.json) is no device.',
        (_PL + "test_a_cuda_key_looked_up_in_parsed_data_is_not_a_device",),
    ),
    FalsePositiveClass(
        "overridden-default",
        "overridden-default",
        'A device default (`def f(..., device="cuda:0")`) that every call in the repository overrides by keyword '
        "(read across files); a default some call relies on, or passed positionally or through `**kwargs`, stays.",
        (_PL + "test_a_device_default_every_call_overrides_is_not_porting_work",),
    ),
    FalsePositiveClass(
        "given-cuda-object",
        "backend-branch",
        "`torch.cuda.stream(s) if s is not None else nullcontext()` enters a CUDA object made elsewhere (its creation "
        "stays a finding).",
        (_PL + "test_a_cuda_call_on_a_given_object_with_a_no_op_fallback_is_that_backends_branch",),
    ),
    FalsePositiveClass(
        "cuda-object-for-held-device",
        "backend-branch",
        '`torch.cuda.Stream(device=d) if d.type == "cuda" else None` makes a backend\'s object only for a held '
        'device of that type (a body placing work anew, `"cuda:0"`, or a fallback other than `None` stays).',
        (_FP13 + "test_a_cuda_object_made_only_for_a_held_cuda_device_with_none_elsewhere_is_that_backends_branch",),
    ),
    FalsePositiveClass(
        "target-row-table",
        "no finding",
        'A dict keyed by device names that already has a row for the target (`"neuron": "neuron"` beside `"cuda": '
        '"nccl"`) names its backends and uses none; `backend == "nccl"` is a branch on the backend in use, and a list '
        'naming two or more collective backends a vocabulary; `init_process_group(backend="nccl")` stays.',
        (_FP + "test_a_device_backend_table_with_a_row_for_the_target_is_not_an_nccl_choice",),
    ),
    FalsePositiveClass(
        "class-requires-other-accelerator",
        "backend-branch",
        "A class one of whose methods raises unless another accelerator is present (`if not "
        "torch.backends.mps.is_available(): ... raise`) is that backend's code path; a class requiring CUDA stays.",
        (_FP + "test_a_class_that_requires_another_accelerator_is_that_backends_code_path",),
    ),
    FalsePositiveClass(
        "no-fallback-kernel",
        "blocking",
        "A hub kernel bound to a module global that the file answers, when None, with a placeholder (`if k is None: "
        "return torch.zeros_like(q)`) has no fallback: `no-fallback`, and the item blocks.",
        (_FP + "test_a_hub_kernel_whose_absence_returns_zeros_has_no_fallback_and_blocks",),
    ),
    FalsePositiveClass(
        "varlen-count-only",
        "no finding",
        "A def that reads its `cu_seqlens` parameter only for the segment count (`.shape[0]`, `len`, `.size()`) or in "
        "a check (`torch._check`, `assert`) packs nothing; a def that writes named entries into a mapping its caller "
        "gave it (export input preparation) has its varlen lines `host-side`.",
        (_FP12 + "test_offsets_read_only_for_their_count_or_a_check_and_inputs_prepared_for_a_call_are_not_packing",),
    ),
    FalsePositiveClass(
        "foreign-kernel-binding",
        "backend-branch",
        "A module-level def that calls, on every path, a name the module imports only under another accelerator's "
        "probe (`if is_torch_npu_available(): from torch_npu import npu_fusion_attention`); a kernel imported under a "
        "CUDA or flash-attn probe, or called on one branch only, stays.",
        (_FP12 + "test_a_def_that_needs_a_kernel_imported_only_for_another_accelerator_is_that_backends_binding",),
    ),
    FalsePositiveClass(
        "leaving-branches-dispatch",
        "backend-branch",
        "Consecutive lone branches on a device's type whose bodies leave, naming two or more backends, with a "
        "fall-through that raises nothing; one such branch alone, or a run whose fall-through raises, stays.",
        (_FP12 + "test_consecutive_leaving_branches_on_two_device_types_with_a_generic_fall_through_are_a_dispatch",),
    ),
    FalsePositiveClass(
        "query-refines-answer",
        "backend-branch",
        "One lone leaving branch on a device's type whose body uses only device queries of its backend (`if "
        'w.device.type == "cuda": return torch.cuda.get_device_capability(w.device) >= (8, 0)`) before statements '
        "that raise nothing refines a generic answer.",
        (_FP14 + "test_a_lone_device_type_branch_that_only_queries_its_device_before_a_generic_answer_is_a_dispatch",),
    ),
    FalsePositiveClass(
        "try-probe",
        "probe",
        "A `try: return torch.cuda.is_<x>()` whose every handler catches broadly and returns a constant (the bare "
        'call stays); `getattr(torch.version, "cuda")` reads a version, no device.',
        (_FP14 + "test_a_cuda_question_whose_failure_answers_no_and_a_torch_version_read_are_probes",),
    ),
    FalsePositiveClass(
        "nccl-library-defaults",
        "no-op-elsewhere",
        "An `NCCL_*` variable a method only reads from `os.environ`, sets with `setdefault` and names in log messages; "
        "an assignment, a plain function's `setdefault` and launch scripts' `export` stay.",
        (_FP14 + "test_an_nccl_variable_a_library_method_only_reads_or_defaults_is_a_no_op_elsewhere",),
    ),
    FalsePositiveClass(
        "delay-pattern",
        "host-side",
        "Codebook delay-pattern bookkeeping in the generate machinery (`generate`, `prepare_inputs_for_generation` "
        "and defs reached only from them); an eos cut on generated values and pattern reads in a forward stay.",
        (_FP + "test_delay_pattern_bookkeeping_of_generate_is_host_side",),
    ),
    FalsePositiveClass(
        "matcher-indices",
        "host-side",
        "A hazard in a helper whose parameters get, at every call of the file, only `self.matcher(...)` results (a "
        "Hungarian matcher's CPU indices) and which reads only values derived from them; one that also reads model "
        "outputs stays.",
        (_FP + "test_a_hazard_on_a_matchers_cpu_indices_alone_is_host_side",),
    ),
    FalsePositiveClass(
        "kernel-wrapper-joins",
        "joins an item",
        "Placement and varlen lines in module-level defs of a hub kernel's wrapper that reach the def loading the "
        "kernel (or whose every caller does, or that a decorator of one registers) join the kernel's item.",
        (
            _FP + "test_a_hub_kernels_wrapper_lines_join_the_kernels_item",
            _FP + "test_placement_in_a_class_that_requires_a_hub_kernel_joins_the_kernels_item",
        ),
    ),
    FalsePositiveClass(
        "package-class-joins",
        "joins an item",
        "A CUDA device default in a class that raises `ImportError` unless a package is present and holds that "
        "package's line joins the package's item (a class that only imports it stays).",
        (
            _FP + "test_placement_in_a_class_that_requires_a_package_joins_that_packages_item",
            _FP + "test_a_packages_wrapper_helpers_join_the_packages_item",
        ),
    ),
    FalsePositiveClass(
        "cuda-graph-contexts",
        "joins an item",
        "In a file that captures a CUDA graph, the context managers of a `with` in the capturing def and of a `with` "
        "whose body only replays join `repo|cuda-graphs`; other placement stays.",
        (_FP13 + "test_a_cuda_graphs_capture_and_replay_contexts_join_the_cuda_graphs_item",),
    ),
    FalsePositiveClass(
        "finished-decode-helpers",
        "host-side",
        "A shape hazard in a helper called, in a def that decodes (`super().generate(...)`), only with arguments "
        "read from the decode's result, calling no model (Whisper's segmenting and DTW timestamps); per-step "
        "helpers of a decode loop stay.",
        (_FP13 + "test_shape_hazards_of_helpers_on_a_finished_decodes_result_are_host_side",),
    ),
    FalsePositiveClass(
        "compile-mode",
        "joins an item",
        'torch.compile\'s `mode="reduce-overhead"`/`"max-autotune"` joins `repo|compile-backend` (backend and mode '
        "are one edit); hand-written capture (`torch.cuda.CUDAGraph()`) stays `repo|cuda-graphs`.",
        (_IT + "test_a_compile_mode_joins_the_compile_backend_item_and_graph_capture_stays_its_own",),
    ),
    FalsePositiveClass(
        "mask-feeds-varlen",
        "joins an item",
        "A boolean-mask selection whose result goes to a submodule (a class of this file) whose forward packs varlen "
        "sequences unpads that module's input: it joins the file's varlen item; the same selection passed to a "
        "submodule without packing keeps its own item.",
        (_FP + "test_a_mask_selection_passed_to_a_varlen_module_joins_the_varlen_item",),
    ),
    FalsePositiveClass(
        "impl-selector",
        "no finding",
        '`impl="cuda"` (a parameter default, a keyword, or an attribute named `impl`, `*_impl`, `implementation`) '
        "selects a code path of the library, not a device; the same string as `device=` stays.",
        (_I27 + "test_an_implementation_selector_naming_cuda_is_not_a_device",),
    ),
    FalsePositiveClass(
        "job-setting-in-message",
        "no finding",
        "A GPU request (`--gres=gpu:1`, `GPUS_PER_NODE`, `--nproc_per_node`) worded in a `raise`, a log call or a "
        "`print` of a `.py` file asks a person and sets nothing; passed to `sbatch` by `subprocess` it stays.",
        (_I27 + "test_slurm_and_launcher_settings_in_error_and_log_messages_set_nothing",),
    ),
    FalsePositiveClass(
        "fixed-step-offsets",
        "no finding",
        "`cu_seqlens` whose every assignment in its def is a `torch.arange` with a step (`torch.arange(0, (b + 1) * "
        "s, step=s)`) is equal segments, a batch in packed form; offsets from a cumulative sum of lengths, or given "
        "by the caller, stay.",
        (_I27 + "test_cu_seqlens_from_a_fixed_step_arange_is_not_variable_length_packing",),
    ),
    FalsePositiveClass(
        "host-setup",
        "host-setup",
        "float64 in `__init__`/`reset_parameters` whose value is converted before it is kept (in the statement, or "
        "through a local every read of which is converted: Mamba's `A_log`); a float64 buffer, a float64 local "
        "stored as it is, and float64 in the forward stay.",
        (_I27 + "test_float64_only_while_building_the_module_and_converted_is_host_setup",),
    ),
    FalsePositiveClass(
        "main-block",
        "main-block",
        'The `if __name__ == "__main__":` block of a module is a demo run by hand, listed apart; in an entry script '
        "(`train*.py`, `run*.py`, `main.py`, `scripts/`, ...) it is the run and stays.",
        (_I27 + "test_cuda_in_a_modules_main_block_is_a_demo_and_in_an_entry_script_stays",),
    ),
)

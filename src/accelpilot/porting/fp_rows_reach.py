"""False-positive classes of reach and units of work (issue 27), appended to ``fp_rows.CLASSES``: the table the
README's list is generated from (``fp_classes.py``)."""

from __future__ import annotations

from accelpilot.porting.fp_rows import CLASSES as _EARLIER
from accelpilot.porting.fp_rows import FalsePositiveClass

_RE = "tests/porting/scan/test_fp_classes_reach.py::"
_FA = "tests/porting/scan/test_families.py::"
_IT = "tests/porting/test_items.py::"
_HF = "tests/porting/scan/test_fp_classes_hub.py::"
_R11 = "tests/porting/scan/test_fp_classes_round11.py::"
_R13 = "tests/porting/scan/test_fp_classes_round13.py::"
_R15 = "tests/porting/scan/test_fp_classes_round15.py::"
_R16 = "tests/porting/scan/test_fp_classes_round16.py::"
_ST = "tests/porting/scan/test_settings.py::"

CLASSES: tuple[FalsePositiveClass, ...] = (
    *_EARLIER,
    FalsePositiveClass(
        "ci-workflow",
        "ci",
        "A CUDA pin or GPU setting in a CI workflow (`.github/workflows/`, `.gitlab-ci.yml`, `.circleci/`) builds on "
        "the CI's runners: listed apart; the same pin in requirements.txt stays.",
        (_RE + "test_cuda_pins_in_ci_workflows_are_listed_apart",),
    ),
    FalsePositiveClass(
        "install-or-data-prep-download",
        "install-time",
        "A download in `setup.py` runs at install (`install-time`); one in a data preparation script (`data/`, "
        "`prepare*.py`, `download_data*.py`) runs once on any host (`data-prep`); one in the model's code stays.",
        (_RE + "test_downloads_at_install_or_data_preparation_are_not_porting_work",),
    ),
    FalsePositiveClass(
        "optional-extra",
        "warning",
        "A package in `[project.optional-dependencies]` (Poetry extras and groups, setup.cfg extras, Pipfile "
        "dev-packages) installs only when asked for; a hard dependency that no code path imports unguarded is a "
        "warning that says so; one the code imports at module level with no guard stays blocking.",
        (_RE + "test_optional_extras_and_declared_only_dependencies_do_not_block",),
    ),
    FalsePositiveClass(
        "varlen-optional-parameter",
        "no finding",
        "`cu_seqlens=None` only tested against `None`, counted, or handed on to a call: packing is opt-in and built "
        "by the caller; a required `cu_seqlens` handed on, or an optional one whose values are read, stays.",
        (_RE + "test_cu_seqlens_an_optional_parameter_hands_on_is_not_packing",),
    ),
    FalsePositiveClass(
        "tf32-switch",
        "no-op-elsewhere",
        "cuDNN/TF32 switches (`torch.backends.cudnn.allow_tf32`, `fp32_precision`) run and change nothing off NVIDIA "
        "GPUs; another backend switch stays an item.",
        (_IT + "test_tf32_switches_of_every_backend_do_nothing_on_the_target",),
    ),
    FalsePositiveClass(
        "own-package",
        "no finding",
        "An import of the repository's own package (`pkg/__init__.py` at the root or under `src/`) is never an "
        "external CUDA library dependency, whatever list names it; another package stays.",
        (_FA + "test_the_repositorys_own_package_is_not_a_cuda_library",),
    ),
    FalsePositiveClass(
        "kernel-family",
        "joins an item",
        "Kernel files are one item per op family, read from imports: roots the same outside files import across "
        "kernel-language folders of one name, with the helpers, backward files and wrapper lines they use; "
        "independent ops of one flat folder stay apart. The tree's dependency on a kernel language joins its "
        "kernels' item.",
        (
            _FA + "test_kernel_files_group_by_the_op_they_serve",
            _FA + "test_a_wrapper_in_a_kernel_folder_joins_the_family",
            _FA + "test_headers_beside_an_extensions_sources_are_that_extension",
            _IT + "test_items_group_kernels_dependencies_images_and_settings",
        ),
    ),
    FalsePositiveClass(
        "hub-download",
        "any-host-download",
        "A run-time download from the Hugging Face Hub, torch.hub or a URL (`from_pretrained`, `load_dataset`, "
        "`hf_hub_download`, `requests.get`, `urlopen` of weights) is the same on any accelerator: an environment "
        "note listed apart, not porting work; a download in `setup.py` stays `install-time`, one in a data "
        "preparation script `data-prep`.",
        (
            _HF + "test_hub_downloads_are_an_environment_note_not_porting_work",
            "tests/porting/scan/test_fp_classes_reach.py::test_downloads_at_install_or_data_preparation_are_not_porting_work",
        ),
    ),
    FalsePositiveClass(
        "gpu-count-branch",
        "warning",
        "`torch.cuda.device_count() > 1` (or `>= N`) deciding a branch returns 0 without CUDA, so the branch is "
        "skipped: a warning that says so, never blocking on an entry point; a `torch.cuda` call that needs CUDA "
        "there stays blocking.",
        (_HF + "test_a_gpu_count_branch_is_skipped_without_cuda_not_a_stop",),
    ),
    FalsePositiveClass(
        "host-data-dependent-op",
        "no finding",
        "`nonzero()` on a name last bound to a numpy call (`d = np.array(...)`), and `nonzero()`/`torch.where(c)` on "
        "a tensor built on the CPU (`torch.tensor(list)` with no `device=`, through comparisons, indexing and "
        "`&`) run on host data: not device hazards; the same ops on a tensor given a device, or moved with "
        "`.to(device)`, stay.",
        ("tests/porting/scan/test_fp_classes_host_data.py::test_data_dependent_ops_on_host_data_are_not_findings",),
    ),
    FalsePositiveClass(
        "broad-except-import",
        "warning",
        "`try: import apex` under a bare `except:` or `except Exception:` (a body of imports and constant flags) is "
        "an optional import, as under `except ImportError`; a body that also calls the package stays.",
        ("tests/porting/scan/test_fp_classes_host_data.py::test_an_import_under_a_broad_handler_is_optional",),
    ),
    FalsePositiveClass(
        "unreached-module",
        "unreached-module",
        "In a repository that is not an installable package, a module inside a folder that no file imports, that no "
        "source names by its dotted name or path (a class loaded by name), that no command runs and that has no "
        "`__main__` block runs on no path: listed apart; a module of a package stays (its users import it).",
        ("tests/porting/scan/test_dead_code.py::test_a_module_nothing_runs_is_listed_apart",),
    ),
    FalsePositiveClass(
        "linter-section-names",
        "no finding",
        "Package names in a linter's section of setup.cfg/pyproject.toml (`[isort] known_third_party=torchvision`, "
        "`[tool.ruff]`, `[mypy-*]`) install nothing; the same name under `install_requires` stays.",
        ("tests/porting/scan/test_fp_classes_round5.py::test_package_names_in_a_linters_section_are_no_dependency",),
    ),
    FalsePositiveClass(
        "plots-and-loggers",
        "host-side",
        "Compile hazards in plotting and logger code (`plots.py`, `plotting.py`, `loggers/`) run on the host around "
        "the model, not in its graph; the same line in `metrics.py` stays.",
        ("tests/porting/scan/test_fp_classes_round5.py::test_plotting_and_logger_code_is_host_side",),
    ),
    FalsePositiveClass(
        "mps-branch",
        "no finding",
        "An Apple MPS branch is a GPU-target item only: a Neuron port adds its own branch beside it.",
        ("tests/porting/scan/test_fp_classes_round5.py::test_an_mps_branch_is_no_trainium_work",),
    ),
    FalsePositiveClass(
        "notebooks",
        "example",
        "A notebook (`*.ipynb`, `notebooks/`) and a module written for one (`notebook_helpers.py`) are demos run by "
        "hand: listed apart; the same line in the model's module stays.",
        ("tests/porting/scan/test_fp_classes_round7.py::test_notebooks_and_their_helper_modules_are_demo_code",),
    ),
    FalsePositiveClass(
        "ci-workflow-yaml",
        "ci",
        "A workflow YAML directly under `.github/` (lit-llama's `azure-gpu-tests.yml`) or `azure-pipelines.yml` runs "
        "on the CI's runners: listed apart; the same image in the Dockerfile stays.",
        ("tests/porting/scan/test_fp_classes_round7.py::test_a_workflow_yaml_under_github_is_ci",),
    ),
    FalsePositiveClass(
        "unet-skip-concat",
        "no finding",
        "A U-Net's skip concatenation (`torch.cat([x, skips.pop()])`) in a loop over a ModuleDict's `.items()` has one "
        "shape per block, a count the module fixes: no growing sequence; a decode loop over `range(n)` stays.",
        (
            "tests/porting/scan/test_fp_classes_round9.py::"
            "test_a_skip_concatenation_over_a_module_dict_is_no_growing_sequence",
        ),
    ),
    FalsePositiveClass(
        "is-cuda-guard",
        "warning",
        "A body of only `torch.cuda.*` calls under `if x.is_cuda:` (DLRM's `if Z_test.is_cuda: "
        "torch.cuda.synchronize()`) runs only when the tensor is on a CUDA device and skips nothing the model "
        "computes: an optional path; under `if not x.is_cuda:` it stays, and a kernel launched under `is_cuda` "
        "stays blocking (skipping it loses work).",
        (_R11 + "test_a_cuda_call_under_a_tensors_is_cuda_is_a_guarded_path",),
    ),
    FalsePositiveClass(
        "data-provider-host-side",
        "host-side",
        "A data provider or data loader module (`data_provider/`, `data_loader.py`, `data_loaders.py`) builds the "
        "datasets on the host (Time-Series-Library's pandas `all_df.index.unique()`): its compile hazards are not the "
        "model graph's, as in `datasets/` or `dataloader.py`; the same line in the model's modules stays.",
        (_R11 + "test_a_data_provider_and_a_data_loader_module_are_host_side",),
    ),
    FalsePositiveClass(
        "launcher-env-branch",
        "warning",
        "An entry point's NCCL setup under `if ddp:` with `ddp = int(os.environ.get('RANK', -1)) != -1` (llama2.c, "
        "nanoGPT) runs only when torchrun (or another launcher) sets RANK: when the README starts the script as one "
        "process, the lines block when it is launched so; a README that also runs it under torchrun keeps them "
        "blocking. `device_type = 'cuda' if 'cuda' in device else 'cpu'` follows the device and places nothing.",
        (_R11 + "test_a_ddp_branch_keyed_on_the_launchers_rank_blocks_only_under_a_launcher",),
    ),
    FalsePositiveClass(
        "device-type-cuda-arm",
        "warning",
        'The CUDA arm of a two-way `if device.type == "cuda": ... else: ...` choice (k-diffusion\'s CUDA-event step '
        "timing, `time.time()` in the else) runs only on CUDA: an optional path; the same test with no else over a "
        "body that places work stays on the main path.",
        (_R13 + "test_the_cuda_arm_of_a_device_type_choice_is_a_guarded_path",),
    ),
    FalsePositiveClass(
        "natten-kernels",
        "warning",
        "NATTEN (`import natten`, k-diffusion's neighborhood attention) and MinkowskiEngine (ConvNeXt-V2's sparse "
        "encoder) are CUDA kernel libraries: a "
        "`cuda-kernel-library` item, optional where it sits behind an availability check or an ImportError fallback.",
        (_R13 + "test_natten_is_a_cuda_kernel_library", _R13 + "test_minkowski_engine_is_a_cuda_kernel_library"),
    ),
    FalsePositiveClass(
        "config-dict-in-checkpoint",
        "no finding",
        "A `config` saved beside the weights is a dict when a loader function or `yaml.load` made it (k-diffusion's "
        "`K.config.load_config`, BLIP's YAML): the checkpoint loads under `weights_only=True`; a yacs `CfgNode` "
        "(`get_config`), an OmegaConf config or an argparse Namespace stays an object.",
        (
            "tests/porting/scan/test_checkpoints.py::test_plain_data_beside_the_weights_and_explicit_weights_only_are_no_item",
        ),
    ),
    FalsePositiveClass(
        "probed-name-fallback",
        "warning",
        '`"cuda" if use_cuda else "cpu"` where the entry point binds `use_cuda = torch.cuda.is_available()` '
        "(Wav2Lip) falls back to the CPU like the inline probe: a performance item; a name bound from a CLI flag "
        "stays blocking.",
        (_R15 + "test_a_cuda_or_cpu_choice_through_a_probed_name_falls_back",),
    ),
    FalsePositiveClass(
        "other-library-stft",
        "no finding",
        "`.stft(...)` called on an object a call built (`_lws_processor(hp).stft(y)`, the lws library) is not "
        "torch's STFT: no stack-upgrade site; `torch.stft` without `return_complex` stays.",
        (_R15 + "test_another_librarys_stft_on_a_built_object_is_no_torch_site",),
    ),
    FalsePositiveClass(
        "device-name-as-text",
        "no finding",
        'A device name passed to a string method (`str(device).replace("cuda:", "")`, YOLOv5\'s select_device) is '
        'text being edited, not a device; a template of one (`"cuda:{:d}".format(rank)`, HiFi-GAN) is a device.',
        (_R16 + "test_a_templated_device_string_is_a_device_and_text_editing_is_not",),
    ),
    FalsePositiveClass(
        "library-name-compared",
        "no finding",
        'A library\'s name compared as text (`logger.name.startswith(("torch", "triton"))`, open_clip) is no load of '
        'it; `importlib.import_module("triton")` stays.',
        (_R16 + "test_a_library_name_compared_in_startswith_is_no_load",),
    ),
    FalsePositiveClass(
        "docs-example-scripts",
        "example",
        "A script under `docs/` (open_clip's `docs/script_examples/`) illustrates the documentation: its lines are "
        "example lines, listed apart; the same script under `scripts/` stays.",
        (_R16 + "test_a_script_under_docs_is_an_example",),
    ),
    FalsePositiveClass(
        "setting-off-by-default",
        "warning",
        "A kernel built or called only under a setting the default path leaves false (GPT-NeoX's "
        "`if neox_args.rope_fusion:`, a dataclass field `rope_fusion: bool = False` that the README command's "
        "`125M.yml` keeps false) blocks only when the setting is on, and says so with the configs it read; a default "
        "config that turns it on keeps it blocking, and so does a command that names no config while a shipped one "
        "sets it.",
        (
            _ST + "test_a_kernel_built_only_when_a_setting_is_on_blocks_only_when_it_is",
            _ST + "test_the_same_kernel_blocks_when_the_default_config_turns_the_setting_on",
            _ST + "test_without_a_default_command_a_setting_some_shipped_config_sets_is_unknown",
        ),
    ),
    FalsePositiveClass(
        "module-under-setting",
        "warning",
        "A module imported only inside `if self.num_experts > 1:` (GPT-NeoX's `moe.py`, and with it megablocks), "
        "with the count 1 by default, loads only when the setting is changed: what it imports blocks then.",
        (
            _ST + "test_a_module_imported_only_under_a_setting_is_optional",
            _ST + "test_the_module_blocks_when_the_default_config_asks_for_experts",
        ),
    ),
    FalsePositiveClass(
        "kernel-probe-fallback",
        "warning",
        "An autograd Function's kernel reached through `Cls.apply` only where the repository's own probe says yes "
        "(`if self.is_kernel_available(...)` / `else: return self.forward_torch_softmax(...)`) has a PyTorch path: a "
        "performance item naming it; decoding state in a dataclass (`inference_params.seqlen_offset`) is no setting.",
        (
            _ST + "test_an_autograd_function_behind_a_kernel_probe_with_a_torch_path_is_a_performance_item",
            _ST + "test_decoding_state_in_a_params_dataclass_is_no_setting",
        ),
    ),
)

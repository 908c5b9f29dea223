"""False-positive classes of guards the scanner learned to read in rounds 24-36 (issue 27), appended to the table the
README's list is generated from (``fp_classes.py``)."""

from __future__ import annotations

from accelpilot.porting.fp_rows import FalsePositiveClass
from accelpilot.porting.fp_rows_vision import CLASSES as _EARLIER

_R24 = "tests/porting/scan/test_round24.py::"
_R25 = "tests/porting/scan/test_round25.py::"
_SU = "tests/porting/scan/test_stack_upgrade.py::"
_R26 = "tests/porting/scan/test_round26.py::"
_R33 = "tests/porting/scan/test_round33.py::"
_R34 = "tests/porting/scan/test_round34.py::"
_R35 = "tests/porting/scan/test_round35.py::"
_R36 = "tests/porting/scan/test_round36.py::"
_R37 = "tests/porting/scan/test_round37.py::"
_R39 = "tests/porting/scan/test_round39.py::"
_R41 = "tests/porting/scan/test_round41.py::"
_GR = "tests/porting/scan/test_guarded_reach.py::"

CLASSES: tuple[FalsePositiveClass, ...] = (
    *_EARLIER,
    FalsePositiveClass(
        "host-cpp-load",
        "no finding",
        "A JIT `load()` whose sources are all C++ files (ColBERT's `segmented_maxsim.cpp`, built on the host when no "
        "GPU is visible) builds a host extension: no CUDA extension item. A CUDA build behind `if ... or not "
        "use_gpu: return`, a GPU flag its caller passes, is a warning; the same build without that return blocks.",
        (_R24 + "test_a_host_cpp_load_is_no_cuda_extension_and_a_gpu_flag_return_guards_the_cuda_build",),
    ),
    FalsePositiveClass(
        "extension-imported-behind-fallback",
        "warning",
        "A CUDA extension that the code imports only under an `except` (GPTQ's `try: import quant_cuda`) and that "
        "its own build script builds (`setup_cuda.py`) does not stop the default path; built by the package's own "
        "`setup.py`, which installing the package runs, it stays blocking.",
        (_R24 + "test_an_extension_the_code_imports_behind_a_fallback_does_not_block_unless_the_package_builds_it",),
    ),
    FalsePositiveClass(
        "unused-helper-or-resume",
        "warning",
        "A `torch.cuda.Event` in a top-level class no source names again (DreamerV3's `TimeRecording`), and a "
        "`torch.load` under `if <path>.exists()` of a path the file saves to (a resume of the run's own checkpoint), "
        "do not block; the helper once used, or a load of another path, does.",
        (_R24 + "test_an_unused_event_helper_and_a_resume_of_the_runs_own_checkpoint_do_not_block",),
    ),
    FalsePositiveClass(
        "attribute-flag-probe",
        "warning",
        "`torch.device('cuda' if args.cuda else 'cpu')` where the file binds `args.cuda = ... "
        "torch.cuda.is_available()`, and DataParallel under `torch.cuda.device_count() > 1`, fall back off CUDA "
        "(the EGNN scripts); a flag the file does not bind to the probe stays blocking.",
        (_R25 + "test_a_device_chosen_by_an_attribute_flag_bound_to_the_probe_falls_back",),
    ),
    FalsePositiveClass(
        "feature-tested-removal",
        "no finding",
        "A removed numpy name under a feature test (`np.trapezoid if hasattr(np, 'trapezoid') else np.trapz`) "
        "is no stack-upgrade site; the same name outside the test is.",
        (_SU + "test_numpy2_names_timm_modules_and_torchtext_are_sites_and_a_feature_test_is_not",),
    ),
    FalsePositiveClass(
        "unused-nested-def",
        "unused-def",
        "A def nested in another def that nothing there names (DeepSDF's `empirical_stat` in `main`: not called, "
        "returned or passed on) never runs; the same def once the outer one calls it is scanned as usual.",
        (_R26 + "test_a_def_nested_in_a_def_that_nothing_names_runs_on_no_path",),
    ),
    FalsePositiveClass(
        "removed-package",
        "no finding",
        "A package a removal command takes out (OpenRLHF's Dockerfile: `RUN pip uninstall xgboost transformer_engine "
        "flash_attn -y`; `conda remove`, `apt-get purge`) is no dependency; the same name installed after `&&` on "
        "that line, or on a `pip install` line, stays one.",
        (_R33 + "test_a_package_a_removal_command_takes_out_is_no_dependency",),
    ),
    FalsePositiveClass(
        "copied-distribution",
        "warning",
        "A top-level folder holding another project's whole distribution, its own `setup.py` or `pyproject.toml` "
        "beside a package of the folder's name (Jukebox's `apex/` and `tensorboardX/`), is a vendored copy: its "
        "CUDA extensions, device calls and tests are one warning item (1-5 days), and its tests are no oracle of "
        "the repository's; a sub-project whose package has another name (`metric_depth/depth_anything_v2/`) stays "
        "the repository's code.",
        (_R34 + "test_a_distribution_copied_into_the_tree_is_one_vendored_item_and_no_oracle",),
    ),
    FalsePositiveClass(
        "probe-in-main-block",
        "warning",
        "The body of a CUDA probe inside an entry script's `__main__` block (SadTalker's `if "
        'torch.cuda.is_available() and not args.cpu: args.device = "cuda"`, OLMo\'s NCCL group beside its gloo '
        "else) keeps its guard, as outside the block: a warning; an unguarded CUDA call there still blocks.",
        (_R35 + "test_a_cuda_probes_body_in_an_entry_scripts_main_block_keeps_its_guard",),
    ),
    FalsePositiveClass(
        "unbuilt-extension",
        "unreached-module",
        "A CUDA source built only by a `setup.py` in a folder nothing runs (Person_reID's "
        "`GPU-Re-Ranking/extension/*/setup.py`, run by that folder's `make.sh`, its importer imported only by an "
        "unrun script) and whose folder the README never names is listed apart with its builder; a build folder the "
        "README names (RAFT's `cd alt_cuda_corr && python setup.py install`) is an install step and stays an item.",
        (
            _R36 + "test_a_cuda_source_built_only_by_an_unnamed_folders_setup_is_on_no_path",
            _R36 + "test_a_build_folder_the_readme_installs_keeps_its_kernel",
        ),
    ),
    FalsePositiveClass(
        "numpy-mask",
        "no finding",
        "An index whose every boolean mask is bound to a numpy call (Person_reID's `mask = np.in1d(index, "
        "junk_index, invert=True)` then `index[mask]`, `index` a parameter of the host-side `compute_mAP`) selects "
        "host data: no boolean-mask item; a mask a torch comparison makes in the same def still is one.",
        (_R36 + "test_a_mask_bound_to_a_numpy_call_indexes_host_data",),
    ),
    FalsePositiveClass(
        "unused-helper",
        "unused-helper",
        "A call a current library no longer answers (`librosa.output.write_wav`, a two-field `pack_padded_sequence` "
        "unpack, a removed Hugging Face keyword) in a top-level function or class that no Python source of a scripts "
        "repository names (Wav2Lip's and SadTalker's `save_wavenet_wav`) never runs: listed apart; in an entry "
        "point's file (a README example calls it) or in a package (its users' API) it stays.",
        (_R37 + "test_librosa_output_in_a_used_helper_is_an_item_and_in_an_unnamed_one_never_runs",),
    ),
    FalsePositiveClass(
        "indexed-or-split-device-choice",
        "warning",
        "A device choice whose CUDA arm is built with an index (federated-learning's `torch.device('cuda:{}'.format("
        "args.gpu) if torch.cuda.is_available() and args.gpu != -1 else 'cpu')`, `f'cuda:{i}'`) or whose "
        "`torch.cuda.is_available()` test sits on a later line than the string (pytorch-maml's `'cuda' if "
        "args.use_cuda` then `and torch.cuda.is_available() else 'cpu'`) falls back to the CPU: a performance item; "
        "the same string with no availability test blocks.",
        (_GR + "test_cpu_fallbacks_with_the_device_built_in_the_arm_do_not_block",),
    ),
    FalsePositiveClass(
        "demo-beside-training",
        "warning",
        "Where a README trains, the demo, test, evaluation, export and timing scripts it also runs (Ultra-Fast-Lane-"
        "Detection's `demo.py`, `test.py`, `speed_simple.py`) are no entry points: their CUDA lines block when that "
        "script is run; with no training command the demo is the default path and blocks.",
        (_R39 + "test_demo_and_speed_scripts_beside_a_training_command_do_not_block",),
    ),
    FalsePositiveClass(
        "removed-api-in-version-arm",
        "no finding",
        "A removed API in the arm a version test keeps for old releases (EasyOCR's `models.vgg.model_urls` in the "
        "`else` of `if version.parse(torchvision.__version__) >= version.parse('0.13')`) never runs on a current "
        "stack: the code already picks what exists, as for the other `stack-upgrade` sites under a feature test.",
        (_R41 + "test_a_removed_api_in_the_arm_a_version_test_keeps_for_old_releases_is_no_site",),
    ),
    FalsePositiveClass(
        "dataparallel-under-a-device-test",
        "warning",
        "An `nn.DataParallel` wrapper under a test that chooses devices (Person_reID's `if len(opt.gpu_ids) > 1`, "
        "pytorch-cifar's `if device == 'cuda'`, DARTS's `else` of `if args.single_gpu`) is a multi-device choice the "
        "default run does not make: a warning; one built outside such a test blocks.",
        (_R41 + "test_dataparallel_built_unconditionally_by_an_entry_point_blocks",),
    ),
)

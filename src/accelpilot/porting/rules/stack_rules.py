"""Rules on the software stack a repository was written for (issue 27: held-out public repositories).

TorchNeuron native needs a current torch 2.x (and the numpy that goes with it); code written for torch 1.x uses
APIs removed since. The sites and when they block are read in ``scan/stack_upgrade.py``."""

from __future__ import annotations

from accelpilot.porting.rules.schema import NEURON, Rule

STACK_RULES: tuple[Rule, ...] = (
    Rule(
        id="stack-upgrade",
        category="container",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="stack upgrade: APIs removed since the code was written",
        why="The code uses APIs a current stack no longer has: `torch._six` (removed in torch 2.0), numpy's aliases "
        "of builtins `np.float`, `np.int`, `np.object`, `np.str`, `np.complex`, `np.unicode` (removed in numpy 1.24; "
        "`np.bool` came back in numpy 2.0), modules numpy 2.0 made private (`numpy.lib.arraypad`, "
        "`numpy.lib.function_base`, ...), `torch._utils._accumulate` and `scipy.misc.imread`/`imresize` (gone from "
        "torch 2.13 and scipy 1.17), torchaudio's `load`/`save` (since 2.9 they read and write through torchcodec, "
        "which torchaudio does not install: ImportError) and its removed `info`, `set_audio_backend` and `backend`/"
        "`io` modules, a hard assert on a library's exact version, or Hugging Face/openai "
        "arguments a current release removed (`from_pretrained(load_in_8bit=...)`/`use_auth_token=` and "
        "`Trainer(tokenizer=...)` in transformers 5.0, the `--evaluation_strategy` field in 4.51, "
        "`transformers.utils.is_flash_attn_available` in 4.39, scikit-learn's `force_all_finite=` in 1.8, "
        "`openai.openai_object` in openai 1.0), or `torch.stft` of a real input without `return_complex=` (required "
        "since torch 2.0); transformers places on the neuron device only from 5.4. "
        "TorchNeuron native needs a current torch 2.x, so each site fails there: at import when it runs at module "
        "level (the entry point stops before it does anything), else when its function runs. Replace the removed "
        "APIs (`math.inf` for `torch._six.inf`, the builtins or `np.float64` for the aliases, `np.pad` for "
        "`numpy.lib.arraypad.pad`, `itertools.accumulate` for `_accumulate`, Pillow for `scipy.misc.imread`, "
        "`processing_class=` for `tokenizer=`, `eval_strategy` for `evaluation_strategy`), lift the version pin, "
        "and re-run on the torch 2.x stack.",
    ),
    Rule(
        id="checkpoint-weights-only",
        category="container",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="checkpoint with pickled objects loaded under torch's `weights_only=True` default",
        why="From torch 2.6 `torch.load` defaults to `weights_only=True`: tensors, numbers, strings and their "
        'containers load, any other pickled object raises `UnpicklingError` ("Unsupported global"). The repository\'s '
        "checkpoints hold such objects: an `argparse.Namespace` or config object saved beside the weights "
        '(`"args": args`), or the callbacks and hyper-parameters a PyTorch Lightning checkpoint pickles. TorchNeuron '
        "runs on a current torch, so each load of one stops there. Pass `weights_only=False` for the repository's "
        "own trusted checkpoints (or allow their classes with `torch.serialization.add_safe_globals`), or re-save "
        "them as plain state dicts, and load one checkpoint of each kind.",
    ),
    Rule(
        id="data-parallel",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="single-process `nn.DataParallel`",
        why="`nn.DataParallel` replicates the model over the visible devices from one process, scattering each batch "
        "and gathering the outputs through CUDA's comm kernels; PyTorch recommends DistributedDataParallel instead. "
        "It picks the device type it replicates over from the available accelerator, a PrivateUse1 backend such as "
        "TorchNeuron's `neuron` included (torch/_utils.py `_get_available_device_type`), and its forward scatters "
        "every batch through `torch._C._scatter` before even its one-device shortcut: a binding a torch built "
        "without CUDA lacks (absent from torch 2.13's CPU build), so a wrapper the default path always builds "
        "stops it on a Neuron host. "
        "Port it to one process per NeuronCore under torchrun with `DistributedDataParallel` and "
        '`init_process_group(backend="neuron")`, a `DistributedSampler`, and rank-aware logging and checkpoints.',
    ),
    Rule(
        id="install-pin",
        category="container",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="install pins a stack the Neuron environment cannot keep (a torch pin, TensorFlow 1.x)",
        why="TorchNeuron ships as its own torch build, paired with one torch release: a requirement that pins another "
        "torch (an exact or upper-bound pin, or a CUDA build) makes the install replace it, and the neuron device is "
        "gone (a conda environment's `pytorch-cuda=` installs PyTorch's CUDA build); an environment pinned to a Python "
        "before 3.10 cannot hold it (no torch from 2.9 on has a wheel for Python 3.9 or older); TensorFlow 1.x has no "
        "wheel for a current Python; timm before 0.4 imports `torch._six`, which torch "
        "2.0 removed (read in timm 0.3.2's wheel); `DS_BUILD_OPS=1 pip install deepspeed` builds DeepSpeed's CUDA "
        "ops at install time, and a README's `pip install flash-attn` its kernels, and both fail without nvcc. "
        "Where the README's install step (its install script, or the install document it links) installs the file "
        "(or names the package on its pip line), the setup stops before any command runs. Lift the pin to the Neuron "
        "SDK's torch (or drop it and install with the SDK's constraints), replace what the old pin held (TF1's "
        "HParams), and re-resolve the rest of the stack.",
    ),
    Rule(
        id="trainer-cuda-setting",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="Trainer setting that needs CUDA (`tf32=True`)",
        why="`TrainingArguments(tf32=True)` (or `--tf32 True` on the command line) raises `ValueError('--tf32 "
        "requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7')` on a host without CUDA (transformers "
        "5.17.0, measured), so the run stops before training. TF32 is a CUDA matmul mode: drop the setting; bf16 "
        "carries the precision on Neuron.",
    ),
    Rule(
        id="trainer-fsdp",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="Trainer FSDP sharding (`--fsdp`)",
        why="The command shards the model with the Trainer's FSDP (accelerate's plugin). From transformers 5.10 "
        "`--fsdp` means FSDP2 (`fully_shard`), the sharding the Neuron torch.distributed guide lists beside DDP and "
        "DTensor; FSDP1 (older transformers) is not. Validate the wrap policy, the memory per NeuronCore and the "
        "full-state-dict save on the neuron device.",
    ),
    Rule(
        id="undeclared-dependencies",
        category="container",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="dependencies the default path imports that no file declares",
        why="The repository ships no requirements, setup, pyproject, Pipfile, conda environment or Dockerfile, yet "
        "its default path imports third-party packages: the environment has to be found by trial (each "
        "`ModuleNotFoundError` in turn) and pinned by hand, and on a Neuron host each release has to work beside "
        "TorchNeuron's torch (a torchvision resolved freely can replace it). Write the requirements file the port "
        "runs with, pinned to releases checked on the target.",
    ),
    Rule(
        id="torch-companion",
        category="container",
        dimension="operational",
        severity="info",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="torchvision/torchaudio installed beside the target's torch",
        why="Each torchvision/torchaudio release requires one torch release. Installed from the repository's "
        "requirements into the Neuron environment, an unpinned (or differently pinned) torchvision resolves to the "
        "newest release and can replace the torch build TorchNeuron ships with a stock one: pin it to the release "
        "paired with the Neuron SDK's torch, or install it with `--no-deps` and check.",
    ),
    Rule(
        id="bnb-optimizer",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="bitsandbytes optimizer named for the Trainer (`optim=`)",
        why="`optim='paged_adamw_32bit'` (or another 8-bit/paged name) makes the Trainer build bitsandbytes' "
        "optimizer: its kernels are CUDA, and paging keeps optimizer states in CUDA managed memory; bitsandbytes has "
        "no Neuron backend. Use `adamw_torch` (and shard the states if memory was the reason).",
    ),
    Rule(
        id="launcher-local-rank",
        category="operational",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="`--local_rank` parsed for `torch.distributed.launch`",
        why="From torch 2.0, `python -m torch.distributed.launch` passes `--local-rank=<rank>` (dashed) unless "
        "`--use-env` is given; a script whose parser declares only `--local_rank` exits with 'unrecognized "
        "arguments'. The torch TorchNeuron needs is 2.x: declare both spellings, or launch with torchrun and read "
        "LOCAL_RANK.",
    ),
    Rule(
        id="sync-batchnorm",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="`SyncBatchNorm` across processes",
        why="`nn.SyncBatchNorm` gathers batch statistics across the process group every training step "
        "(`batch_norm_stats`, `batch_norm_gather_stats_with_counts` and an all_gather). torch 2.13 accepts a "
        "PrivateUse1 device such as TorchNeuron's `neuron` (torch/nn/modules/batchnorm.py), but whether the neuron "
        "backend implements those kernels and collectives is unverified: run it on two or more NeuronCores and "
        "compare the running statistics with per-core BatchNorm before relying on it.",
    ),
    Rule(
        id="lightning-cuda",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="Lightning launched on CUDA (`--accelerator=cuda`, `--gpus`)",
        why="`lightning run model --accelerator=cuda` (or `gpu`) asks Lightning for CUDA devices: Lightning raises "
        "RuntimeError ('`CUDAAccelerator` can not run on your system') where there are none (lightning 2.6.6), and "
        "its CLI and Fabric offer no Neuron accelerator. The launch and the Fabric runtime (strategy, precision "
        "plugin, FSDP wrapping) move to torchrun and torch.distributed/FSDP2 on the neuron device. `--gpus 0,` to a "
        "PyTorch Lightning `Trainer` script stops the same way (1.x's device parser raises "
        "MisconfigurationException; 2.x removed `gpus`): the Trainer moves to a Neuron-aware loop.",
    ),
    Rule(
        id="lightning-ddp",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="multi-device training through Lightning's DDP strategy",
        why="The Trainer is set to Lightning's DDP strategy (`distributed_backend='ddp'`, `accelerator='ddp'` or "
        "`strategy='ddp'`): Lightning spawns one process per GPU from the `--gpus` list and takes NCCL for their "
        "process group, and the code around it scales the learning rate and shards validation by that GPU count. "
        "On Trainium the processes come from torchrun (or Lightning's own Neuron/XLA strategy in a current "
        'Lightning), one per NeuronCore, with `init_process_group(backend="neuron")`; the learning-rate scaling '
        "and any rank-zero-only hooks are checked at the new world size.",
    ),
    Rule(
        id="lightning-legacy",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="PyTorch Lightning before 1.0 as the training runtime",
        why="The requirements pin a PyTorch Lightning 0.x, and the LightningModule is written against its API "
        "(`self.hparams = hparams`, `validation_end`, `log`/`progress_bar` dicts returned from steps, "
        "`pytorch_lightning.logging`), removed in 1.x. No 0.x release knows a Neuron device, and 0.7.1 imports "
        "`pkg_resources` at import (a current setuptools, 84.2.1 measured here, no longer ships it): the port moves "
        "the module to a current Lightning, or to a plain torch loop, and re-checks the loss curve.",
    ),
    Rule(
        id="mpi-launch",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="ranks, sharding and broadcasts from an MPI launch (mpi4py)",
        why="The code takes its rank and world size from `mpi4py` (`MPI.COMM_WORLD`) under `mpiexec -n N`: data "
        "shards, checkpoint broadcasts and logging ranks come from MPI, and the torch process group is built from "
        "them. A Trainium instance's processes come from torchrun (one per NeuronCore, `LOCAL_RANK`/`WORLD_SIZE` in "
        "the environment) or from mpirun with the Neuron runtime's rank mapping; either way the MPI reads move to "
        "`torch.distributed` (or the launcher's environment) and the process group to the neuron backend.",
    ),
)

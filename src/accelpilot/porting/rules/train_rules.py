"""Rules on the training path's numerics and autograd (issue 27, second round: public vision/diffusion repositories).

Each is a hazard a porting lead lists for a training loop moved to TorchNeuron native: none needs a rewrite on sight,
each needs a validation or a small change, said in its ``why``."""

from __future__ import annotations

from accelpilot.porting.rules.schema import ALL, NEURON, Rule

TRAIN_RULES: tuple[Rule, ...] = (
    Rule(
        id="private-torch-op",
        category="device_code",
        dimension="source",
        severity="blocking",
        targets=NEURON,
        effort="days",
        title="custom autograd op on torch internals",
        why="A `torch.autograd.Function` that calls private torch internals (`torch._C._jit_get_operation`, "
        "`torch.ops.aten.*` backward ops, cuDNN-specific ATen ops) is tied to one PyTorch version and one backend: "
        "on the PyTorch 2.x TorchNeuron requires and on the `neuron` device it is either skipped (its gate falls "
        "back to the stock op) or fails. Port it to the public op or check the stock op's gradients on the target.",
    ),
    Rule(
        id="double-backward",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="double backward (create_graph=True)",
        why="`torch.autograd.grad(..., create_graph=True)` backpropagates through a gradient (R1, path-length, "
        "gradient-penalty regularizers): every op on that path needs a second derivative on the target, and "
        "torch.compile does not capture double backward, so these passes stay eager. Validate second-order op "
        "coverage on Neuron.",
    ),
    Rule(
        id="pin-memory-call",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="pinned host memory on the accelerator (Tensor.pin_memory(), DataLoader(pin_memory=True))",
        why="`Tensor.pin_memory()` asks the accelerator's pinned host allocator and raises where there is none "
        "('Cannot access accelerator device when none is available'); a DataLoader with `pin_memory=True` pins every "
        "batch through the current accelerator when one is present (torch 2.13's DataLoader sets its pin device to "
        "`torch.accelerator.current_accelerator()`, and switches pinning off itself only for MPS, whose allocator "
        "lacks it). On a Trainium host that is the neuron backend, whose pinned allocator is unverified. Verify a "
        "pinned batch on the target, or set `pin_memory=False` there.",
    ),
    Rule(
        id="prefixed-import",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=ALL,
        effort="hours",
        item="repo",
        title="import under a package prefix the repository does not have",
        why="An entry point imports the repository's own module under the package path of the monorepo it was "
        "exported from (MoCo's `import deeplearning.cross_image_ssl.moco.builder` for its `moco/builder.py`): the "
        "command stops with `ModuleNotFoundError` on any host. Import the module by its path in this repository.",
    ),
    Rule(
        id="submodule-unscanned",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=ALL,
        effort="days",
        item="setting",
        title="git submodule not checked out (its code not scanned)",
        why="The tree declares a git submodule in `.gitmodules` whose folder holds no file (a clone without "
        "`--recursive`, or an archive), and code of the tree imports it: whatever it holds (kernels, a CUDA "
        "extension, a vendored library) is not in this log. Check it out (`git submodule update --init`) and scan "
        "again before reading the totals as complete.",
    ),
    Rule(
        id="partial-last-batch",
        category="compile_hazard",
        dimension="model",
        severity="info",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="smaller last batch (DataLoader without drop_last)",
        why="A `DataLoader` with a batch size and no `drop_last` ends each pass with a smaller batch whenever the "
        "dataset size is not a multiple of it: one more input shape per loader. Under TorchNeuron native eager it "
        "runs as it is; under torch.compile it is one more graph (a recompile, or dynamic shapes), and under the "
        "XLA-era torch-neuronx one more compilation. Set `drop_last=True` for training, and pad the last evaluation "
        "batch with a mask where metrics must count every sample.",
    ),
    Rule(
        id="fp8-matmul",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="FP8 matmuls (`torch._scaled_mm`)",
        why="`torch._scaled_mm` on float8 operands (e4m3/e5m2 with per-tensor scales) is the FP8 GEMM of NVIDIA's "
        "sm89+ tensor cores. torch 2.13's CPU build runs it (measured), but the neuron backend's lowering of it is "
        "unverified and Trn1 has no FP8 matmul (Trn2's goes through NKI or the compiler's own casts): move the "
        "matmuls and their scale bookkeeping to bf16, or to a Trn2 FP8 path, and re-validate the training target.",
    ),
    Rule(
        id="device-augmentation",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="batch augmentation on the device every step (timm Mixup/CutMix)",
        why="timm's Mixup/CutMix runs on the device batch every step: CutMix pastes a random box whose size changes "
        "each step (a new slice shape) and builds soft targets with one_hot/scatter. It runs in eager; keep it "
        "outside the compiled region, or move it to the host loader.",
    ),
    Rule(
        id="model-ema-per-step",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="model EMA as a Python loop every step (timm ModelEma)",
        why="timm's `ModelEma`/`ModelEmaV2` update the average with a Python loop over the whole state dict after "
        "every optimizer step: hundreds of small eager ops, dispatch-bound on an accelerator like Trainium. Use "
        "`ModelEmaV3` (`torch._foreach_lerp_`) or fold the update into the compiled step.",
    ),
    Rule(
        id="host-solver-in-step",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="host solver in the step (scipy linear_sum_assignment)",
        why="scipy's Hungarian solver runs on the host: the cost matrix is copied from the device and solved on "
        "the CPU every call (a matcher in the loss runs it every training step), stalling the device. It works on "
        "any device; overlap it with the next step or batch it, a performance item.",
    ),
    Rule(
        id="vocab-resize",
        category="compile_hazard",
        dimension="model",
        severity="info",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="vocabulary resized to an odd size",
        why="`resize_token_embeddings(len(tokenizer))` after adding tokens gives the embedding and LM head an odd "
        "row count (32001 for LLaMA plus a pad token), which tiles poorly on Trainium's 128-wide matmul engine and "
        "in FSDP shards of the largest matrices: pass `pad_to_multiple_of=128`.",
    ),
    Rule(
        id="sparse-tensor",
        category="device_code",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="sparse tensor on the device",
        why="A sparse COO/CSR tensor (`.to_sparse()`, `torch.sparse_coo_tensor`) that moves with the model, or an "
        "embedding with sparse gradients (`nn.EmbeddingBag(..., sparse=True)`: backward makes sparse COO gradients "
        "the optimizer applies as a sparse update): a "
        "PrivateUse1 backend such as TorchNeuron is assumed to register no sparse kernels (unverified on hardware; "
        "MPS had none, and Whisper on 'mps' failed with \"Could not run aten::_sparse_coo_tensor_with_dims_and_tensors "
        '... Sparse backend"). Keep it dense (a bool mask) or on the host.',
    ),
    Rule(
        id="torchscript-on-device",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="TorchScript model run on the device",
        why="`torch.jit.load` of a scripted model that then runs on the training device (a metric network, a "
        "perceptual loss), or a function scripted with `@torch.jit.script` in the model (a fused gate): TorchScript "
        "runs through its own interpreter, outside `torch.compile`'s graph, so its op coverage and speed on "
        "`neuron` need validation; make it a plain function, or run it on the CPU.",
    ),
    Rule(
        id="float16-manual",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="manual float16 casts",
        why="Layers cast to float16 by hand (`.half()`, `.to(torch.float16)`, a dtype chosen per layer) with no "
        "autocast: float16 runs on Trainium, but bf16 is its native training type; numerics and speed of the "
        "fp16 path (clamps, no loss scaling) need validation, or a switch to bf16.",
    ),
    Rule(
        id="size-readback",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="sizes read back from tensors into shapes",
        why="A slice bound or a padding read back from a device tensor (`x[:, cutoff:]` with `cutoff` a tensor, "
        "`pad=[*margin.ceil().to(torch.int32)]`): a host sync each step and a new shape each step. Runs in eager; "
        "under torch.compile each step is a recompile. Rewrite as a mask (`torch.where`) or pad to a fixed maximum.",
    ),
    Rule(
        id="host-array-to-device",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="numpy array moved to the device and cast there, per call",
        why="`torch.from_numpy(arr).to(device)...float()` in a helper the step calls: numpy arrays default to "
        "float64, so float64 is copied host-to-device each call and cast on the accelerator, where float64 is no "
        "compute type. Keep float32 buffers on the device once.",
    ),
    Rule(
        id="pretrained-encoder-in-loop",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="frozen pretrained model run on the device every step",
        why="A model loaded with `from_pretrained` (a VAE, a text encoder) encodes every batch on the accelerator "
        "inside the training loop: its op coverage and speed on Neuron need validation, or precompute its outputs "
        "offline.",
    ),
    Rule(
        id="host-sync-in-loop",
        category="data_movement",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="device-to-host read every training step",
        why="`loss.item()`, `.cpu()` or `.tolist()` in the loop of a function that calls `.backward()` or "
        "`optimizer.step()` reads a value back every step. On a lazy or compiled device (TorchNeuron under "
        "torch.compile, an XLA device) each read cuts the graph and makes the host wait until the device has "
        "finished the step, so the next step cannot be queued behind it: a graph cut and a device-to-host wait per "
        "step. It runs, slower. Accumulate on the device (`total += loss.detach()`) and read every N steps "
        "(the logging interval).",
    ),
    Rule(
        id="fp32-training",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="default path runs in fp32 (no autocast, bf16 or fp16)",
        why="The default path trains (or, with no training step, infers) in fp32: no autocast, half or bf16 in the "
        "code it runs (a separate script's autocast is its own item). Trainium's matrix "
        "engines run bf16 at several times their fp32 rate, so a port that keeps fp32 keeps a fraction of the chip. "
        'Decide the precision (`torch.autocast(device_type="neuron", dtype=torch.bfloat16)` around the forward and '
        "loss, or bf16 weights with fp32 optimizer state) and re-validate the metrics the repository reports.",
    ),
    Rule(
        id="precision-keyed-on-cuda",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="16-bit precision chosen only when CUDA answers (fp32 elsewhere)",
        why="The precision is chosen by asking CUDA (`'bf16-true' if torch.cuda.is_available() and "
        "torch.cuda.is_bf16_supported() else '32-true'`, or a detect function that returns bf16 under "
        "`if torch.cuda.is_available():` and fp32 after it). On a Trainium host the test is false, so the run "
        "silently takes fp32: twice the memory and a fraction of the bf16 rate the GPU run had. Ask the neuron "
        "device too (bf16 is Trainium's native matmul type) and re-check the memory at the new precision.",
    ),
    Rule(
        id="recurrent-layer",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="recurrent layers (`nn.LSTM`, `nn.GRU`, `nn.RNN` and their cells)",
        why="On a GPU `nn.LSTM`/`nn.GRU` run cuDNN's fused RNN kernels; on the neuron device the recurrence is a "
        "loop over time steps (or a fallback to the CPU where the backend has no lowering: unverified here), and "
        "torch.compile unrolls a cell's Python loop. Check the layers' op coverage and speed on the device at the "
        "sequence lengths the repository uses, or keep them on the host where they are small.",
    ),
    Rule(
        id="grad-in-step",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="a gradient of an intermediate taken inside the step (`torch.autograd.grad`)",
        why="The step differentiates an intermediate by hand: a GAN loss's adaptive weight from the gradients at the "
        "decoder's last layer (`torch.autograd.grad(nll_loss, last_layer, retain_graph=True)`), or classifier/CLIP "
        "guidance inside a sampling loop. Under torch.compile each call is one more backward graph per step and "
        "keeps the forward graph alive; check that the neuron backend compiles it once and that memory holds.",
    ),
    Rule(
        id="custom-checkpoint",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="hand-made gradient checkpointing (an autograd.Function re-running the forward)",
        why="A custom `autograd.Function` keeps the forward's closure on `ctx` and, in `backward`, re-runs it under "
        "`enable_grad` and calls `torch.autograd.grad` (guided-diffusion's and latent-diffusion's "
        "`CheckpointFunction`): a reentrant checkpoint torch.compile cannot see into. Replace it with "
        "`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)` and re-check the memory it saves.",
    ),
    Rule(
        id="manual-attention",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="attention written out by hand (scores materialised)",
        why="The model multiplies queries by keys and takes a softmax itself (`q @ k.transpose(-2, -1)`, "
        "`einsum(..., q, k)`, `bmm(q, k)`): the whole (heads, L, L) score matrix is materialised in device memory "
        "and the compiler sees a chain of ops where `F.scaled_dot_product_attention` is one call. It runs; at the "
        "default sequence length the scores count against a NeuronCore's 16 GiB (trn1), and whether the neuron "
        "backend fuses the hand-written chain is to be read in the compile log (assumption: it lowers "
        "`scaled_dot_product_attention` better than the chain). Replace it with `F.scaled_dot_product_attention` "
        "(its mask and scale kept), compare outputs, and re-fit the batch.",
    ),
    Rule(
        id="sampling-ops",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="token sampling on the device (multinomial, top-k/top-p filters)",
        why="A decode loop samples each token on the device with `torch.multinomial`, often after a top-k/top-p "
        "filter (`topk`, `sort`, `cumsum`, a boolean mask): random sampling and sorts are where an accelerator "
        "backend is least likely to have kernels, and a CPU fallback costs a transfer every token. Check the "
        "operators on the `neuron` device (eager and compiled), or sample on the host from the last logits.",
    ),
    Rule(
        id="decode-host-sync",
        category="data_movement",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="hours",
        item="repo",
        title="device-to-host read every decode step",
        why="An autoregressive loop samples a token on the device and tests it in Python to stop (`if idx_next == "
        "eos_id: break`, `if all(eos_reached)`): the test makes the host wait for the device every token, so the "
        "next step cannot be queued behind it, and under torch.compile it cuts the graph. It runs, slower. Keep the "
        "stop test on the device (a mask of finished rows) and read it every N tokens.",
    ),
    Rule(
        id="fid-evaluation",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        item="repo",
        title="Inception-based evaluation (FID/IS/KID) on the device",
        why="The metrics run an Inception-v3 feature extractor over every generated and reference image (pytorch-fid, "
        "torch-fidelity, clean-fid, TF-GAN, or the repository's own `InceptionV3`/`fid_inception_v3`), usually on the "
        "training device, and compute the Frechet distance on the host (a matrix square root in scipy). The "
        "extractor is a second model to bring up on the `neuron` device (or to run on the host, slowly), and FID is "
        "sensitive to its numerics: check the score against the CUDA reference on the same samples before "
        "comparing models by it.",
    ),
)

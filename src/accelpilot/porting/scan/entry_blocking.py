"""The CUDA lines on an entry point's path that stop a host without CUDA (issue 27: "blocking means it stops the
default path"), split from ``entry.py``, which finds the entry points.

On an entry point's own lines, CUDA placement that has no fallback stops the run on a Trainium host: a ``"cuda"``
device default, ``torch.cuda.set_device``/``synchronize``, ``assert torch.cuda.is_available()``, an NCCL process
group. Those lines block, with the entry point named. A device chosen as ``"cuda" if torch.cuda.is_available() else
"cpu"`` falls back (to the CPU, slowly): a warning, and so does a line under ``if args.cuda:`` where the file binds
``args.cuda = not args.no_cuda and torch.cuda.is_available()`` (pygcn).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping

from accelpilot.porting.findings import Finding
from accelpilot.porting.scan.entry import _RUN_BY, EntryPoints
from accelpilot.porting.scan.patterns import CHOICE_SUFFIX, INDEXED_CHOICE, SCALER_STATE
from accelpilot.porting.scan.readme_example import Scope

# Rules of CUDA placement that stop a run without CUDA when the entry point runs them with no fallback.
BLOCKS_IN_ENTRY = frozenset(
    {
        "cuda-device-literal",
        "torch-cuda-api",
        "cuda-call",
        "nccl-backend",
        "bitsandbytes",
        "hf-trainer",
        "trainer-cuda-setting",
        "bnb-optimizer",
        "amp-cuda",
        "slurm-gpu-gres",
        "nvidia-smi",
        "flash-attn",
        "data-parallel",
    }
)
# Why such a line stops the entry point where it is not CUDA placement itself.
_STOPS = {
    "hf-trainer": "its training loop runs in a Trainer that, before transformers 5.4, places on CUDA or the CPU, not "
    "the neuron device",
    "trainer-cuda-setting": "TrainingArguments(tf32=True) raises ValueError without CUDA (transformers 5.17.0)",
    "bnb-optimizer": "the Trainer builds a bitsandbytes optimizer, which has no Neuron backend",
    "amp-cuda": "fp16=True asks for CUDA AMP, which the Trainer refuses on a device that is not a GPU",
    "nvidia-smi": "subprocess runs the nvidia-smi executable, which a host without the NVIDIA driver lacks, so it "
    "raises FileNotFoundError",
    "flash-attn": "it asks transformers for attn_implementation='flash_attention_2', which raises ImportError where "
    "the flash_attn package is missing, and flash-attn builds only with CUDA",
    "data-parallel": "on a Neuron host nn.DataParallel takes TorchNeuron's PrivateUse1 backend as its device type "
    "(torch/_utils.py _get_available_device_type) and its forward scatters every batch through torch._C._scatter, a "
    "CUDA comm binding that a torch built without CUDA lacks (torch 2.13 nn/parallel/comm.py; absent from the CPU "
    "build, tried), before even a one-device shortcut",
    "slurm-gpu-gres": "its README command asks Slurm for NVIDIA GPUs through submitit, which a Trainium cluster "
    "(Neuron devices, not GPU gres) cannot grant",
}
# accelerate places on the neuron device from 1.13.0 (hf_stack.py); a stack pinned below it picks CUDA or the CPU.
_ACCELERATE_STOP = (
    "its training loop runs in accelerate's Accelerator, which before accelerate 1.13 picks CUDA or the CPU, so the "
    "loop runs on the host CPU, not on Trainium"
)
_ACCELERATE_FP16_STOP = "fp16 mixed precision is CUDA AMP, which accelerate refuses on a device that is not a GPU"
_FP16_ASKED = ("fp16=True", "mixed_precision=")
# torch 2.13 (tried): ``torch.cuda.amp.GradScaler()`` on a build without CUDA warns, disables itself and returns
# ``{}`` from ``state_dict()``.
SCALER_STATE_STOP = (
    "its GradScaler is a CUDA one, which disables itself without CUDA and returns an empty state_dict(), so reading "
    "['scale'] raises KeyError at the first step (torch 2.13, tried)"
)
_FLAG = re.compile(r" when `([\w.]+)` is true")
# ``"cuda" if torch.cuda.is_available() else "cpu"``, also with a further condition joined by ``and`` (``... and
# args.cuda else "cpu"``), in parentheses (``'cuda' if (args.cuda and torch.cuda.is_available()) else 'cpu'``) or
# with the device built in each arm (PANNs' ``torch.device('cuda') if args.cuda and torch.cuda.is_available() else
# torch.device('cpu')``): off CUDA the condition is false, so the CPU arm runs.
_CUDA_ARM = r"""["']cuda(?::\d+)?["']\s*\)?\s+if\s+"""  # ``"cuda" if`` or ``torch.device("cuda") if``
_NAMED_CHOICE = re.compile(
    _CUDA_ARM + r"""([\w.]+)\s+else\s|["']cpu["']\s+if\s+not\s+([\w.]+)\s+else\s+["']cuda"""
)  # also GLIDE's ``'cpu' if not has_cuda else 'cuda'`` and the EGNN scripts' ``"cuda" if args.cuda else "cpu"``
_FALLBACK = re.compile(_CUDA_ARM + r"""\(?.*\bis_available\(\)\)*(?:\s+and\s+[\w.()\[\]]+)*\)*\s+else\s""")
# torch.cuda calls that return without CUDA (measured on torch 2.13 CPU; ``call_reach.py``), and its exception
# classes (``except torch.cuda.CudaError:`` names a class that a CPU build defines): no stop.
_RETURNS_WITHOUT_CUDA = re.compile(
    r"^torch\.cuda\.(?:max_memory_allocated|memory_allocated|memory_reserved|max_memory_reserved|empty_cache"
    r"|device_count|is_initialized"
    r"|manual_seed(?:_all)?|CudaError|OutOfMemoryError)$"
)
# ``device_type = 'cuda' if 'cuda' in device else 'cpu'`` (nanoGPT, llama2.c): a name that follows the device.
_FOLLOWS = re.compile(r"""["']cuda["']\s+if\s+["']cuda["']\s+in\s+[\w.]+\s+else\s""")
# ``subprocess.run(["nvidia-smi"])``: an argument list (no shell) raises FileNotFoundError where the executable is
# missing; ``os.popen``/``os.system``/``shell=True`` only print "not found" and return, so they do not stop the run.
_EXEC_NVIDIA_SMI = re.compile(r"subprocess\.(?:run|check_output|check_call|call|Popen)\(\s*\[\s*[\"']nvidia-smi")
# The string a script passes as ``attn_implementation`` to load a transformers model with FlashAttention-2.
_FLASH_ATTENTION_2 = "string 'flash_attention_2'"
_REQUIRES_CUDA = re.compile(r"^\s*assert\s+torch\.cuda\.is_available\(\)")


def _probed_name(snippet: str, rel: str | None, read: Callable[[str], str | None] | None) -> bool:
    """``"cuda" if use_cuda else "cpu"`` where the entry point binds ``use_cuda = torch.cuda.is_available()``
    (Wav2Lip): the same CPU fallback through a name."""
    m = _NAMED_CHOICE.search(snippet)
    if m is None or rel is None or read is None:
        return False
    text = read(rel) or ""
    name = re.escape(m.group(1) or m.group(2))
    # a notebook's cell source is a JSON string: the binding may follow its opening quote
    return re.search(rf'^\s*"?{name}\s*=\s*[^\n]*\bis_available\(\)', text, re.M) is not None


def _under_probed_flag(f: Finding, read: Callable[[str], str | None] | None, flags: dict[str, set[int]]) -> bool:
    """``f`` sits in the body of ``if args.cuda:`` (or ``if use_cuda and ...:``) whose name the file binds to an
    expression asking ``torch.cuda.is_available()``: off CUDA the body is skipped and the run goes on on the CPU."""
    if f.file is None or read is None or f.line is None:
        return False
    if f.file not in flags:
        flags[f.file] = _probed_flag_lines(read(f.file) or "")
    return f.line in flags[f.file]


def _probed_flag_lines(text: str) -> set[int]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    probed = {
        ast.unparse(t)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and "is_available()" in ast.unparse(node.value)
        for t in node.targets
        if isinstance(t, (ast.Name, ast.Attribute))
    }
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        if any(ast.unparse(v) in probed or _counts_gpus(v) for v in values):
            lines |= {n.lineno for st in node.body for n in ast.walk(st) if hasattr(n, "lineno")}
    return lines


# A test that chooses devices: how many GPUs, whether CUDA, which device, single or distributed.
_DEVICE_TEST = re.compile(r"gpu|cuda|device|parallel|distributed|world|rank|multi", re.I)


def _conditional(f: Finding, read: Callable[[str], str | None] | None, branches: dict[str, set[int]]) -> bool:
    """``f`` sits in either arm of an ``if`` of its file whose test chooses devices (``if len(gpu_ids) > 1``,
    ``if device == 'cuda'``); an ``if`` about anything else (DeepLabV3Plus' resume test, both arms of which wrap the
    model) decides nothing about the wrapper."""
    if f.file is None or read is None or f.line is None:
        return False
    if f.file not in branches:
        try:
            tree = ast.parse(read(f.file) or "")
        except (SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])
        branches[f.file] = {
            n.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _DEVICE_TEST.search(ast.unparse(node.test)) is not None
            for st in [*node.body, *node.orelse]
            for n in ast.walk(st)
            if hasattr(n, "lineno")
        }
    return f.line in branches[f.file]


def _counts_gpus(test: ast.expr) -> bool:
    """``torch.cuda.device_count() > 1`` (the EGNN scripts' ``if args.dp and torch.cuda.device_count() > 1:``): 0 on
    a host without CUDA, so the body is skipped."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Call)
        and ast.unparse(test.left.func) == "torch.cuda.device_count"
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Gt, ast.GtE))
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, int)
        and test.comparators[0].value >= (1 if isinstance(test.ops[0], ast.GtE) else 0)
    )


def mark_entry_blocking(
    findings: list[Finding], entries: EntryPoints, read: Callable[[str], str | None] | None = None
) -> None:
    """CUDA placement on an entry point's own lines with no fallback blocks; ``assert torch.cuda.is_available()``
    there is a requirement of CUDA, not a probe. In a README example's module only the lines of the classes and
    functions it calls count; a line under a flag (``mixed_precision=... if amp``) blocks when the example passes
    that flag as ``True``. A submitit GPU request blocks when its script is the README's way to run what it
    launches; a launcher of a script the README also runs directly is an alternative: "blocks when" it is used."""
    how = entries.how
    # scripts a command runs directly (not guessed by name; one a launcher runs is the path its document gives)
    commands = {e: h for e, h in how.items() if ": `" in h and not h.startswith(_RUN_BY)}
    variants = {e: b for e in commands if (b := variant_of(e, commands)) is not None}
    _mark_aside(findings, getattr(how, "aside", {}))
    flags: dict[str, set[int]] = {}  # entry file -> lines under ``if <name bound to is_available()>:``
    branches: dict[str, set[int]] = {}  # entry file -> lines under any ``if`` but the ``__main__`` guard
    for f in findings:
        if f.file not in how or f.rule not in BLOCKS_IN_ENTRY:
            continue
        if f.rule == "amp-cuda" and not f.message.startswith((*_FP16_ASKED, SCALER_STATE)):
            continue  # ``torch.cuda.amp.GradScaler``: disabled off CUDA, a precision hazard, not a stop
        if f.rule == "nvidia-smi" and not _EXEC_NVIDIA_SMI.search(f.snippet or ""):
            continue  # a shell that does not find nvidia-smi prints an error and returns
        if f.rule == "flash-attn" and f.message != _FLASH_ATTENTION_2:
            continue  # its imports are runtime lines (``findings.RUNTIME_REASON``), judged by their reach
        if f.rule == "slurm-gpu-gres" and not f.message.startswith("submitit"):
            continue  # a ``--gres=gpu`` string of the script: the job-spec rules judge it
        if f.rule == "torch-cuda-api" and _RETURNS_WITHOUT_CUDA.match(f.message):
            continue  # ``torch.cuda.max_memory_allocated()``: returns 0 on a build without CUDA (call_reach.py)
        scope = _scope_of(entries, f)
        if f.file in entries.scopes and scope is None:
            continue  # another class or function of the example's module: not what the example runs
        snippet = f.snippet or ""
        if f.context == "probe" and _REQUIRES_CUDA.match(snippet):
            f.context, f.porting = None, True
        if f.context is not None or not f.porting:
            continue
        if f.rule == "data-parallel" and (f.message.startswith("parallel_apply") or _conditional(f, read, branches)):
            continue  # a wrapper under a test (``if len(gpu_ids) > 1``, ``if device == 'cuda'``): a multi-device choice
        fallback = _FALLBACK.search(snippet) or f.message == INDEXED_CHOICE or f.message.endswith(CHOICE_SUFFIX)
        if fallback or _probed_name(snippet, f.file, read) or _under_probed_flag(f, read, flags):
            f.reason = "performance item: off CUDA it falls back to the CPU (the device should be a setting)"
            continue
        if _FOLLOWS.search(snippet):
            f.reason = (
                "a device type derived from the configured device (`'cuda' if 'cuda' in device else 'cpu'`): it "
                "follows the device, placing nothing"
            )
            continue
        where = f"{f.message} at {f.file}:{f.line}"
        flag = _FLAG.search(f.message)
        if flag is not None and (scope is None or flag.group(1) not in scope[3]):
            unset = "the README example does not pass it" if scope else "the scan does not read it from the command"
            f.reason = f"blocks when `{flag.group(1)}` is true ({unset}): {where}"
            continue
        wrapped = entries.wraps.get(f.file or "")
        if wrapped is not None and not how.get(wrapped, _RUN_BY).startswith(_RUN_BY):
            f.reason = (
                f"blocks when {f.file} is used: an alternative launcher of {wrapped}, which the README also runs "
                f"directly ({how[wrapped]}): {where}"
            )
            continue
        base = variants.get(f.file or "")
        if base is not None:
            f.reason = f"blocks when {f.file} is run, a variant of the entry point {base} ({how[f.file]}): {where}"
            continue
        f.severity = "blocking"
        passed = f" (the example passes {flag.group(1)}=True)" if flag is not None else ""
        f.reason = (
            f"entry point {f.file} ({how[f.file]}) runs this with no fallback, so a host without CUDA stops: {where}"
            if f.rule not in _STOPS
            else f"entry point {f.file} ({how[f.file]}) cannot run on the target as written: "
            f"{_stop(f.rule, f.message)}{passed}: {where}"
        )


def _mark_aside(findings: list[Finding], aside: Mapping[str, str]) -> None:
    """CUDA placement on the lines of a demo, test or timing script the README runs beside its training run
    (``Entries.aside``): it stops that script, not the training run."""
    for f in findings:
        how = aside.get(f.file or "")
        if how is not None and f.rule in BLOCKS_IN_ENTRY and f.context is None and f.porting and not f.reason:
            f.reason = (
                f"blocks when {f.file} is run ({how}), a demo, test or timing script beside the README's "
                f"training run: {f.message} at {f.file}:{f.line}"
            )


def variant_of(entry: str, how: Mapping[str, str]) -> str | None:
    """The entry point ``entry`` varies, when the commands run both: ``main_moe.py`` of ``main.py`` (its stem
    extended, same folder; Swin's MoE and SimMIM scripts), ``segment/train.py`` of ``train.py`` (the same name in a
    task's folder below it; yolov5's segmentation and classification tasks). The base is the default path; a variant
    is another task or model family run by its own command."""
    folder, _, name = entry.rpartition("/")
    stem = name.removesuffix(".py")
    for other in sorted(how):
        if other == entry or not other.endswith(".py"):
            continue
        o_folder, _, o_name = other.rpartition("/")
        o_stem = o_name.removesuffix(".py")
        if o_folder == folder and stem.startswith(o_stem + "_"):
            return other
        if o_name == name and o_folder != folder and (o_folder == "" or folder.startswith(o_folder + "/")):
            return other
    return None


def _scope_of(entries: EntryPoints, f: Finding) -> Scope | None:
    line = f.line or 0
    return next((s for s in entries.scopes.get(f.file or "", ()) if s[1] <= line <= s[2]), None)


def _stop(rule: str, message: str) -> str:
    """Why a line that is not CUDA placement itself stops the entry point."""
    if message.startswith("Accelerator("):
        return _ACCELERATE_STOP
    if message.startswith("mixed_precision="):
        return _ACCELERATE_FP16_STOP
    if message.startswith(SCALER_STATE):
        return SCALER_STATE_STOP
    return _STOPS[rule]

"""The visitor's rules on calls: placement, kernels, extensions, downloads, host syncs and int64."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.branch_tests import _APPLE_KERNEL, _COMPARED_DEVICE, _device_kind
from accelpilot.porting.scan.dataflow import (
    _ARITH,
    _COLLECTIVES,
    _INDEX_OPS,
    _ONE_INPUT,
    _call_name,
    _counts_booleans,
    _delegates,
    _extent_of,
    _is_boolean,
    _is_none,
    _root_name,
    _targets,
)
from accelpilot.porting.scan.int_ranges import bounded_draw
from accelpilot.porting.scan.literals import (
    _EXT_BUILDERS,
    MESSAGE_CALLS,
    _local_source,
    _upload_method,
    cuda_distutils_extension,
    impl_selector,
)
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import (
    BENCHMARK_MODULES,
    DATA_DEPENDENT_METHODS,
    DEVICE,
    DISPATCHED_BY_DEFAULT,
    EXACT_STRINGS,
    HOST_SYNC_METHODS,
    HUB_CALLS,
    NON_TORCH_MODULES,
    probe_kind,
)
from accelpilot.porting.scan.visit_base import VisitorBase

# Reductions whose result, read back with ``int()``/``float()`` in a forward, is a data-dependent size or count.
_REDUCTIONS = frozenset({"max", "min", "sum", "amax", "amin", "argmax", "argmin", "count_nonzero", "prod"})


# transformers/trl trainers and their argument classes (the training loop accelerate runs).
def _maps_location(node: ast.Call) -> bool:
    """``torch.load(f, map_location=...)``, its second positional argument, or ``**kwargs`` that may hold it."""
    return len(node.args) > 1 or any(k.arg in ("map_location", None) for k in node.keywords)


def _pads_to_longest(node: ast.Call, name: str) -> bool:
    """``DataCollatorWithPadding``/``ForSeq2Seq``/``ForTokenClassification`` pad to the batch's longest sample by
    default (``padding=True``); ``padding="max_length"`` or ``False`` fixes the length (or leaves it to the data)."""
    for kw in node.keywords:
        if kw.arg == "padding":
            return isinstance(kw.value, ast.Constant) and kw.value.value in (True, "longest")
    return name in ("DataCollatorWithPadding", "DataCollatorForSeq2Seq", "DataCollatorForTokenClassification")


# Calls where ``fused=`` selects torch's fused (CUDA) optimizer step (``dict(fused=True)`` holds its kwargs).
_FUSED_CALLS = frozenset({"AdamW", "Adam", "SGD", "dict"})
_HF_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer", "SFTTrainer"})
_LIGHTNING = ("pytorch_lightning.", "lightning.")  # ``pl.Trainer``, ``L.Fabric``: Lightning's loop
_HF_TRAINING_ARGS = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig"})


# Tensor methods whose result stays where the tensor is (a comparison, a view, an elementwise op).
_CPU_KEPT = frozenset(
    {"ge", "gt", "le", "lt", "eq", "ne", "logical_and", "logical_or", "flatten", "view", "long", "int"}
)


# String methods whose arguments are text to find, cut or split on, not devices.
_TEXT_METHODS = frozenset(
    {
        "replace",
        "split",
        "rsplit",
        "strip",
        "lstrip",
        "rstrip",
        "removeprefix",
        "removesuffix",
        "find",
        "index",
        "count",
        "partition",
        "rpartition",
    }
)


# torch's random factories: with no ``device=`` the draw is a CPU tensor (``_like`` forms follow their input).
_HOST_DRAWS = frozenset({"rand", "randn", "randint", "randperm"})


# torchvision's C++ operators behind ``torchvision.ops`` (kernels for CPU and CUDA in torchvision's csrc): NMS, RoI
# pooling and deformable convolution, called as functions or built as modules.
TORCHVISION_CPP_OPS = frozenset(
    {
        "nms", "batched_nms", "roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool", "deform_conv2d", "RoIAlign",
        "RoIPool", "PSRoIAlign", "PSRoIPool", "DeformConv2d", "MultiScaleRoIAlign",
    }
)  # fmt: skip


class CallRules(VisitorBase):
    """The visitor's rules on calls: placement, kernels, extensions, downloads, host syncs and int64."""

    # (id of the def, name -> [(line, value)]) of the def last asked about (``_last_binding``)
    _def_lines_cache: tuple[int, dict[str, list[tuple[int, ast.expr]]]] = (0, {})

    def v_call(self, node: ast.Call) -> None:
        f = node.func
        line = node.lineno
        name: str | None = None
        recv: str | None = None
        for kw in node.keywords:
            if impl_selector(kw.arg) and isinstance(kw.value, ast.Constant):
                self._consumed.add(id(kw.value))  # ``fn(x, impl="cuda")``: an implementation selector
        if isinstance(f, ast.Attribute):
            name = f.attr
            recv = self.dotted(f.value)
            if name == "numpy" and isinstance(f.value, ast.Subscript):
                self._consumed.add(id(f.value))  # ``.numpy()`` raises on a device tensor: the read is the host's
            line = f.end_lineno or line  # method calls: report the line holding ".name("
        elif isinstance(f, ast.Name):
            name = f.id
        if name in TORCHVISION_CPP_OPS and (self.dotted(f) or "").startswith("torchvision.ops."):
            self.add("torchvision-op", line, f"torchvision.ops {name}(...)")
        if name is not None:
            root = (recv or "").split(".", 1)[0]
            is_module = root in ("torch", "numba") or root in NON_TORCH_MODULES
            if isinstance(f, ast.Attribute):
                if name == "cuda" and not is_module and not _delegates(self.def_name, node):
                    # inside a ``def cuda`` (``Rigid.cuda()`` mirroring ``Tensor.cuda()``) it is delegation: the
                    # placement is the caller's ``.cuda()``, itself a finding where it is called (``_delegates``)
                    self.add("cuda-call", line, ".cuda()")
                elif name in ("stft", "istft") and self.torch_file and not is_module:
                    self.add("fft-op", line, f".{name}()")
                elif name == "double" and self.torch_file and not is_module:
                    self.add("float64-dtype", line, ".double()", context=self._setup_only(node.lineno))
                elif name in HOST_SYNC_METHODS and self.forward_depth and self.torch_file:
                    if not self._host_built(f.value, node.lineno, 6):
                        self.add("item-in-forward", line, f".{name}() inside forward")
                elif name == "long" and self.forward_depth and self.torch_file and not is_module:
                    if not self._fits_int32(node, f.value):
                        self.add("int64-index", line, ".long() inside forward")
                elif name in DATA_DEPENDENT_METHODS and self.torch_file and root not in NON_TORCH_MODULES:
                    # ``torch.nonzero(t == EOT)`` asks the same of its first argument as ``t.nonzero()``
                    on = node.args[0] if root == "torch" and node.args else f.value
                    if not self._numpy_bound(on, node.lineno) and not self._cpu_tensor(on, line, 6):
                        self.add("data-dependent-op", line, f"{name}()")
                elif name == "where" and root == "torch" and len(node.args) == 1 and not node.keywords:
                    self._where(node, line)
            if name in ("startswith", "endswith") and isinstance(f, ast.Attribute):
                # ``device.startswith("mps")`` compares a device string, like ``== "mps"`` (``v_compare``)
                for a in node.args[:1]:
                    for e in a.elts if isinstance(a, ast.Tuple) else [a]:
                        if isinstance(e, ast.Constant) and _COMPARED_DEVICE.match(str(e.value)):
                            self._consumed.add(id(e))
                        elif isinstance(e, ast.Constant) and str(e.value) in EXACT_STRINGS:
                            # ``logger.name.startswith(("torch", "triton"))`` (open_clip): a name compared, not
                            # a library loaded
                            self._consumed.add(id(e))
            if name in _TEXT_METHODS and isinstance(f, ast.Attribute):
                # ``device.replace("cuda:", "")`` (YOLOv5's select_device) edits a device name as text: no device
                for a in node.args:
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and DEVICE.match(a.value):
                        self._consumed.add(id(a))
            if name == "get" and isinstance(f, ast.Attribute) and node.args and _device_kind(node.args[0]) == "cuda":
                # ``components.get("cuda", {})`` (a CUDA toolkit's version.json): the first argument of a mapping
                # lookup is a key of the data, not a device; a device as the default (``.get("device", "cuda")``) stays
                self._consumed.add(id(node.args[0]))
            if name in ("getattr", "hasattr") and len(node.args) >= 2 and self.dotted(node.args[0]) == "torch.version":
                # ``getattr(torch.version, "cuda", None)``: the version of the toolkit torch was built with, as
                # ``torch.version.cuda`` reads it (no finding either): an attribute's name, not a device
                self._consumed.add(id(node.args[1]))
            if name in DISPATCHED_BY_DEFAULT:
                self._dispatched_class(node, name)
            if name in ("add", "append") and isinstance(f, ast.Attribute) and self._inventory(node, f):
                self._consumed.add(id(node.args[0]))
            if name in ("int", "float") and isinstance(f, ast.Name) and self.forward_depth and self.torch_file:
                self._read_back(node, name)
            if name in ("autocast", "GradScaler"):
                self._amp(node, name)
            elif (
                name in _EXT_BUILDERS
                or (name == "load" and self.dotted(f) == "torch.utils.cpp_extension.load")
                or cuda_distutils_extension(node, name)
            ):
                ext = self._ext_name(node)
                self.add("cpp-extension-cuda", node.lineno, f"{name}({ext!r})" if ext else f"{name}(...)", subject=ext)
            elif name in HUB_CALLS or (name == "load" and recv == "torch.hub"):
                if not _local_source(node):
                    self.add("hub-download", node.lineno, f"{name}(...)")
            else:
                self._more_calls(node, name)
            if self.dotted(f) == "torch.nn.functional.scaled_dot_product_attention":
                self.add("sdpa-attention", node.lineno, "F.scaled_dot_product_attention")
            for kw in node.keywords if name in _FUSED_CALLS else ():
                if kw.arg == "fused" and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
                    self.add("fused-optimizer", kw.value.lineno, f"{name}(fused=...)")
            if name.startswith("DataCollator") and _pads_to_longest(node, name):
                self.add("dynamic-padding", node.lineno, f"{name}: each batch padded to its longest sample")
            hf = (self.dotted(f) or "").startswith(("transformers.", "trl."))
            if hf and name in _HF_TRAINERS:
                self.add("hf-trainer", node.lineno, f"{name}(...)")
            if name in ("Trainer", "Fabric") and (self.dotted(f) or "").startswith(_LIGHTNING):
                self.add("lightning-trainer", node.lineno, f"{name}(...)")
            if name == "from_pretrained" and any(
                k.arg == "trust_remote_code" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            ):
                self.add("remote-model-code", node.lineno, "from_pretrained(..., trust_remote_code=True)")
            for kw in node.keywords if hf and name in _HF_TRAINING_ARGS else ():
                if kw.arg == "fp16" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                    self.add("amp-cuda", kw.value.lineno, "fp16=True (CUDA AMP with a GradScaler)")
                if kw.arg == "tf32" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                    self.add("trainer-cuda-setting", kw.value.lineno, "tf32=True (raises without CUDA)")
                if kw.arg == "fsdp" and isinstance(kw.value, ast.Constant) and kw.value.value:
                    self.add("trainer-fsdp", kw.value.lineno, f"fsdp={kw.value.value!r} (the Trainer's FSDP)")
            if name == "resize_token_embeddings" and not any(k.arg == "pad_to_multiple_of" for k in node.keywords):
                self.add("vocab-resize", node.lineno, "resize_token_embeddings(...) without pad_to_multiple_of")
            if name in ("prepare_model_for_int8_training", "prepare_model_for_kbit_training"):
                self.add("bitsandbytes", node.lineno, f"{name}(...)", subject="bitsandbytes")
            for kw in node.keywords:
                if kw.arg in ("load_in_8bit", "load_in_4bit") and isinstance(kw.value, ast.Constant) and kw.value.value:
                    # the model loads through bitsandbytes' CUDA int8/4-bit kernels whatever the device
                    self.add("bitsandbytes", kw.value.lineno, f"{kw.arg}=True", subject="bitsandbytes")
                if kw.arg == "help" and isinstance(kw.value, ast.Constant):
                    self._consumed.add(id(kw.value))  # a URI in help text is documentation, not data movement
            guard = probe_kind(name, recv)
            if guard is not None:
                self._within(guard, node)
                return
            if recv is not None and recv.startswith(BENCHMARK_MODULES):
                self._within("benchmark-tool", node)
                return
            if name in MESSAGE_CALLS:
                self.visit(f)
                self._message_depth += 1
                try:
                    for x in (*node.args, *node.keywords):
                        self.visit(x)
                finally:
                    self._message_depth -= 1
                return
        self.generic(node)

    def trainer_subclass(self, node: ast.ClassDef) -> None:
        """``class LLaVATrainer(transformers.Trainer)``: the training loop is the Trainer's, whatever the subclass
        overrides (its calls, ``LLaVATrainer(...)``, name no Trainer)."""
        for b in node.bases:
            name = b.attr if isinstance(b, ast.Attribute) else b.id if isinstance(b, ast.Name) else None
            if name in _HF_TRAINERS and (self.dotted(b) or "").startswith(("transformers.", "trl.")):
                self.add("hf-trainer", node.lineno, f"class {node.name}({name})")

    def _inventory(self, node: ast.Call, f: ast.Attribute) -> bool:
        """``devices.add("cuda")`` where the same def also adds another device type to ``devices``: a vocabulary of
        backends built one call at a time (``get_available_devices``), like a literal naming two device types
        (``_read_table``), not a choice of CUDA. Stays: one device type added alone."""
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if arg is None or _device_kind(arg) is None or self.def_node is None:
            return False
        target = ast.unparse(f.value)
        for sub in walk(self.def_node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in ("add", "append")
                and len(sub.args) == 1
                and _device_kind(sub.args[0]) not in (None, _device_kind(arg))
                and ast.unparse(sub.func.value) == target
            ):
                return True
        return False

    def _dispatched_class(self, node: ast.Call, name: str) -> None:
        """``use_experts_implementation(experts_class=FP8Experts, ...)``: the call form of the decorator, wrapping a
        class of this file; its body is then the eager reference, like a decorated class's (the call may come after
        the class, so python.py's ``_dispatched_bodies`` sets the body apart once the file is visited)."""
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "experts_class")]
        for a in given:
            if isinstance(a, ast.Name):
                self.dispatched.add(a.id)
                self.add("moe-experts-dispatch", node.lineno, f"{name}({a.id})")

    def _where(self, node: ast.Call, line: int) -> None:
        """``torch.where(condition)`` returns the indices where it holds: data-dependent, unless on a CPU tensor."""
        if not self._cpu_tensor(node.args[0], line, 6):
            self.add("data-dependent-op", line, "torch.where(condition) with one argument")

    def _last_binding(self, name: str, line: int) -> ast.expr | None:
        """The value of the last ``name = ...`` (or ``name: T = ...``) before ``line`` in the same def (the def's
        bindings gathered once, on its first question)."""
        if self.def_node is None:
            return None
        key = id(self.def_node)
        if self._def_lines_cache[0] != key:
            found: dict[str, list[tuple[int, ast.expr]]] = {}
            for a in walk(self.def_node):
                if isinstance(a, (ast.Assign, ast.AnnAssign)) and a.value is not None:
                    for t in a.targets if isinstance(a, ast.Assign) else [a.target]:
                        if isinstance(t, ast.Name):
                            found.setdefault(t.id, []).append((a.lineno, a.value))
            self._def_lines_cache = (key, found)
        earlier = [(ln, v) for ln, v in self._def_lines_cache[1].get(name, ()) if ln < line]
        return max(earlier, key=lambda lv: lv[0])[1] if earlier else None

    def _cpu_tensor(self, value: ast.expr, line: int, depth: int) -> bool:
        """``value`` is a tensor on the host CPU: ``torch.tensor(x)``/``torch.as_tensor(x)`` with no ``device=``
        (torch builds it on the CPU), through names bound earlier in the def, indexing, comparisons and elementwise
        methods of such tensors (``tokens.ge(k)``, ``a[:-1] & a[1:]``). A ``.to(...)`` leaves the chain."""
        if depth == 0:
            return False
        if isinstance(value, ast.Name):
            bound = self._last_binding(value.id, line)
            return bound is not None and self._cpu_tensor(bound, line, depth - 1)
        if isinstance(value, ast.Subscript):
            return self._cpu_tensor(value.value, line, depth - 1)
        if isinstance(value, ast.BinOp):
            sides = (value.left, value.right)
            return all(self._cpu_tensor(x, line, depth - 1) or isinstance(x, ast.Constant) for x in sides)
        if isinstance(value, ast.Compare) and len(value.comparators) == 1:
            return self._cpu_tensor(value.left, line, depth - 1)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return False
        name, recv = value.func.attr, value.func.value
        if isinstance(recv, ast.Name) and self.aliases.get(recv.id, recv.id) == "torch":
            return name in ("tensor", "as_tensor") and not any(k.arg == "device" for k in value.keywords)
        return name in _CPU_KEPT and self._cpu_tensor(recv, line, depth - 1)

    def _numpy_bound(self, value: ast.expr, line: int) -> bool:
        """``value`` is a name whose last binding before ``line`` in the same def is a numpy call
        (``durations = np.array([...])``) or an ``.astype(...)`` (torch tensors have none: RAFT's augmentor
        ``coords = coords.reshape(-1, 2).astype(np.float32)``): ``durations.nonzero()`` and ``coords[valid >= 1]``
        are numpy's on host data, not device ops."""
        bound = self._last_binding(value.id, line) if isinstance(value, ast.Name) else None
        if not isinstance(bound, ast.Call):
            return False
        root = (self.dotted(bound.func) or "").split(".", 1)[0]
        astype = isinstance(bound.func, ast.Attribute) and bound.func.attr == "astype"
        return astype or root in NON_TORCH_MODULES or root in ("np", "onp")

    def _host_built(self, value: ast.expr, line: int, depth: int) -> bool:
        """``value`` is a tensor built from Python values: ``torch.as_tensor([n])``/``torch.tensor([n, m])`` of a
        list/tuple/constant, through one-input ops (``torch.clamp(t, min=1)``, ``t.float()``) and through the last
        assignment of a name earlier in the same def. Reading it back (``.item()``) returns a number the host already
        had, not a value of the model's data (the loss's ``num_boxes = torch.as_tensor([num_boxes]).clamp(min=1)
        .item()``)."""
        if depth == 0:
            return False
        if isinstance(value, ast.Name) and self.def_node is not None:
            last = max(
                (
                    a
                    for a in walk(self.def_node)
                    if isinstance(a, ast.Assign)
                    and a.lineno < line
                    and any(isinstance(t, ast.Name) and t.id == value.id for t in a.targets)
                ),
                key=lambda a: a.lineno,
                default=None,
            )
            return last is not None and self._host_built(last.value, last.lineno, depth - 1)
        if isinstance(value, ast.BinOp) and isinstance(value.op, _ARITH):
            # ``num_boxes / world_size``: a host count scaled by a number the inputs do not decide
            a, b = value.left, value.right
            return (self._host_built(a, line, depth - 1) and self._host_number(b)) or (
                self._host_built(b, line, depth - 1) and self._host_number(a)
            )
        if isinstance(value, ast.Call) and _call_name(value) in _COLLECTIVES and value.args:
            # ``reduce(num_boxes)``: every rank gives its host count; the sum is still no value of the model's data
            return self._host_built(value.args[0], line, depth - 1)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return False
        name, recv = value.func.attr, value.func.value
        if isinstance(recv, ast.Name) and self.aliases.get(recv.id, recv.id) == "torch":
            if name in ("as_tensor", "tensor"):
                return bool(value.args) and isinstance(value.args[0], (ast.List, ast.Tuple, ast.Constant))
            if name in _HOST_DRAWS:
                # ``torch.rand(1, generator=self.rng).item()`` (audiocraft's condition dropout): a draw with no
                # ``device=`` is made on the host, so reading it back moves nothing from the device
                return not any(k.arg == "device" for k in value.keywords)
            return name in _ONE_INPUT and bool(value.args) and self._host_built(value.args[0], line, depth - 1)
        return name in _ONE_INPUT and self._host_built(recv, line, depth - 1)

    def _host_number(self, value: ast.expr) -> bool:
        """A number the function's inputs do not decide: a constant, or a local name assigned in the def, every
        assignment of which reads neither a parameter nor ``self`` (``world_size = 1`` / ``dist.get_world_size()``)."""
        if isinstance(value, ast.Constant):
            return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
        node = self.def_node
        if not isinstance(value, ast.Name) or node is None:
            return False
        a = node.args
        params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
        sources = [
            x.value
            for x in walk(node)
            if isinstance(x, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in x.targets)
        ]
        return bool(sources) and not any(
            isinstance(n, ast.Name) and n.id in params for src in sources for n in walk(src)
        )

    def _ext_name(self, node: ast.Call) -> str | None:
        """The module name a cpp_extension builder gives its build (first argument or ``name=``): what the
        project's Python files import."""
        cands = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "name")]
        for c in cands:
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value:
                self._consumed.add(id(c))
                return c.value
        return None

    def _read_back(self, node: ast.Call, name: str) -> None:
        """``int(lengths.max())`` / ``int(torch.sum(mask))`` in a forward: a size or count read back from the data
        into Python, which then shapes a pad, a buffer or a loop: a host sync and a new shape per step (issue 27)."""
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in _REDUCTIONS):
            return
        root = (self.dotted(arg.func.value) or "").split(".", 1)[0]
        if root in ("math", *NON_TORCH_MODULES) or self._host_built(arg.func.value, node.lineno, 6):
            return
        self.add(
            "item-in-forward",
            node.lineno,
            f"{name}(...{arg.func.attr}()) inside forward: a size read back from the data (a new shape per step)",
        )

    def _more_calls(self, node: ast.Call, name: str) -> None:
        """Calls added for real code: hub kernels and datasets, HTTP downloads, torch.compile's backend. Each
        needs its trigger token literally on the call's line (``torch.compile``, ``requests.``), which keeps the
        pruned scan exact."""
        f = node.func
        base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
        first = node.args[0] if node.args else None
        if name == "get_kernel":
            repo = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            if first is not None and repo is not None:
                self._consumed.add(id(first))
            # a kernel built for Apple's Metal/MLX runs only on MPS: like an XPU-only branch, the port leaves it be
            apple = repo is not None and bool(_APPLE_KERNEL & set(re.split(r"[/_.-]", repo.lower())))
            context = "backend-branch" if apple and self.context in (None, "optional") else None
            if self.context == "probe" and self.def_name:
                # nanochat's ``_load_flash_attention_3``: ``if not torch.cuda.is_available(): return None`` before
                # the load, so off CUDA the caller's other path runs: a performance item, not a probe
                context = f"fallback:{self.def_name}() returns None off CUDA"
            label = f"get_kernel({repo!r})" if repo else "get_kernel(...)"
            self.add("hub-kernel", node.lineno, label, subject=repo, context=context)
        elif name in ("load_dataset", "cached_file"):
            if not _local_source(node):
                self.add("hub-download", node.lineno, f"{name}(...)")
        elif base == "requests" and name in ("get", "request", "urlopen"):
            # ``requests.post/put/patch`` (and ``request("POST", ...)``) send a body: an upload or telemetry, not
            # data moved into the workload
            if not (name == "request" and _upload_method(first)):
                self.add("http-download", node.lineno, f"requests.{name}(...)")
        elif name in ("urlopen", "urlretrieve") and _root_name(f) == "urllib":
            if name == "urlretrieve" or not self._urlopen_sends(node):
                self.add("http-download", node.lineno, f"urllib {name}(...)")
        elif name in ("DataParallel", "parallel_apply"):
            # single-process data parallelism (``nn.DataParallel(model)``, DLRM's hand-rolled ``parallel_apply``);
            # DistributedDataParallel is not this name
            self.add("data-parallel", node.lineno, f"{name}(...): single-process multi-device replication")
        elif name in ("SyncBatchNorm", "convert_sync_batchnorm"):
            self.add("sync-batchnorm", node.lineno, f"{name}(...): batch statistics gathered across processes")
        elif name == "load" and base == "torch" and not _maps_location(node):
            self.add("checkpoint-map-location", node.lineno, "torch.load(...) without map_location")
        elif name == "compile" and base == "torch":
            backend = next((k.value for k in node.keywords if k.arg == "backend"), None)
            if isinstance(backend, ast.Constant):
                self._consumed.add(id(backend))  # a backend name, not a device string
            if backend is None or (isinstance(backend, ast.Constant) and backend.value == "inductor"):
                self.add("compile-backend", node.lineno, "torch.compile without the target's backend")

    def _urlopen_sends(self, node: ast.Call) -> bool:
        """``urlopen`` that sends a body: ``urlopen(url, data)``, or of a ``Request`` built with ``data=`` or
        ``method="POST"/"PUT"/"PATCH"`` (inline, or bound to a name by every assignment of it in the enclosing
        def). Sending trainer status or uploading a file is not a download: nothing the workload reads comes in."""
        data = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "data"), None)
        if data is not None and not _is_none(data):
            return True
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "url"), None)
        if isinstance(first, ast.Call):
            return self._request_sends(first)
        if not (isinstance(first, ast.Name) and self.def_node is not None):
            return False
        values = [
            a.value
            for a in walk(self.def_node)
            if isinstance(a, (ast.Assign, ast.AnnAssign))
            and a.value is not None
            and any(isinstance(t, ast.Name) and t.id == first.id for t in _targets(a))
        ]
        return bool(values) and all(isinstance(v, ast.Call) and self._request_sends(v) for v in values)

    def _request_sends(self, call: ast.Call) -> bool:
        """``urllib.request.Request(url, data, ...)``: a POST unless ``method=`` says otherwise (urllib's rule)."""
        if self.dotted(call.func) != "urllib.request.Request":
            return False
        method = next((k.value for k in call.keywords if k.arg == "method"), None)
        if method is not None:
            return _upload_method(method)
        data = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "data"), None)
        return data is not None and not _is_none(data)

    def _fits_int32(self, call: ast.Call, value: ast.expr) -> bool:
        """``value.long()`` whose values are bounded by a tensor's size, so computing it as int32 (what Trn1
        does with int64) cannot overflow: a boolean made 0/1 (``(ids != pad).long()``, ``mask.ne(0).long()``), a
        count of one (``(ids != pad).sum(-1).long()``), or lengths whose maximum the same def uses as a tensor's
        extent (``lengths = ....long()`` then ``torch.arange(lengths.max())``: every value is at most a length the
        code materialises), or the index argument of an op that requires int64 indices (``x.scatter(-1,
        idx.long(), v)``, ``gather``, ``index_select``): an index past the indexed dimension is an error, so its
        values are below that size, or a random draw below a count (``torch.randint(0, self.num_timesteps, (b,))``,
        ``int_ranges.bounded_draw``). Any other ``.long()``, such as indices computed from data, stays a finding."""
        if _is_boolean(value) or _counts_booleans(value) or bounded_draw(value, self.dotted):
            return True
        if self.def_node is None:
            return False
        for sub in walk(self.def_node):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _INDEX_OPS:
                at = 2 if self.dotted(sub.func.value) == "torch" else 1  # torch.gather(x, dim, i) / x.gather(dim, i)
                if (len(sub.args) > at and sub.args[at] is call) or any(
                    k.arg == "index" and k.value is call for k in sub.keywords
                ):
                    return True
        names = {
            t.id
            for a in walk(self.def_node)
            if isinstance(a, (ast.Assign, ast.AnnAssign)) and a.value is call
            for t in _targets(a)
            if isinstance(t, ast.Name)
        }
        if not names:
            return False
        for sub in walk(self.def_node):
            if isinstance(sub, ast.Call) and self.dotted(sub.func) == "torch.arange":
                ends = [*sub.args[:1], *(k.value for k in sub.keywords if k.arg == "end")]
                if len(sub.args) <= 1 and any(_extent_of(e) in names for e in ends):
                    return True
        return False

    def _amp(self, node: ast.Call, name: str) -> None:
        cands: list[ast.expr] = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "device_type"]
        for c in cands:
            if isinstance(c, ast.Constant) and c.value == "cuda":
                self._consumed.add(id(c))
                self.add("amp-cuda", node.lineno, f'{name}("cuda")')

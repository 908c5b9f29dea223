"""Training-path hazards read from a whole Python file (rules in ``rules/train_rules.py``): custom autograd ops on
torch internals, double backward, explicit pinning, TorchScript on the device, manual float16 casts, sizes read back
from tensors into shapes, numpy arrays moved to the device and cast there per call, and a pretrained encoder run
inside the training loop.

Its own pass (not ``PyVisitor``): each rule needs a def's or a class's whole body (a gate function, the loop around
a call, the assignment of a name), which the pruned visitor does not parse. A cheap byte check per rule decides
whether the file is parsed at all."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.branch_tests import _asks_cuda_device
from accelpilot.porting.scan.cuda_precision import keyed_precision
from accelpilot.porting.scan.grad_calls import grad_calls
from accelpilot.porting.scan.nodes import dotted as _dotted
from accelpilot.porting.scan.padding import collator_pads
from accelpilot.porting.scan.patterns import SCALER_STATE, RawFinding
from accelpilot.porting.scan.post_kit import _tree
from accelpilot.porting.scan.size_readbacks import _args, _is_dtype, size_readbacks
from accelpilot.porting.scan.sparse import sparse_lines

_FP16_WORDS: tuple[bytes, ...] = (
    b".half()",
    b".to(torch.float16)",
    b".to(dtype=torch.float16)",
    b"float16 if",
    b"half if",
)
_FP16_WORDS += (b"else torch.float16", b"else torch.half")
_ASSIGN = re.compile(rb"[ \t]*\w+[ \t]*=[^=]")
_UNPACK = re.compile(rb"[ \t]*\w+[ \t]*,[\w \t,]*=[^=]")
_MOVED = re.compile(rb"[^\n]*from_numpy\([^\n]*\.to\(")
_INT_READ = (b".ceil()", b".floor()", b".round()", b".tolist()", b".to(torch.int32)", b".to(torch.int64)")


def _on_a_line(data: bytes, words: tuple[bytes, ...], line: re.Pattern[bytes]) -> bool:
    """Some line holding one of ``words`` starts as ``line`` says (an assignment, a tuple unpacked)."""
    for w in words:
        i = data.find(w)
        while i != -1:
            start = data.rfind(b"\n", 0, i) + 1
            if line.match(data, start, i):
                return True
            i = data.find(w, i + len(w))
    return False


def _worth_parsing(data: bytes) -> set[str]:
    """The rules whose byte check passes, literal words first: a file that none passes is not parsed, and a parsed
    file runs only these rules' walks (a model library's files hold float16 and int64 everywhere, and a parse and
    walks per file would halve the scan's speed)."""
    gates = {
        "private-torch-op": (b"_C." in data or b"ops.aten" in data) and b"Function" in data,
        "double-backward": b"create_graph" in data,
        "pin-memory-call": b".pin_memory()" in data or b"pin_memory=True" in data,
        "torchscript-on-device": b"jit.load" in data or b"jit.script" in data,
        "float16-manual": any(w in data for w in _FP16_WORDS),
        "size-readback": _on_a_line(data, (b"random_(", b"randint("), _ASSIGN)  # a slice bound drawn at random
        or ((b"pad(" in data or b"narrow(" in data) and _on_a_line(data, _INT_READ, _UNPACK)),  # a tuple of ints
        "host-array-to-device": b"from_numpy(" in data and _on_a_line(data, (b".float()", b".double()"), _MOVED),
        "pretrained-encoder-in-loop": b".encode(" in data and _on_a_line(data, (b".from_pretrained(",), _ASSIGN),
        "dynamic-padding": b"pad_sequence(" in data and b"ollat" in data,  # a collator/collate_fn padding a batch
        "device-augmentation": b"Mixup(" in data and b"timm" in data,
        "model-ema-per-step": b"ModelEma" in data and b"timm" in data,
        "host-solver-in-step": b"linear_sum_assignment(" in data and b"torch" in data,
        "sparse-tensor": b"to_sparse" in data
        or b"sparse_coo_tensor(" in data
        or b"sparse_csr_tensor(" in data
        or (b"sparse=True" in data and b"mbedding" in data)  # nn.EmbeddingBag(..., sparse=True)
        or b"torch.sparse." in data  # the legacy ``torch.sparse.FloatTensor(...)``, ``torch.sparse.mm``
        or b"spmm(" in data,
        "growing-sequence": _CACHE_SLICE.search(data) is not None,
        "fp8-matmul": b"_scaled_mm(" in data,
        "scaler-state": b"state_dict()[" in data and b"scale" in data,
        "partial-last-batch": b"DataLoader(" in data,
        "grad-in-step": b"autograd.grad(" in data,
        "recurrent-layer": any(w in data for w in _RNN_WORDS) and (b"nn." in data or b"torch.nn import" in data),
        # a CUDA question, a 16-bit name and an fp32 name in one file (a choice between them)
        "precision-keyed-on-cuda": any(w in data for w in _ASKS_CUDA)
        and any(w in data for w in (b"bf16", b"bfloat16", b"float16"))
        and any(w in data for w in (b"32", b"float\n", b"float,", b"float)")),
    }
    return {r for r, hit in gates.items() if hit}


_ALIAS = re.compile(rb"^[ \t]*import[ \t]+torch[ \t]+as[ \t]+(\w+)", re.M)
_RNN = frozenset({"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"})
_RNN_WORDS = tuple(f"{n}(".encode() for n in _RNN)
_ASKS_CUDA = (b"cuda.is_available()", b"is_bf16_supported", b"get_device_capability")


def _torch_rnn(d: str, data: bytes) -> bool:
    """``nn.LSTM(...)``/``torch.nn.GRU(...)``, or a bare ``LSTM(...)`` the file imports from ``torch.nn``."""
    head, _, last = d.rpartition(".")
    if last not in _RNN:
        return False
    return head in ("nn", "torch.nn") or (
        not head and re.search(rb"from[ \t]+torch\.nn[ \t]+import[^\n]*\b" + last.encode() + rb"\b", data) is not None
    )


_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)

# How a private-op Function's file is reached (findings.py reads these contexts).
VERSION_GATED = "version-gated-double-backward"


def train_hazards(data: bytes) -> list[RawFinding]:
    """The findings of the training-path rules in one Python source (none when no rule's bytes are there)."""
    rules = _worth_parsing(data)
    if not rules:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    steps: list[RawFinding] = [
        (rule, ln, msg, lines[ln - 1] if 0 < ln <= len(lines) else "", None, None)
        for rule, ln, msg in _library_steps(data, rules)
    ]
    steps += [
        ("fp8-matmul", ln, "torch._scaled_mm: an FP8 GEMM", lines[ln - 1], None, None)
        for ln in _fp8_lines(lines)
        if "fp8-matmul" in rules
    ]
    steps += [
        (
            "amp-cuda",
            ln,
            f"{SCALER_STATE} read as {name}.state_dict()['scale'] (a CUDA GradScaler off CUDA: KeyError)",
            text,
            None,
            None,
        )
        for ln, name, text in _scaler_reads(lines)
        if "scaler-state" in rules
    ]
    rules -= {*_LIBRARY_STEPS, "fp8-matmul", "scaler-state"}
    if not rules:
        return steps  # read from the bytes: no parse
    try:
        tree = _tree(data)
    except SyntaxError:
        return steps
    torch_names = {"torch", *(m.decode() for m in _ALIAS.findall(data))}
    out: list[RawFinding] = list(steps)

    def add(rule: str, node: ast.AST, msg: str, subject: str | None = None, ctx: str | None = None) -> None:
        ln = getattr(node, "lineno", 0)
        snip = lines[ln - 1] if 0 < ln <= len(lines) else ""
        out.append((rule, ln, msg, snip, subject, ctx))

    if "grad-in-step" in rules:
        for call, rule, msg in grad_calls(tree):
            add(rule, call, msg)
    if "precision-keyed-on-cuda" in rules:
        for node, msg in keyed_precision(tree):
            add("precision-keyed-on-cuda", node, msg[:160])
    if "private-torch-op" in rules:
        for node, msg, ctx in _private_ops(tree, torch_names):
            add("private-torch-op", node, msg, ctx=ctx)
    if "size-readback" in rules:
        for fn in (n for n in ast.walk(tree) if isinstance(n, _FUNC)):
            for node, msg in size_readbacks(fn, torch_names):
                add("size-readback", node, msg, subject=f"{fn.name}:{fn.lineno}")
    if "dynamic-padding" in rules:
        for node, where in collator_pads(tree):
            add("dynamic-padding", node, f"pad_sequence in {where}: each batch padded to its longest sample")
    if "sparse-tensor" in rules:
        for node, msg, subject in sparse_lines(tree):
            add("sparse-tensor", node, msg, subject=subject)
    if "growing-sequence" in rules:
        for node, fn in _cache_reads(tree):
            text = ast.unparse(node)[:80]
            add(
                "growing-sequence",
                node,
                f"KV cache read up to a position that grows each decode step ({text})",
                subject=f"{fn.name}:{fn.lineno}",
            )
    pretrained = _pretrained_names(tree) if "pretrained-encoder-in-loop" in rules else set()
    loaders = _torch_loaders(data) if "partial-last-batch" in rules else set()
    if not rules - {"private-torch-op", "size-readback", "dynamic-padding", "sparse-tensor", "growing-sequence"}:
        return out
    for node in ast.walk(tree):
        if isinstance(node, _FUNC) and "torchscript-on-device" in rules:
            # VITS's ``@torch.jit.script def fused_add_tanh_sigmoid_multiply``: the TorchScript interpreter runs it
            scripted = [x for x in node.decorator_list if (_dotted(x) or "").endswith("jit.script")]
            if scripted:
                add("torchscript-on-device", scripted[0], f"@{_dotted(scripted[0])} def {node.name}")
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        d = _dotted(f)
        if "pin-memory-call" in rules and _kw_constant_true(node, "pin_memory") and not _under_cuda_test(tree, node):
            # torch 2.13's DataLoader pins through the current accelerator when one is present (dataloader.py's
            # ``_pin_memory_device = current_accelerator().type``): on a Trainium host that is the neuron backend
            add("pin-memory-call", node, f"{d or 'a loader'}(pin_memory=True)")
        loader = "partial-last-batch" in rules and d is not None and d in loaders
        if loader and (size := _partial_batches(node)) is not None:
            add("partial-last-batch", node, f"{d}(batch_size={size}) without drop_last: a smaller last batch")
        if "recurrent-layer" in rules and d is not None and _torch_rnn(d, data):
            add("recurrent-layer", node, f"{d}(...)")
        if d is not None and d.rsplit(".", 1)[-1] == "grad" and _kw_true(node, "create_graph"):
            add("double-backward", node, f"{d}(create_graph=True)")
        if isinstance(f, ast.Attribute):
            if f.attr == "pin_memory" and not node.args and not node.keywords:
                if not _under_cuda_test(tree, node):
                    add("pin-memory-call", node, ".pin_memory()")
            elif f.attr == "half" and not node.args and not node.keywords:
                add("float16-manual", node, ".half()")
            elif f.attr == "to" and any(_is_dtype(a, torch_names, "float16") for a in _args(node)):
                add("float16-manual", node, ".to(torch.float16)")
            elif f.attr == "encode" and isinstance(f.value, ast.Name) and f.value.id in pretrained:
                if _in_loop(tree, node):
                    add("pretrained-encoder-in-loop", node, f"{f.value.id}.encode(...) inside the loop")
            elif f.attr in ("float", "double") and _numpy_moved(f.value):
                add("host-array-to-device", node, f"from_numpy(...).to(device) then .{f.attr}()")
        if d is not None and d.endswith("jit.load") and d.split(".")[0] in torch_names | {"jit"}:
            add("torchscript-on-device", node, f"{d}(...)")
    for node in ast.walk(tree) if "float16-manual" in rules else ():
        if isinstance(node, ast.IfExp) and (
            _is_dtype(node.body, torch_names, "float16") or _is_dtype(node.orelse, torch_names, "float16")
        ):
            add("float16-manual", node, "float16 chosen per layer")
    return out


_DATA_ALIAS = re.compile(
    rb"(?:from[ \t]+torch\.utils[ \t]+import[ \t]+data|import[ \t]+torch\.utils\.data)[ \t]+as[ \t]+(\w+)"
)


def _torch_loaders(data: bytes) -> set[str]:
    """How the source names torch's ``DataLoader`` (``torch.utils.data.DataLoader``, ``DataLoader`` when imported
    from torch, an alias's ``data_utils.DataLoader``): a class of the repository's own with that name (DLRM's
    ``data_loader_terabyte.DataLoader``) batches as it chooses."""
    out = {"torch.utils.data.DataLoader"}
    if re.search(rb"from[ \t]+torch\.utils\.data(?:\.dataloader)?[ \t]+import[^\n]*\bDataLoader\b", data):
        out.add("DataLoader")
    if re.search(rb"from[ \t]+torch\.utils[ \t]+import[ \t]+data\b", data):
        out.add("data.DataLoader")
    out |= {f"{m.decode()}.DataLoader" for m in _DATA_ALIAS.findall(data)}
    return out


# A dataset named for evaluation: ``test_set``, ``val_dataset``, ``self.eval_ds``, ``query_data``.
_EVAL_SET = re.compile(r"(?i)(?:^|[^a-z])(?:val|valid|validation|test|eval|query|gallery)(?:[^a-z]|set|data|$)")


def _partial_batches(node: ast.Call) -> str | None:
    """The batch size of a ``DataLoader(...)`` over a map-style dataset (``shuffle`` or a ``sampler`` given) or an
    evaluation set (named so) whose last batch of a pass is smaller (a batch size other than 1 or None, no
    ``drop_last`` and no ``batch_sampler`` deciding it), or None. A ``drop_last`` given a value is the caller's
    decision (``drop_last=is_train``), except ``drop_last=False`` itself: the caller keeps the smaller last batch
    (DeiT's and MAE's evaluation loaders), and a comparison in a builder of every loader (``drop_last=mode ==
    "train"``), false for the evaluation loader."""
    kws = {k.arg: k.value for k in node.keywords}
    drop = kws.get("drop_last")
    # ``drop_last=mode == "train"`` (Pointnet2_PyTorch's one loader builder): the evaluation loader keeps it too
    kept = (isinstance(drop, ast.Constant) and drop.value is False) or isinstance(drop, ast.Compare)
    if (drop is not None and not kept) or "batch_sampler" in kws or None in kws:
        return None
    shuffle = kws.get("shuffle", node.args[2] if len(node.args) > 2 else None)
    dataset = kws.get("dataset", node.args[0] if node.args else None)
    evaluated = dataset is not None and _EVAL_SET.search(ast.unparse(dataset)) is not None
    unordered = shuffle is None or (isinstance(shuffle, ast.Constant) and not shuffle.value)
    if unordered and "sampler" not in kws and not evaluated:
        # only a map-style dataset, or a finite stream, has a last batch: an IterableDataset may stream forever
        # (llama2.c's PretokDataset), and DataLoader refuses ``shuffle=True`` or a ``sampler`` for one, so either
        # says map-style; an evaluation set (RepDistiller's ``DataLoader(test_set, batch_size=..., shuffle=False)``)
        # ends, whatever its kind
        return None
    size = kws.get("batch_size", node.args[1] if len(node.args) > 1 else None)
    if size is None or (isinstance(size, ast.Constant) and size.value in (1, None)):
        return None
    return ast.unparse(size)[:40]


# ``self.cache_k[:bsz, : start_pos + seqlen]``: a cache attribute sliced up to a sum (Llama's decode).
_CACHE_SLICE = re.compile(rb"self\.\w*cache\w*\[[^\]\n]*:\s*\w+\s*\+")


def _cache_reads(tree: ast.Module) -> list[tuple[ast.Subscript, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Reads of a ``self.*cache*`` attribute sliced up to ``a + b`` (a position plus the new tokens' count) in a
    method: the keys/values attended to grow by the step's tokens every decode step, a new shape each step (a
    write of the step's slice, ``cache[:, p : p + n] = x``, keeps the cache's shape and is not one)."""
    out: list[tuple[ast.Subscript, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, _FUNC)):
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)):
                continue
            v = node.value
            if not (isinstance(v, ast.Attribute) and "cache" in v.attr and isinstance(v.value, ast.Name)):
                continue
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(
                isinstance(p, ast.Slice) and isinstance(p.upper, ast.BinOp) and isinstance(p.upper.op, ast.Add)
                for p in parts
            ):
                out.append((node, fn))
    return out


# Library calls that put per-step work on the training path: (module prefix the name is imported from, message).
_LIBRARY_STEPS = {
    "device-augmentation": ({"Mixup": "timm."}, "timm Mixup/CutMix on the device batch every step"),
    "model-ema-per-step": (
        {"ModelEma": "timm.", "ModelEmaV2": "timm."},
        "timm model EMA: a Python loop over the state dict after every optimizer step",
    ),
    "host-solver-in-step": (
        {"linear_sum_assignment": "scipy."},
        "scipy's Hungarian solver on the host: the cost matrix is copied from the device every call",
    ),
}


_SCALED_MM = re.compile(r"\b_scaled_mm\(")


def _fp8_lines(lines: list[str]) -> list[int]:
    """The lines that call ``torch._scaled_mm`` (modded-nanogpt's FP8 lm_head and MLP matmuls), comments and
    ``def`` lines aside: read from the text, no parse."""
    return [
        n for n, text in enumerate(lines, 1) if _SCALED_MM.search(text) and not text.lstrip().startswith(("#", "def "))
    ]


_SCALER_READ = re.compile(r"\b(\w*scaler\w*)\.state_dict\(\)\[\s*['\"]scale['\"]\s*\]", re.I)


def _scaler_reads(lines: list[str]) -> list[tuple[int, str, str]]:
    """(line, scaler name, text) of each ``<scaler>.state_dict()["scale"]`` read, comments aside: from the text."""
    return [
        (n, m.group(1), text)
        for n, text in enumerate(lines, 1)
        if (m := _SCALER_READ.search(text)) is not None and not text.lstrip().startswith("#")
    ]


def _library_steps(data: bytes, rules: set[str]) -> list[tuple[str, int, str]]:
    """(rule, line, message) of each call of a name ``_LIBRARY_STEPS`` lists, imported from its library (``from
    timm.data import Mixup``), read from the bytes: an import line naming it, then each line that calls it (not its
    ``def``, not a method of the same name)."""
    out: list[tuple[str, int, str]] = []
    for rule, (names, msg) in _LIBRARY_STEPS.items():
        if rule not in rules:
            continue
        for name, prefix in names.items():
            imported = re.compile(
                rb"^[ \t]*from[ \t]+%s[\w.]*[ \t]+import[^\n]*\b%s\b"
                % (re.escape(prefix.rstrip(".").encode()), name.encode()),
                re.M,
            )
            if imported.search(data) is None:
                continue
            call = re.compile(rb"(?<![\w.])%s[ \t]*\(" % name.encode())
            for m in call.finditer(data):
                start = data.rfind(b"\n", 0, m.start()) + 1
                head = data[start : m.start()].lstrip()
                if head.startswith((b"def ", b"class ", b"#")):
                    continue
                out.append((rule, data.count(b"\n", 0, m.start()) + 1, msg))
    return sorted(out, key=lambda r: r[1])


def _kw_constant_true(call: ast.Call, name: str) -> bool:
    """``name=True`` itself (``pin_memory=torch.cuda.is_available()`` is False on the target)."""
    return any(k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords)


def _kw_true(call: ast.Call, name: str) -> bool:
    return any(
        k.arg == name and not (isinstance(k.value, ast.Constant) and k.value.value in (False, None))
        for k in call.keywords
    )


def _private_ops(tree: ast.Module, torch_names: set[str]) -> list[tuple[ast.AST, str, str | None]]:
    """Calls of torch internals inside ``torch.autograd.Function`` subclasses, with the context their file's gate
    gives: ``fallback:<stock op>`` when the gate sends non-CUDA tensors to the stock op, ``VERSION_GATED`` when only
    a torch version decides and the op supplies a double backward (its backward applies another Function)."""
    functions = [
        c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and any(_is_function_base(b) for b in c.bases)
    ]
    hits: list[tuple[ast.AST, str]] = []
    for c in functions:
        for n in ast.walk(c):
            if isinstance(n, ast.Call) and (d := _dotted(n.func)) is not None:
                root, _, rest = d.partition(".")
                if root in torch_names and rest.startswith(("_C.", "ops.aten.")):
                    hits.append((n, f"{d}(...) in autograd Function {c.name}"))
    if not hits:
        return []
    stock = _stock_fallback(tree)
    ctx: str | None = None
    if stock is not None and _tests_cuda_device(tree):
        ctx = f"fallback:{stock}"
    elif _tests_torch_version(tree) and any(_double_backward_supplied(c) for c in functions):
        ctx = VERSION_GATED
    return [(n, msg, ctx) for n, msg in hits]


def _is_function_base(b: ast.expr) -> bool:
    d = _dotted(b)
    return d is not None and (d == "Function" or d.endswith("autograd.Function"))


def _stock_fallback(tree: ast.Module) -> str | None:
    """``if gate(...): return Op.apply(...)`` then ``return <stock>(...)``: the stock call a wrapper falls back to."""
    for fn in (n for n in ast.walk(tree) if isinstance(n, _FUNC)):
        body = fn.body
        for i, st in enumerate(body[:-1]):
            nxt = body[i + 1]
            if (
                isinstance(st, ast.If)
                and any(isinstance(s, ast.Return) and _applies(s.value) for s in st.body)
                and isinstance(nxt, ast.Return)
                and isinstance(nxt.value, ast.Call)
                and (d := _dotted(nxt.value.func)) is not None
            ):
                return d
    return None


def _applies(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply"


def _tests_cuda_device(tree: ast.Module) -> bool:
    """A comparison of ``x.device.type`` with ``"cuda"``, or ``x.is_cuda``, anywhere in the file."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == "is_cuda":
            return True
        if isinstance(n, ast.Compare) and any(
            isinstance(x, ast.Constant) and x.value == "cuda" for x in (n.left, *n.comparators)
        ):
            sides = [n.left, *n.comparators]
            if any(isinstance(x, ast.Attribute) and x.attr == "type" for x in sides):
                return True
    return False


def _tests_torch_version(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "__version__" for n in ast.walk(tree))


def _double_backward_supplied(cls: ast.ClassDef) -> bool:
    return any(
        isinstance(f, _FUNC) and f.name == "backward" and any(_applies(n) for n in ast.walk(f)) for f in cls.body
    )


def _pretrained_names(tree: ast.Module) -> set[str]:
    """Names bound to ``X.from_pretrained(...)`` (possibly ``.to(device)`` after it); not a tokenizer (a name or a
    class naming one: nanochat's ``tokenizer = RustBPETokenizer.from_pretrained("gpt2")``), whose ``encode`` runs
    on the host."""
    names: set[str] = set()
    for st in ast.walk(tree):
        if isinstance(st, ast.Assign) and any(
            isinstance(c, ast.Call)
            and isinstance(c.func, ast.Attribute)
            and c.func.attr == "from_pretrained"
            and "tokeniz" not in ast.unparse(c.func.value).lower()
            for c in ast.walk(st.value)
        ):
            names |= {t.id for t in st.targets if isinstance(t, ast.Name) and "tokeniz" not in t.id.lower()}
    return names


def _under_cuda_test(tree: ast.Module, target: ast.AST) -> bool:
    """``target`` runs only in the body of ``if device_type == "cuda":`` (``x.is_cuda``, ``cuda.is_available()``):
    the target takes the other branch, so the call is CUDA-only code, not the target's."""
    return any(
        isinstance(node, ast.If)
        and _asks_cuda_device(node.test)
        and any(n is target for st in node.body for n in ast.walk(st))
        for node in ast.walk(tree)
    )


def _in_loop(tree: ast.Module, target: ast.AST) -> bool:
    for loop in ast.walk(tree):
        if isinstance(loop, (ast.For, ast.While, ast.AsyncFor)) and any(n is target for n in ast.walk(loop)):
            return True
    return False


def _numpy_moved(node: ast.AST) -> bool:
    """``from_numpy(a).to(...)`` somewhere down the receiver chain (indexing between allowed)."""
    moved = False
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "to":
                moved = True
            elif node.func.attr == "from_numpy":
                return moved
        node = node.func if isinstance(node, ast.Call) else node.value
    return False

"""Checkpoints the torch TorchNeuron runs on will not unpickle (issue 27: held-out public repositories).

From torch 2.6 ``torch.load`` defaults to ``weights_only=True``: tensors, numbers, strings and the containers of them
load; any other pickled object raises ``UnpicklingError`` ("Unsupported global"). Code written for torch 1.x saves
objects into its checkpoints without a second thought: the run's ``argparse.Namespace`` (``"args": args``), a config
object (a yacs ``CfgNode``), a model class, and a PyTorch Lightning checkpoint pickles its callbacks (keyed by their
class before Lightning 1.5) and its hyper-parameters. A load of such a checkpoint with no ``weights_only=`` stops on
the target's torch.

The evidence is read, not guessed: a dict the repository saves (``torch.save``, ``save_on_master``) with an entry
whose value is such an object, and a ``torch.load`` whose result is read by a key of that dict; or, in a repository
that trains with Lightning, a load read as a Lightning checkpoint (``"state_dict"`` with no such dict of the
repository's own, ``"global_step"``, ``"hyper_parameters"``). A plain state dict (a pretrained download, nanoGPT's
checkpoint of tensors, numbers and a dict config) loads and is no item. The load blocks on an entry point's own lines
outside a CLI option's branch; under ``if args.resume:`` it blocks when that option is given.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable, Mapping

from accelpilot.porting.findings import Finding, context_of_path
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.call_reach import _cuda_test
from accelpilot.porting.scan.literals import is_main_test
from accelpilot.porting.scan.units import parse_unit, units

RULE = "checkpoint-weights-only"
_LOAD = b"torch.load("
_LIGHTNING = re.compile(rb"^\s*(?:import|from)\s+(?:pytorch_lightning|lightning)\b", re.M)
# A saved dict's entry whose value is a name that usually holds an object (``"args": args``, ``'config': config``);
# ``vars(args)``, ``args.__dict__`` and ``config.to_dict()`` are plain data and do not match.
_OBJ_ENTRY = re.compile(
    rb"""['"]\w+['"]\s*:\s*(?:self\.)?(?:args|opt|opts|cfg|config|hparams|hps|klass|model_class|\w*model\w*|net|"""
    rb"""encoder|decoder|\w*optimizer\w*)"""
    rb"""\b(?!\s*[.\[(])"""
)
_WHOLE_BYTES = 64 * 1024
_SAVES = (b"save(", b"save_on_master(", b"save_checkpoint(", b"save_model(")
_OBJ_NAMES = frozenset({"args", "opt", "opts", "cfg", "config", "hparams", "hps", "klass", "model_class"})
_CONFIG_NAMES = frozenset({"cfg", "config", "hparams", "hps"})
_CONFIG_BUILDERS = frozenset(
    {"CfgNode", "get_cfg", "get_config", "EasyDict", "edict", "AttrDict", "Namespace", "parse_args", "Config"}
)
# Bindings that make a name plain data: a dict or list literal, ``vars(args)``, ``dict(...)``, ``asdict(...)``.
_PLAIN_CALLS = frozenset({"dict", "vars", "asdict", "to_container", "to_dict", "deepcopy", "copy"})
_LIGHTNING_ONLY = frozenset({"global_step", "hyper_parameters", "pytorch-lightning_version", "callbacks"})
_OPTION_ROOTS = frozenset({"args", "opt", "opts", "cfg", "config", "flags", "FLAGS", "hparams"})


def _plain_binding(tree: ast.AST, name: str) -> bool:
    """Every assignment of ``name`` in the file binds plain data (nanoGPT's ``config = {k: globals()[k] ...}``)."""
    values = [
        a.value
        for a in ast.walk(tree)
        if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
    ]
    if not values:
        return False  # a parameter (``def main(args)``) or a global from elsewhere: the Namespace it usually is

    def plain(v: ast.expr) -> bool:
        if isinstance(v, (ast.Dict, ast.DictComp, ast.List, ast.Constant)):
            return True
        f = v.func if isinstance(v, ast.Call) else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("yaml", "json"):
            return True  # ``yaml.load(open(args.config))`` (BLIP): dicts and lists; OmegaConf.load is a DictConfig
        return (isinstance(f, ast.Name) and f.id in _PLAIN_CALLS) or (
            isinstance(f, ast.Attribute) and f.attr in _PLAIN_CALLS
        )

    return all(plain(v) for v in values)


def _built_object(tree: ast.AST, name: str) -> bool:
    """``config`` bound from a known config-object builder (a yacs ``CfgNode``, ``OmegaConf.load``, an
    ``EasyDict``), or a parameter (swin's ``save_checkpoint(config, ...)``: unknown, the object it usually is)."""
    values = [
        a.value
        for a in ast.walk(tree)
        if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
    ]
    if not values:
        return True
    for v in values:
        f = v.func if isinstance(v, ast.Call) else None
        called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if called in _CONFIG_BUILDERS or (isinstance(f, ast.Attribute) and _root(f) == "OmegaConf"):
            return True
    return False


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _whole_module(value: ast.expr, tree: ast.AST) -> bool:
    """WaveGlow's ``{'model': model_for_saving, ...}``: a bare name of a model, not its ``state_dict()``, pickles
    the module class; a name bound from ``.state_dict()`` (or a dict) is tensors. An encoder, decoder or optimizer
    handed in as a parameter and saved bare (the captioning tutorial's ``save_checkpoint(..., encoder, decoder,
    encoder_optimizer, ...)``) pickles its class too."""
    if not isinstance(value, ast.Name):
        return False
    name = value.id.lower()
    if not ("model" in name or "optimizer" in name or value.id in ("net", "module", "encoder", "decoder")):
        return False
    values = [
        a.value
        for a in ast.walk(tree)
        if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in a.targets)
    ]
    if "optimizer" in name or value.id in ("encoder", "decoder"):
        # only as a parameter, the caller's object (``optimizer_state = state['optimizer_state']`` is a state dict)
        return not values and any(isinstance(a, ast.arg) and a.arg == value.id for a in ast.walk(tree))

    def tensors(v: ast.expr) -> bool:
        f = v.func if isinstance(v, ast.Call) else None
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return isinstance(v, (ast.Dict, ast.DictComp)) or "state_dict" in name or name in _PLAIN_CALLS

    return bool(values) and not any(tensors(v) for v in values)


def _object_entry(value: ast.expr, tree: ast.AST) -> bool:
    if _whole_module(value, tree):
        return True
    if isinstance(value, ast.Name) and value.id in _CONFIG_NAMES:
        # a config is mostly a dict (k-diffusion's ``K.config.load_config`` reads JSON): an object only when a
        # config-object builder made it
        return _built_object(tree, value.id) and not _plain_binding(tree, value.id)
    if isinstance(value, ast.Name):
        return value.id in _OBJ_NAMES and not _plain_binding(tree, value.id)
    return (
        isinstance(value, ast.Attribute)
        and value.attr in _OBJ_NAMES
        and isinstance(value.value, ast.Name)
        and value.value.id == "self"
    )


def _saved_objects(rel: str, tree: ast.AST) -> dict[str, str]:
    """Keys of the dicts this file builds with an object entry, each with where (``train.py:318 "args"``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        objs = [
            k.value
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str) and _object_entry(v, tree)
        ]
        if not objs:
            continue
        where = f"{rel}:{node.lineno} {objs[0]!r}"
        for k in node.keys:
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                out.setdefault(k.value, where)
    return out


def _is_load(node: ast.AST) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    return (
        isinstance(node, ast.Call)
        and isinstance(f, ast.Attribute)
        and f.attr == "load"
        and isinstance(f.value, ast.Name)
        and f.value.id == "torch"
        and not any(k.arg in ("weights_only", None) for k in node.keywords)
    )


def _weights_only_load(node: ast.AST) -> bool:
    """A ``torch.load`` that torch >= 2.6 runs with ``weights_only=True``: not one that passes a ``pickle_module``
    (``pickle_module=dill``, diffusion_policy's workspaces), for which torch keeps ``weights_only=False``."""
    return _is_load(node) and not any(k.arg == "pickle_module" for k in node.keywords)  # type: ignore[attr-defined]


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keys_read(load: ast.Call, parents: Mapping[int, ast.AST], scope: ast.AST) -> set[str]:
    """The string keys the loaded object is read by: ``torch.load(f)["state_dict"]``, or through the name it is
    bound to in its scope (``ckpt["model"]``, ``"global_step" in ckpt``, ``ckpt.get("ema")``)."""
    up = parents.get(id(load))
    if isinstance(up, ast.Subscript) and up.value is load:
        k = _key(up.slice)
        return {k} if k else set()
    if not (isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name)):
        return set()
    name = up.targets[0].id
    out: set[str] = set()
    for n in ast.walk(scope):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name:
            k = _key(n.slice)
        elif isinstance(n, ast.Compare) and any(isinstance(c, ast.Name) and c.id == name for c in n.comparators):
            k = _key(n.left)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("get", "pop")
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == name
            and n.args
        ):
            k = _key(n.args[0])
        else:
            continue
        if k:
            out.add(k)
    return out


def _option(test: ast.expr) -> str | None:
    """The CLI option a branch test reads (``args.resume`` -> ``--resume``), else None."""
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in _OPTION_ROOTS:
            return "--" + n.attr
    return None


def _guard(load: ast.Call, parents: Mapping[int, ast.AST]) -> tuple[str | None, bool]:
    """(the option whose branch holds the load, whether a ``try`` with a handler wraps it)."""
    child: ast.AST = load
    node = parents.get(id(load))
    option = None
    caught = False
    while node is not None:
        if isinstance(node, (ast.If, ast.IfExp)) and child is not node.test and option is None:
            option = _option(node.test) or option
        if isinstance(node, ast.Try) and node.handlers and child in node.body:
            caught = True
        child, node = node, parents.get(id(node))
    return option, caught


def _resumes_own(load: ast.Call, parents: Mapping[int, ast.AST], tree: ast.Module) -> bool:
    """A resume: the load sits under ``if <path>.exists()`` (or ``os.path.exists(<path>)``/``isfile``) of the path
    it loads, and the same file ``torch.save``s to that path. The file is the run's own, written on the device the
    port runs on; a fresh run does not load it."""
    if not load.args:
        return False
    path = ast.unparse(load.args[0])
    child: ast.AST = load
    up = parents.get(id(load))
    while up is not None:
        if isinstance(up, ast.If) and child in up.body and path in _exists_paths(up.test):
            break
        child, up = up, parents.get(id(up))
    else:
        return False
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "save"
        and len(n.args) > 1
        and ast.unparse(n.args[1]) == path
        for n in ast.walk(tree)
    )


def _exists_paths(test: ast.expr) -> set[str]:
    """The paths a test asks to exist: ``p.exists()``, ``os.path.exists(p)``, ``os.path.isfile(p)``."""
    out: set[str] = set()
    for n in ast.walk(test):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in ("exists", "is_file") and not n.args:
                out.add(ast.unparse(n.func.value))
            elif n.func.attr in ("exists", "isfile") and len(n.args) == 1:
                out.add(ast.unparse(n.args[0]))
    return out


def _guarded_calls(scope: ast.AST, tree: ast.Module, parents: Mapping[int, ast.AST]) -> str | None:
    """For a load inside a def: the test of the branch every same-file call of that def sits under (WaveGlow's
    ``if checkpoint_path != "": load_checkpoint(...)``), as ``--option`` or the test's text; None when a call is
    unguarded (latent-diffusion's ``load_model_from_config`` from ``main``) or nothing calls it here."""
    name = getattr(scope, "name", None)
    if name is None:
        return None
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
    ]
    tests: list[str] = []
    for call in calls:
        child: ast.AST = call
        up = parents.get(id(call))
        test = None
        while up is not None and test is None:
            if isinstance(up, ast.If) and child is not up.test and not is_main_test(up.test):
                test = _option(up.test) or ast.unparse(up.test)
            child, up = up, parents.get(id(up))
        if test is None:
            return None
        tests.append(test)
    return tests[0] if tests else None


def _scope_of(load: ast.AST, parents: Mapping[int, ast.AST], tree: ast.Module) -> ast.AST:
    node = parents.get(id(load))
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node = parents.get(id(node))
    return node if node is not None else tree


def _parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError):
        return None


def _load_units(data: bytes) -> ast.Module | None:
    """A small file whole; a large one (a trainer library's) only the blocks holding a ``torch.load`` line."""
    if len(data) < _WHOLE_BYTES:
        return _parse(data)
    lines = [data.count(b"\n", 0, m.start()) + 1 for m in re.finditer(re.escape(_LOAD), data)]
    try:
        return ast.Module(body=[n for u in units(data, lines) for n in parse_unit(data, u).body], type_ignores=[])
    except SyntaxError:
        return _parse(data)


Facts = tuple[bool, bool, dict[str, str]]  # (holds a torch.load, imports Lightning, saved keys -> where)


def checkpoint_facts(rel: str, data: bytes) -> Facts | None:
    """What the pass needs of one source, read in the scan's worker: whether it loads, whether it imports Lightning,
    and the keys of the dicts it saves with an object in them (None: none of these)."""
    load = _LOAD in data
    lightning = b"lightning" in data and _LIGHTNING.search(data) is not None
    saved: dict[str, str] = {}
    # byte gates first: a model library's files pass ``{"config": config}`` as keyword dicts, never saved
    if any(w in data for w in _SAVES) and _OBJ_ENTRY.search(data) is not None and (tree := _parse(data)) is not None:
        saved = _saved_objects(rel, tree)
    return (load, lightning, saved) if load or lightning or saved else None


def checkpoint_loads(
    entries: Mapping[str, str],
    facts: Mapping[str, Facts],
    present: Collection[str],
    read: Callable[[str], bytes | None],
) -> list[Finding]:
    """The ``checkpoint-weights-only`` findings of a tree: each ``torch.load`` (no ``weights_only=``) of a
    checkpoint that holds pickled objects, blocking on an entry point's own unguarded lines."""
    saved: dict[str, str] = {}
    for rel in sorted(facts):
        for k, where in facts[rel][2].items():
            saved.setdefault(k, where)
    lightning = any(f[1] for f in facts.values())
    if not saved and not lightning:
        return []  # nothing the loads could read holds an object: no load is parsed
    loads = [(rel, data) for rel in sorted(facts) if facts[rel][0] and (data := read(rel)) is not None]
    rule = RULES[RULE]
    out: list[Finding] = []
    for rel, data in loads:
        if (tree := _load_units(data)) is None:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not _weights_only_load(node):
                continue
            keys = _keys_read(node, parents, _scope_of(node, parents, tree))
            own = sorted(k for k in keys if k in saved)
            if own:
                holds = f"a checkpoint this repository saves with an object in it ({saved[own[0]]})"
            elif lightning and (keys & _LIGHTNING_ONLY or ("state_dict" in keys and "state_dict" not in saved)):
                holds = "a PyTorch Lightning checkpoint (it pickles its callbacks and hyper-parameters)"
            else:
                continue
            f = Finding.from_rule(
                rule,
                file=rel,
                line=node.lineno,
                message=f"torch.load(...) of {holds}",
                snippet=lines[node.lineno - 1] if node.lineno <= len(lines) else "",
                context=context_of_path(rel, present),
            )
            option, caught = _guard(node, parents)
            if option is None and not caught:
                option = _guarded_calls(_scope_of(node, parents, tree), tree, parents)
            where = f"{rel}:{node.lineno}"
            stops = "torch >= 2.6 (as TorchNeuron's) loads with weights_only=True and raises UnpicklingError"
            if f.context is not None or not f.porting:
                pass  # test, example or benchmark code: listed apart by its context
            elif rel not in entries or caught:
                f.reason = f"blocks when that checkpoint is loaded here ({where}): {stops}"
            elif option is not None:
                given = "is given" if option.startswith("--") else "holds"
                f.reason = f"blocks when `{option}` {given} ({where}): {stops}"
            else:
                f.severity = "blocking"
                f.reason = f"entry point {rel} ({entries[rel]}) loads it: {stops} at {where}"
            out.append(f)
    return out


MAP_RULE = "checkpoint-map-location"
_DEVICE_RULES = frozenset({"cuda-call", "cuda-device-literal"})


def _state_dict_value(value: ast.expr, scope: ast.AST) -> bool:
    """A saved value that holds a ``state_dict()`` not moved to the CPU: the call itself, a dict literal with one,
    or a name the same scope binds to such a value (``state = {"model": model.state_dict()}``)."""
    if isinstance(value, ast.Name):
        bound = [
            a.value
            for a in ast.walk(scope)
            if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in a.targets)
        ]
        return any(_state_dict_value(v, scope) for v in bound if not isinstance(v, ast.Name))
    text = ast.unparse(value)
    return "state_dict()" in text and "cpu" not in text


# One ``torch.save`` of the tree: (``file:line``, the string keys of the dict it saves, whether it saves a state dict
# as the model holds it).
Save = tuple[str, frozenset[str], bool]


def _saved_keys(value: ast.expr, scope: ast.AST) -> frozenset[str]:
    """The string keys of a saved dict literal, or of the dict literal the same scope binds the saved name to
    (diffusion_policy's ``payload = {'cfg': self.cfg, 'state_dicts': dict(), ...}``)."""
    if isinstance(value, ast.Name):
        bound = [
            a.value
            for a in ast.walk(scope)
            if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in a.targets)
        ]
        return frozenset().union(*(_saved_keys(v, scope) for v in bound if isinstance(v, ast.Dict)))
    if isinstance(value, ast.Dict):
        return frozenset(k for k in (_key(k) for k in value.keys if k is not None) if k)
    return frozenset()


def state_saves(sources: Iterable[tuple[str, bytes]]) -> list[Save]:
    """Every ``torch.save`` outside tests and examples, with its dict keys and whether it saves a state dict as the
    model holds it (RAFT's ``torch.save(model.state_dict(), PATH)``, FourCastNet's ``{'model_state':
    model.state_dict(), ...}``; not one moved to the CPU first)."""
    out: list[Save] = []
    for rel, data in sources:
        if b"torch.save(" not in data or context_of_path(rel) is not None:
            continue
        tree = _parse(data)
        if tree is None:
            continue
        parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for node in ast.walk(tree):
            f = node.func if isinstance(node, ast.Call) else None
            if not (isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and f.attr == "save" and node.args):
                continue
            if not (isinstance(f.value, ast.Name) and f.value.id == "torch"):
                continue
            scope = _scope_of(node, parents, tree)
            device = b"state_dict()" in data and _state_dict_value(node.args[0], scope)
            out.append((f"{rel}:{node.lineno}", _saved_keys(node.args[0], scope), device))
    return out


def device_state_save(saves: Iterable[Save], keys: Collection[str] = ()) -> str | None:
    """``file:line`` of the first save of a state dict as the model holds it; with the keys a load reads, among the
    saves of a dict holding all of them when there is one (the checkpoint that load reads: diffusion_policy's
    ``payload['cfg']`` is its workspace's save, not a vendored trainer's ``torch.save(model.state_dict(), ...)``);
    None when every such save moves the tensors to the CPU first or there is none."""
    saves = list(saves)
    matching = [s for s in saves if keys and set(keys) <= s[1]]
    return next((where for where, _, device in matching or saves if device), None)


def _on_cuda_branch(node: ast.AST, parents: Mapping[int, ast.AST]) -> bool:
    """The load sits in the body of an ``if`` whose test asks for CUDA or names it (``use_cuda``,
    ``torch.cuda.is_available()``: ``call_reach._cuda_test``)."""
    child, up = node, parents.get(id(node))
    while up is not None:
        if isinstance(up, ast.If) and child in up.body and _cuda_test(up.test):
            return True
        child, up = up, parents.get(id(up))
    return False


def mark_device_checkpoint_loads(
    findings: list[Finding], entries: Mapping[str, str], sources: Callable[[], Iterable[tuple[str, bytes]]]
) -> None:
    """A ``torch.load`` without ``map_location`` on an entry point's own unguarded lines blocks when the repository
    places its model on CUDA and saves its state dict as the model holds it: such a checkpoint restores its tensors
    on CUDA, and ``torch.load`` raises "Attempting to deserialize object on a CUDA device" on a host without CUDA
    (RAFT's ``demo.py``, FourCastNet's ``inference.py`` loading what ``train.py`` saved)."""
    loads = [
        f
        for f in findings
        if f.rule == MAP_RULE and f.file in entries and f.porting and f.context is None and f.severity != "blocking"
    ]
    if not loads or not any(f.rule in _DEVICE_RULES for f in findings):
        return
    source = dict(sources())
    saves = state_saves(source.items())
    if device_state_save(saves) is None:
        return
    for f in loads:
        tree = _parse(source.get(f.file or "", b""))
        if tree is None:
            continue
        parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_load(n) and n.lineno == f.line), None)
        if node is None or any(k.arg == "map_location" for k in node.keywords) or len(node.args) > 1:
            continue
        option, caught = _guard(node, parents)
        scope = _scope_of(node, parents, tree)
        if option is not None or caught or (scope is not tree and _guarded_calls(scope, tree, parents) is not None):
            continue
        if _on_cuda_branch(node, parents):
            continue  # Wav2Lip's ``if use_cuda: torch.load(path)`` / ``else: torch.load(path, map_location=...)``
        if _resumes_own(node, parents, tree):
            continue  # DreamerV3's ``if (logdir / "latest.pt").exists(): torch.load(logdir / "latest.pt")``
        saved = device_state_save(saves, _keys_read(node, parents, scope))
        if saved is None:
            continue
        f.severity = "blocking"
        f.reason = (
            f"entry point {f.file} ({entries[f.file or '']}) loads a checkpoint without map_location at "
            f"{f.file}:{f.line}, and the repository saves its CUDA model's state dict as it is ({saved}): such a "
            'checkpoint restores its tensors on CUDA, and torch.load raises "Attempting to deserialize object on a '
            'CUDA device" on a host without CUDA'
        )

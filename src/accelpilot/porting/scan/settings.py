"""A configuration setting's value on the default path, and the ``if`` tests it decides (issue 27: "one behind a flag
is 'blocks when FLAG is set' with the flag named").

Trainers read their switches from a config object whose defaults are code and whose values a shipped config file
overrides (GPT-NeoX):

    class NeoXArgsModel:                                    # megatron/neox_arguments/neox_args.py
        rope_fusion: bool = False
    self.rope_fusion = neox_args.rope_fusion                 # megatron/model/transformer.py
    if self.rope_fusion:
        query_layer, key_layer = (fused_apply_rotary_pos_emb_cached(rot, cos, sin) for ...)

    python ./deepy.py train.py -d configs 125M.yml local_setup.yml     # README; 125M.yml: "rope_fusion": false

A setting's value is its code default (a field of a dataclass or of a class named ``*Args``/``*Config``/...; an
``add_argument`` default, ``store_true`` as False), overlaid with the config files of the default command: the first
README command running an entry point whose config files (``.yml``/``.yaml``/``.json`` arguments, under ``-d DIR``
when given) all exist in the tree; a placeholder (``/path/to/configs/my_model.yml``) is no command a user runs as
written. Without such a command, a setting any shipped config file sets is not known. A test of settings is decided
only when every value it needs is known: a local variable, a call or an unknown setting leaves it undecided (the line
keeps its severity).
"""

from __future__ import annotations

import ast
import operator
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from accelpilot.porting.scan.documents import readme_path
from accelpilot.porting.scan.option_guards import options

_UNKNOWN = object()
# The receiver of a setting read: ``neox_args.x``, ``self.neox_args.x``, ``args.x``, ``cfg.x``, ``config.x``, ``opt.x``.
# Not ``params``: ``inference_params.seqlen_offset`` (mamba) is decoding state in a dataclass, not a setting.
_CONFIG_NAME = re.compile(r"(?i)(?:^|_)(?:args|arguments|cfg|conf|config|configs|opt|opts|hparams|flags)$")
_CONFIG_CLASS = re.compile(r"(?:Args|Arguments|Config|Configs|Params|Options|Settings|HParams)$")
_CONFIG_SUFFIX = (".yml", ".yaml", ".json")
_DIR_FLAGS = ("-d", "--conf_dir", "--config_dir", "--conf-dir", "--config-dir")
_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_MAX_CONFIG_BYTES = 200_000


def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else _UNKNOWN
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return _UNKNOWN


def _merge(out: dict[str, Any], name: str, value: Any) -> None:
    """Two different defaults for one name: not known (two config classes share a field name)."""
    if name in out and out[name] is not value and out[name] != value:
        out[name] = _UNKNOWN
    else:
        out[name] = value


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any("dataclass" in ast.unparse(d) for d in node.decorator_list)


def code_defaults(trees: Iterable[ast.Module]) -> dict[str, Any]:
    """Setting name -> its default in code (``_UNKNOWN`` where two declarations disagree or it is not a literal)."""
    out: dict[str, Any] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and (_is_dataclass(node) or _CONFIG_CLASS.search(node.name)):
                for st in node.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
                        _merge(out, st.target.id, _literal(st.value))
        for dest, (_, value, known) in options(tree).items():  # ``add_argument``/``click.option`` defaults
            _merge(out, dest, value if known else _UNKNOWN)
    return out


def _config_tokens(line: str) -> tuple[list[str], str | None]:
    """The config-file arguments of a command line and its ``-d DIR``."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    folder = next((words[k + 1] for k, w in enumerate(words[:-1]) if w in _DIR_FLAGS), None)
    return [w for w in words if w.endswith(_CONFIG_SUFFIX) and not w.startswith("-")], folder


def _resolve(token: str, folder: str | None, present: set[str], by_name: Mapping[str, list[str]]) -> str | None:
    for cand in (posixpath.join(folder, token) if folder else None, token):
        if cand is not None:
            rel = posixpath.normpath(cand.removeprefix("./"))
            if rel in present:
                return rel
    if "/" not in token.strip("./"):
        hits = by_name.get(token, [])
        return hits[0] if len(hits) == 1 else None
    return None


def default_configs(docs: Iterable[str], entries: Iterable[str], present: set[str]) -> list[str]:
    """The config files of the first README command running an entry point whose config arguments all exist."""
    scripts = {posixpath.basename(e) for e in entries if e.endswith(".py")}
    by_name: dict[str, list[str]] = {}
    for rel in present:
        if rel.endswith(_CONFIG_SUFFIX):
            by_name.setdefault(posixpath.basename(rel), []).append(rel)
    for text in docs:
        for line in text.replace("\\\n", " ").splitlines():
            if not any(s in line for s in scripts) or not line.strip():
                continue
            tokens, folder = _config_tokens(line.strip().strip("`"))
            found = [_resolve(t, folder, present, by_name) for t in tokens]
            if tokens and all(found):
                return [f for f in found if f]
    return []


def _flat(data: Any) -> dict[str, Any]:
    return {str(k).replace("-", "_"): v for k, v in data.items()} if isinstance(data, dict) else {}


def config_values(read: Callable[[str], str | None], files: Iterable[str]) -> dict[str, Any]:
    """Top-level keys of the config files, later files overriding earlier ones."""
    import yaml  # only when a setting decides a guarded kernel (the scan's workers do not pay for the import)

    out: dict[str, Any] = {}
    for rel in files:
        text = read(rel)
        if text is None or len(text) > _MAX_CONFIG_BYTES:
            continue
        try:
            out.update(_flat(yaml.safe_load(text)))
        except yaml.YAMLError:
            continue
    return out


class Settings:
    """Each setting's value on the default path, found when a guard first reads it: only the files that declare
    that name are parsed (transformers declares hundreds of config classes no guard reads)."""

    def __init__(
        self,
        declared: Callable[[str], Iterable[ast.Module]],
        configs: list[str],
        config: Callable[[], dict[str, Any]],
        shipped: Callable[[], dict[str, Any]],
    ) -> None:
        self._declared, self.configs, self._config, self._shipped = declared, configs, config, shipped
        self._values: dict[str, Any] = {}
        self._files: list[dict[str, Any]] = []

    def value(self, name: str) -> Any:
        """The setting's value, or ``_UNKNOWN``."""
        if name not in self._values:
            v = code_defaults(self._declared(name)).get(name, _UNKNOWN)
            if v is not _UNKNOWN:
                if self.configs:
                    v = self._config().get(name, v)
                elif name in self._shipped():
                    v = _UNKNOWN
            self._values[name] = v
        return self._values[name]

    def where(self) -> str:
        return "the defaults" + (" and " + ", ".join(self.configs) if self.configs else "")


def _once(fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    memo: list[dict[str, Any]] = []

    def get() -> dict[str, Any]:
        if not memo:
            memo.append(fn())
        return memo[0]

    return get


def declaration(name: str) -> re.Pattern[bytes]:
    """A field ``name: type = ...`` or an ``add_argument("--name"`` (``-`` or ``_``) in a source's bytes."""
    word = re.escape(name).replace("_", "[-_]").encode()
    return re.compile(rb"(?m)^[ \t]+" + re.escape(name.encode()) + rb"[ \t]*:[^=\n]*=|['\"]--" + word + rb"['\"]")


def load_settings(
    declared: Callable[[str], Iterable[ast.Module]],
    docs: Iterable[str],
    entries: Iterable[str],
    present: set[str],
    read: Callable[[str], str | None],
) -> Settings:
    """Code defaults overlaid with the default command's config files; without those, a setting that some shipped
    config file sets is unknown (which file a user passes is not known). ``declared(name)``: the parsed files that
    may declare ``name``."""
    configs = default_configs(docs, entries, present)
    shipped = sorted(r for r in present if r.endswith(_CONFIG_SUFFIX) and "/" in r)
    return Settings(
        declared,
        configs,
        _once(lambda: config_values(read, configs)),
        _once(lambda: config_values(read, shipped)),
    )


def _receiver(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


class Evaluator:
    """Values of expressions over settings inside one class (``self.x`` read through its ``self.x = ...``)."""

    def __init__(self, settings: Settings, cls: ast.ClassDef | None) -> None:
        self.settings = settings
        self.assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(cls) if cls is not None else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                t = node.targets[0]
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    self.assigned.setdefault(t.attr, []).append(node.value)
        self.used: set[str] = set()

    def value(self, node: ast.expr, depth: int = 0) -> Any:
        if depth > 6:
            return _UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Attribute):
            recv = _receiver(node.value)
            if recv == "self" and node.attr in self.assigned:
                vals = [self.value(v, depth + 1) for v in self.assigned[node.attr]]
                return vals[0] if vals and all(v is not _UNKNOWN and v == vals[0] for v in vals) else _UNKNOWN
            if recv is not None and _CONFIG_NAME.search(recv):
                v = self.settings.value(node.attr)
                if v is not _UNKNOWN:
                    self.used.add(f"{recv}.{node.attr}")
                return v
            return _UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self.value(node.operand, depth + 1)
            return _UNKNOWN if v is _UNKNOWN else not v
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, depth)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPS:
            left, right = self.value(node.left, depth + 1), self.value(node.comparators[0], depth + 1)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                return _OPS[type(node.ops[0])](left, right)
            except TypeError:
                return _UNKNOWN
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, depth + 1)
            if test is not _UNKNOWN:
                return self.value(node.body if test else node.orelse, depth + 1)
            a, b = self.value(node.body, depth + 1), self.value(node.orelse, depth + 1)
            return a if a is not _UNKNOWN and b is not _UNKNOWN and a == b else _UNKNOWN
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = [self.value(e, depth + 1) for e in node.elts]
            return _UNKNOWN if any(v is _UNKNOWN for v in vals) else tuple(vals)
        return _UNKNOWN

    def _boolop(self, node: ast.BoolOp, depth: int) -> Any:
        vals = [self.value(v, depth + 1) for v in node.values]
        if isinstance(node.op, ast.Or):
            if any(v is not _UNKNOWN and v for v in vals):
                return True
            return False if all(v is not _UNKNOWN for v in vals) else _UNKNOWN
        if any(v is not _UNKNOWN and not v for v in vals):
            return False
        return True if all(v is not _UNKNOWN for v in vals) else _UNKNOWN

    def off(self, test: ast.expr) -> bool | None:
        """Whether the test is false with the default settings (None: it reads no setting, or cannot be told)."""
        self.used = set()
        v = self.value(test)
        if v is _UNKNOWN or not self.used:
            return None
        return not v


def default_settings(
    root: Path, entries: Iterable[str], present: set[str], read: Callable[[str], str | None]
) -> Callable[[Callable[[str], Iterable[ast.Module]]], Settings]:
    """A reader of the default settings (given the files that may declare a name), with the root README's
    commands."""

    def load(declared: Callable[[str], Iterable[ast.Module]]) -> Settings:
        readme = readme_path(root)
        docs = [t for t in [_read(readme) if readme is not None else None] if t]
        return load_settings(declared, docs, entries, present, read)

    return load


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    except OSError:
        return None

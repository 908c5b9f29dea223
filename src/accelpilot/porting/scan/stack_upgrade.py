"""Code written for an old torch/numpy stack (rule ``stack-upgrade``, issue 27).

TorchNeuron native needs a current torch 2.x, and with it a current numpy. Code written years earlier uses APIs
removed since, each checked against the installed stack (torch 2.13.0 CPU, numpy 2.4.6):

- ``torch._six`` (removed in torch 2.0): ``import torch._six`` raises ``ModuleNotFoundError: No module named
  'torch._six'`` on torch 2.13;
- numpy's aliases of builtins (deprecated in 1.20, removed in 1.24): ``np.float``, ``np.int``, ``np.object``,
  ``np.str``, ``np.complex``, ``np.unicode`` raise ``AttributeError`` on numpy 2.4.6; ``np.bool`` (and ``np.long``)
  came back in numpy 2.0 as the numpy scalar types, so they fail only on numpy 1.24-1.26: listed, never blocking;
- a hard version assert on a library (``assert timm.__version__ == "0.3.2"``): the run stops unless exactly that
  version is installed, and a version pinned for an old stack has to be checked against torch 2.x;
- the Hugging Face, openai and torchvision APIs a current stack removed (``hf_stack.REMOVED_KWARGS``/
  ``REMOVED_NAMES``: ``from_pretrained(load_in_8bit=...)``, ``Trainer(tokenizer=...)``, ``from openai import
  openai_object``, ``save_image(range=...)``), ``torch.stft`` without ``return_complex`` and ``nn.Conv1d`` with a
  two-element kernel (both raise at every call on torch 2.13); a call
  site is marked ``call-time`` and blocks in an entry point's own file (it runs when the entry point does).

Every site is a line of one repository item. A site that runs when its module is imported (module level or a class
body, not in a def or behind a ``try`` with a handler) is marked ``import-time``; the item blocks when such a site is
in a module the default path imports at module level (``default_path.reached``): the import fails, so the entry
point stops before it runs anything (``mark_stack_blocking``).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable

from accelpilot.porting.scan.hf_stack import REMOVED_KWARGS, REMOVED_METHODS, REMOVED_NAMES
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _tree
from accelpilot.porting.scan.removed_calls import BYTE_GATE as CALL_GATE
from accelpilot.porting.scan.removed_calls import removed_call_sites
from accelpilot.porting.scan.stack_tables import (
    BACK_IN_NUMPY2,
    COLLECTIONS_ABCS,
    MPL_AXES,
    NUMPY_RANDOM,
    REMOVED_FROM,
    REMOVED_MODULES,
    REMOVED_NUMPY,
    REMOVED_NUMPY2,
    TB_LOGGER,
    TIMM_GONE_PREFIXES,
    TORCHAUDIO_GONE,
    TORCHAUDIO_GONE_MODULES,
    TORCHAUDIO_IO,
    TORCHTEXT,
)
from accelpilot.porting.scan.torchvision_sites import BYTE_GATE as CIFAR_GATE
from accelpilot.porting.scan.torchvision_sites import cifar_attr_sites

RULE = "stack-upgrade"
IMPORT_TIME = "import-time"
CALL_TIME = "call-time"
_ABC_NAMES = b"|".join(sorted(a.encode() for a in COLLECTIONS_ABCS))
_COLLECTIONS_ATTR = re.compile(rb"collections\.(?:%s)\b" % _ABC_NAMES)  # literal-first: sre's fast search
_COLLECTIONS_FROM = re.compile(rb"from[ \t]+collections[ \t]+import[^\n]*\b(?:%s)\b" % _ABC_NAMES)
_TORCHAUDIO_ALIAS = re.compile(rb"^[ \t]*import[ \t]+torchaudio(?:[ \t]+as[ \t]+(\w+))?[ \t]*$", re.M)
_TORCHAUDIO_USE = re.compile(
    rb"\.(?:load|save|info|set_audio_backend|list_audio_backends|get_audio_backend)\(|torchaudio\.(?:backend|io|sox_effects|kaldi_io)\b"
)
_ALIASES = (
    rb"(?:float_?|int0?|object0?|str|complex_?|unicode_?|bool8?|long|string_|NaN|NAN|Inf|Infinity|infty|PINF|NINF"
    rb"|RankWarning|product|cumproduct|sometrue|alltrue|asfarray|find_common_type|round_|msort|cast|mat|longfloat"
    rb"|cfloat|ComplexWarning|VisibleDeprecationWarning|AxisError|trapz|in1d)\b(?!\w)"
)
_SIX = re.compile(rb"torch\._six|from[ \t]+torch[ \t]+import[^\n]*\b_six\b")
_PIN = re.compile(rb"assert[^\n]*__version__")
# Bytes a removed Hugging Face/openai API needs: the call's name and one of its removed keywords
# (``from_pretrained(`` and ``load_in_8bit=``), or a removed name (``openai_object``). ``tokenizer=`` alone is in a
# sixth of transformers' files; with ``Trainer(`` in a handful.
_HF_CALLS = tuple(
    (
        name.encode() + b"(",
        tuple(sorted(k.encode() for k in kws)),
        re.compile(rb"\b(?:%s)\s*=" % b"|".join(sorted(k.encode() for k in kws))),
    )
    for name, kws in REMOVED_KWARGS.items()
)
_HF_WORDS = tuple(sorted({w for _, words, _ in _HF_CALLS for w in words}))
_HF_NAMES = tuple(sorted({n.encode() for names in REMOVED_NAMES.values() for n in names}))
_HF_METHODS = tuple(sorted(("." + m).encode() for m in REMOVED_METHODS))
_IMPORTS_TRANSFORMERS = re.compile(rb"^[ \t]*(?:from|import)[ \t]+transformers\b", re.M)
_NUMPY_ALIAS = re.compile(rb"^[ \t]*import[ \t]+numpy(?:[ \t]+as[ \t]+(\w+))?", re.M)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# ``nn.Conv1d(c, c, kernel_size=(1, 2))`` or a tuple as its third argument: a byte test, the parse decides.
_CONV1D_TUPLE = re.compile(rb"kernel_size\s*=\s*[(\[]|Conv1d\([^()\n]*,[^()\n]*,\s*[(\[]")
_OTHER_STFT = frozenset({"librosa", "signal", "scipy", "np", "numpy", "tf", "jnp", "jax", "core", "spectrum"})


def worth_parsing(data: bytes) -> bool:
    """``torch._six``, an assert on a ``__version__``, or a removed alias after a name numpy is imported as, in the
    bytes (the parse is for the few files that pass: most of a model library's files import numpy)."""
    if b"_six" in data and _SIX.search(data) is not None:
        return True
    if b"__version__" in data and _PIN.search(data) is not None:
        return True
    if any(w in data for w in _HF_WORDS):  # substring tests first (a regex with ``\b`` scans slowly)
        for call, words, kw in _HF_CALLS:
            if call in data and any(w in data for w in words) and kw.search(data) is not None:
                return True
    if any(n in data for n in _HF_NAMES):
        return True
    if any(m in data for m in _HF_METHODS) and _IMPORTS_TRANSFORMERS.search(data) is not None:
        return True
    if b"stft(" in data:
        return True
    if b"Conv1d(" in data and _CONV1D_TUPLE.search(data) is not None:
        return True
    if (
        b"numpy.lib." in data or b"_accumulate" in data or b"scipy.misc" in data or b"timm." in data
    ) and _removed_import(data):
        return True
    if b"torchtext" in data and _TORCHTEXT.search(data) is not None:
        return True
    if b"pkg_resources" in data and _PKG_RESOURCES.search(data) is not None:
        return True
    if b"tensorboard_logger" in data and _TB_LOGGER.search(data) is not None:
        return True
    if b"CIFAR" in data and any(w in data for w in CIFAR_GATE):
        return True
    if any(w in data for w in CALL_GATE):
        return True
    if b"_axis" in data and any(a.encode() in data for a in MPL_AXES):
        return True
    if b"get_cmap" in data and b"matplotlib" in data:
        return True
    if b"collections." in data and _COLLECTIONS_ATTR.search(data) is not None:
        return True
    if b"from collections import" in data and _COLLECTIONS_FROM.search(data) is not None:
        return True
    if b"torchaudio" in data and _TORCHAUDIO_USE.search(data) is not None:
        return True
    if b"numpy" not in data:
        return False
    names = frozenset(m.group(1) or b"numpy" for m in _NUMPY_ALIAS.finditer(data))
    if not names:
        return False
    if b".random." in data and any(m.group(1).decode() not in NUMPY_RANDOM for m in _random_use(names).finditer(data)):
        return True
    return _alias_use(names).search(data) is not None


def _removed_import(data: bytes) -> bool:
    """An import line naming a removed module or name (a byte test; the parse decides)."""
    return any(m.encode() in data for m in (*REMOVED_FROM, *REMOVED_MODULES, *TIMM_GONE_PREFIXES))


_TORCHTEXT = re.compile(rb"^[ \t]*(?:import|from)[ \t]+torchtext\b", re.M)
# setuptools 82.0.0 (February 2026) removed ``pkg_resources`` (its changelog): a fresh environment's setuptools has
# none, so ``import pkg_resources`` raises unless setuptools is pinned below 82 (ImageBind's packaged-vocabulary
# lookup); ``importlib.resources``/``importlib.metadata`` replace it.
PKG_RESOURCES = "pkg_resources"
_PKG_RESOURCES = re.compile(rb"^[ \t]*(?:import|from)[ \t]+pkg_resources\b", re.M)
_TB_LOGGER = re.compile(rb"^[ \t]*(?:import|from)[ \t]+tensorboard_logger\b", re.M)


def _timm_gone(module: str) -> bool:
    """A timm module 1.0 no longer has (``timm.models.layers`` itself is a shim there, its submodules are gone)."""
    return module.startswith(TIMM_GONE_PREFIXES)


def _torchaudio_site(node: ast.AST, audio_names: set[str]) -> tuple[str, bool | None] | None:
    """``torchaudio.load(...)``/``save(...)`` (ImportError when called, without torchcodec), a removed torchaudio
    function called, or a removed torchaudio module imported."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        name, attr = node.func.value.id, node.func.attr
        if name in audio_names and attr in TORCHAUDIO_IO:
            return (
                f"{name}.{attr}(...) (torchaudio >= 2.9 reads and writes audio through torchcodec, which it does not "
                "install: ImportError)",
                None,
            )
        if name in audio_names and attr in TORCHAUDIO_GONE:
            return f"{name}.{attr}(...) (removed in torchaudio 2.9: AttributeError)", None
    mods: list[str] = []
    if isinstance(node, ast.Import):
        mods = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
        mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names if node.module == "torchaudio"]
    gone = [m for m in mods if m.startswith("torchaudio.") and m.split(".")[1] in TORCHAUDIO_GONE_MODULES]
    if gone:
        return f"import {gone[0]} (removed in torchaudio 2.9: ModuleNotFoundError)", True
    return None


def _removed_site(node: ast.AST) -> tuple[str, bool | None] | None:
    """``from numpy.lib.arraypad import pad``, ``import numpy.lib.function_base``, ``from torch._utils import
    _accumulate``: the import raises on the current stack."""
    mods = (
        [a.name for a in node.names]
        if isinstance(node, ast.Import)
        else [node.module]
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None
        else []
    )
    how = "from {} import ..." if isinstance(node, ast.ImportFrom) else "import {}"
    if any(m == TORCHTEXT or m.startswith(TORCHTEXT + ".") for m in mods):
        return (
            f"{how.format(mods[0])} (torchtext's last release, 0.18.0, is built for torch 2.3: on a later torch its "
            "native library fails to load, OSError)",
            True,
        )
    if any(m == PKG_RESOURCES or m.startswith(PKG_RESOURCES + ".") for m in mods):
        return (
            f"{how.format(mods[0])} (setuptools removed pkg_resources in 82.0: ModuleNotFoundError unless "
            "setuptools stays below 82)",
            True,
        )
    if any(m == TB_LOGGER or m.startswith(TB_LOGGER + ".") for m in mods):
        return (
            f"{how.format(mods[0])} (tensorboard_logger's last release, 0.1.0, ships code an old protoc generated: on "
            "protobuf >= 4 its import raises TypeError, 'Descriptors cannot be created directly')",
            True,
        )
    timm = [m for m in mods if _timm_gone(m)]
    if timm:
        return f"{how.format(timm[0])} (not in timm 1.0: ModuleNotFoundError unless timm stays below 1.0)", False
    if isinstance(node, ast.Import):
        gone = [a.name for a in node.names if a.name in REMOVED_MODULES]
        if gone:
            return f"import {gone[0]} (private since numpy 2.0: ModuleNotFoundError)", True
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
        if node.module in REMOVED_MODULES:
            return f"from {node.module} import ... (private since numpy 2.0: ModuleNotFoundError)", True
        names = REMOVED_FROM.get(node.module, {})
        gone = [a.name for a in node.names if a.name in names]
        if gone:
            return f"from {node.module} import {gone[0]} (not in {names[gone[0]]}: ImportError)", True
    return None


@functools.lru_cache(maxsize=32)
def _alias_use(names: frozenset[bytes]) -> re.Pattern[bytes]:
    """A removed alias after any of the names numpy is imported as (``np``, almost always: compiled once)."""
    return re.compile(rb"\b(?:%s)\.%s" % (b"|".join(re.escape(n) for n in sorted(names)), _ALIASES))


@functools.lru_cache(maxsize=32)  # bounded like ``_alias_use``: one pattern per set of numpy aliases
def _random_use(names: frozenset[bytes]) -> re.Pattern[bytes]:
    """``np.random.<name>(`` after any of the names numpy is imported as."""
    return re.compile(rb"\b(?:%s)\.random\.([A-Za-z]\w*)\b" % b"|".join(re.escape(n) for n in sorted(names)))


def _numpy_random_site(node: ast.AST, numpy_names: set[str]) -> tuple[str, bool | None] | None:
    """``np.random.integers(...)``: a name numpy.random has never had (``integers`` is a ``Generator`` method), an
    AttributeError on any numpy, the current one included."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)):
        return None
    owner = node.value
    if owner.attr != "random" or not isinstance(owner.value, ast.Name) or owner.value.id not in numpy_names:
        return None
    if node.attr.startswith("_") or node.attr in NUMPY_RANDOM:
        return None
    return f"{owner.value.id}.random.{node.attr} (numpy.random has no {node.attr}: AttributeError on any numpy)", True


def _version_pin(node: ast.Assert) -> str | None:
    """``assert X.__version__ == "a"`` (or ``in ("a", "b")``, ``.startswith("a")``): the pinned library's name."""
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In)):
        sides = [test.left, test.comparators[0]]
        version = next((s for s in sides if isinstance(s, ast.Attribute) and s.attr == "__version__"), None)
        other = sides[1] if version is sides[0] else sides[0]
        literal = isinstance(other, ast.Constant) and isinstance(other.value, str)
        literals = isinstance(other, (ast.Tuple, ast.List, ast.Set)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in other.elts
        )
        if version is not None and (literal or literals):
            return ast.unparse(version.value)
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and isinstance(test.func.value, ast.Attribute)
        and test.func.value.attr == "__version__"
    ):
        return ast.unparse(test.func.value.value)
    return None


def _sites(
    tree: ast.Module, numpy_names: set[str], guarded: set[int], audio_names: frozenset[str] = frozenset()
) -> Iterable[tuple[ast.AST, str, bool | None]]:
    """(node, message, blocks at import) of each use outside the ``guarded`` nodes (``_guarded``), walking with what
    runs at import; None for a call of a removed Hugging Face keyword (it fails when the call runs)."""

    def walk(node: ast.AST, at_import: bool) -> Iterable[tuple[ast.AST, str, bool | None]]:
        if isinstance(node, _FUNC):
            at_import = False
        site = None if id(node) in guarded else _site(node, numpy_names) or _torchaudio_site(node, set(audio_names))
        if site is not None:
            message, blocks = site
            yield node, message, None if blocks is None else blocks and at_import
        for child in ast.iter_child_nodes(node):
            yield from walk(child, at_import)

    yield from walk(tree, True)


def _guarded(tree: ast.Module) -> set[int]:
    """Ids of the nodes under a feature test's arms (``np.trapezoid if hasattr(np, "trapezoid") else np.trapz``: the
    code already picks what exists; EasyOCR's ``model_urls`` in the arm for torchvision before 0.13) or in a ``try``
    body with a handler (a fallback in the handler: the import works either way): no site there."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)) and _feature_test(node.test):
            arms: list[ast.AST] = [*node.body, *node.orelse] if isinstance(node, ast.If) else [node.body, node.orelse]
        elif isinstance(node, ast.Try) and node.handlers:
            arms = list(node.body)
        else:
            continue
        out |= {id(n) for arm in arms for n in ast.walk(arm)}
    return out


def _feature_test(test: ast.expr) -> bool:
    """A test that asks what the installed library has: ``hasattr(np, "trapezoid")``, ``X.__version__ ...``, or a
    name holding a version (Person_reID's ``version = torch.__version__`` then ``if int(version[0]) > 0 ...``; not
    packaging's ``version`` module in ``version.parse(...)``, which compares whatever it is given)."""
    owners = {id(n.value) for n in ast.walk(test) if isinstance(n, ast.Attribute)}
    for n in ast.walk(test):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr":
            return True
        if isinstance(n, ast.Attribute) and n.attr == "__version__":
            return True
        if isinstance(n, ast.Name) and "version" in n.id.lower() and id(n) not in owners:
            return True
    return False


def _hf_site(node: ast.AST) -> tuple[str, bool | None] | None:
    """A removed Hugging Face keyword in a call (None: fails when called), or a removed openai name imported."""
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        removed = REMOVED_KWARGS.get(name, {})
        args = [kw.arg for kw in node.keywords if kw.arg in removed]
        if args and args[0] is not None:
            lib, ver = removed[args[0]]
            return f"{name}({args[0]}=...) ({lib} {ver} removed the argument: TypeError)", None
    if isinstance(node, ast.Attribute) and node.attr in REMOVED_METHODS:
        lib, ver = REMOVED_METHODS[node.attr]
        return f".{node.attr} of a transformers model (removed in {lib} {ver}: AttributeError)", None
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in REMOVED_NAMES:
        names = REMOVED_NAMES[node.module]
        imported = [a.name for a in node.names if a.name in names]
        if imported:
            lib, ver = names[imported[0]]
            return f"from {node.module} import {imported[0]} (removed in {lib} {ver}: ImportError)", True
    return None


def _stft_site(node: ast.AST) -> tuple[str, bool | None] | None:
    """``torch.stft(x, n_fft, ...)`` (or ``x.stft(...)``) with no ``return_complex=``: torch 2.0 made it required for
    a real input (torch 2.13: RuntimeError "stft requires the return_complex parameter be given for real inputs")."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "stft"):
        return None
    owner = node.func.value
    if isinstance(owner, ast.Call):
        return None  # ``_lws_processor(hp).stft(y)`` (Wav2Lip): another library's object, not a tensor
    if isinstance(owner, ast.Name) and owner.id in _OTHER_STFT:
        return None  # librosa.stft, scipy.signal.stft: not torch's
    if isinstance(owner, ast.Attribute) and owner.attr in _OTHER_STFT:
        return None
    if any(k.arg in ("return_complex", None) for k in node.keywords):
        return None
    return "stft(...) without return_complex (required for a real input since torch 2.0: RuntimeError)", None


def _conv1d_site(node: ast.AST) -> tuple[str, bool | None] | None:
    """``nn.Conv1d(..., kernel_size=(1, 2))`` (Graph WaveNet): a two-element kernel gives a 4-D weight, and conv1d
    takes 2-D or 3-D input only; old torch ran it on 4-D input. torch 2.13.0 (tried) raises RuntimeError at every
    forward, on 4-D input ("Expected 2D (unbatched) or 3D (batched) input to conv1d") and on 3-D input alike."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name != "Conv1d":
        return None
    kernel = next((k.value for k in node.keywords if k.arg == "kernel_size"), None)
    if kernel is None and len(node.args) > 2:
        kernel = node.args[2]
    if not (isinstance(kernel, (ast.Tuple, ast.List)) and len(kernel.elts) == 2):
        return None
    return (
        f"Conv1d(kernel_size={ast.unparse(kernel)}) (a two-dimensional kernel: conv1d rejects its 4-D weight at "
        f"every forward on torch 2.13, tried: RuntimeError)",
        None,
    )


def _site(node: ast.AST, numpy_names: set[str]) -> tuple[str, bool | None] | None:
    """(message, whether it fails on the current stack; None: when the call runs) of one node that uses a removed
    API, else None."""
    hf = _hf_site(node) or _stft_site(node) or _conv1d_site(node) or _removed_site(node)
    if hf is not None:
        return hf
    if isinstance(node, ast.Import) and any(
        a.name == "torch._six" or a.name.startswith("torch._six.") for a in node.names
    ):
        return "import torch._six (removed in torch 2.0)", True
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
        six = node.module == "torch._six" or node.module.startswith("torch._six.")
        if six or (node.module == "torch" and any(a.name == "_six" for a in node.names)):
            return (
                f"from {node.module} import {', '.join(a.name for a in node.names)} (torch._six: removed in torch 2.0)",
                True,
            )
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id == "torch" and node.attr == "_six":
            return "torch._six (removed in torch 2.0)", True
        if node.value.id in numpy_names:
            if node.attr in REMOVED_NUMPY:
                return (
                    f"{node.value.id}.{node.attr} (numpy alias of the builtin {REMOVED_NUMPY[node.attr]}, removed in "
                    f"numpy 1.24)",
                    True,
                )
            if node.attr in REMOVED_NUMPY2:
                return (
                    f"{node.value.id}.{node.attr} (removed from numpy's namespace in numpy "
                    f"{REMOVED_NUMPY2[node.attr]}: AttributeError)",
                    True,
                )
            if node.attr in BACK_IN_NUMPY2:
                return (
                    f"{node.value.id}.{node.attr} (removed in numpy 1.24, back in numpy 2.0 as a numpy scalar type: "
                    f"fails on numpy 1.24-1.26 only)",
                    False,
                )
    other = _mpl_or_collections_site(node) or _numpy_random_site(node, numpy_names)
    if other is not None:
        return other
    if isinstance(node, ast.Assert) and (lib := _version_pin(node)) is not None:
        return f"assert on {lib}.__version__ (a hard version pin: {ast.unparse(node.test)[:60]})", True
    return None


def _mpl_or_collections_site(node: ast.AST) -> tuple[str, bool | None] | None:
    """Axes3D's ``w_xaxis`` (matplotlib 3.8), ``cm.get_cmap(...)`` (3.9), ``collections.Mapping`` and ``from
    collections import Mapping`` (Python 3.10)."""
    if isinstance(node, ast.Attribute) and node.attr in MPL_AXES:
        return f"{ast.unparse(node)} (Axes3D's {node.attr}, removed in matplotlib 3.8: AttributeError)", None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_cmap":
        owner = node.func.value
        if (isinstance(owner, ast.Name) and owner.id == "cm") or (
            isinstance(owner, ast.Attribute) and owner.attr == "cm"
        ):
            return f"{ast.unparse(node.func)}(...) (removed in matplotlib 3.9: AttributeError)", None
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "collections"
        and node.attr in COLLECTIONS_ABCS
    ):
        return f"collections.{node.attr} (removed in Python 3.10: AttributeError)", True
    if isinstance(node, ast.ImportFrom) and node.module == "collections" and node.level == 0:
        gone = [a.name for a in node.names if a.name in COLLECTIONS_ABCS]
        if gone:
            return f"from collections import {gone[0]} (removed in Python 3.10: ImportError)", True
    return None


def stack_sites(data: bytes) -> list[RawFinding]:
    """The findings of ``stack-upgrade`` in one Python source; subject ``import-time`` for a site that fails when
    the module is imported."""
    if not worth_parsing(data):
        return []
    try:
        tree = _tree(data)
    except SyntaxError:
        return []
    numpy_names = {(m.group(1) or b"numpy").decode() for m in _NUMPY_ALIAS.finditer(data)}
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    seen: set[int] = set()
    audio = frozenset((m.group(1) or b"torchaudio").decode() for m in _TORCHAUDIO_ALIAS.finditer(data))
    # a removed model method counts where the file imports transformers and defines no method of that name (BLIP's
    # ``med.py`` keeps its own ``get_extended_attention_mask``)
    own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    hf_model = _IMPORTS_TRANSFORMERS.search(data) is not None
    guarded = _guarded(tree)
    for node, message, at_import in (
        *_sites(tree, numpy_names, guarded, audio),
        *cifar_attr_sites(tree),
        *(site for site in removed_call_sites(tree) if id(site[0]) not in guarded),
    ):
        if isinstance(node, ast.Attribute) and node.attr in REMOVED_METHODS and (node.attr in own or not hf_model):
            continue
        ln = getattr(node, "lineno", 0)
        if ln in seen:
            continue  # one finding per line (an import statement and its attribute)
        seen.add(ln)
        snippet = lines[ln - 1] if 0 < ln <= len(lines) else ""
        subject = CALL_TIME if at_import is None else IMPORT_TIME if at_import else None
        out.append((RULE, ln, message, snippet, subject, None))
    return out

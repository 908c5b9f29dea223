"""What a current stack no longer has, as data (read by ``stack_upgrade.py``): each name or module was tried on the
installed release (torch 2.13.0, numpy 2.4.6, scipy 1.17.1, matplotlib 3.11.2, Python 3.11) or read in the wheels
named beside it, so a row says where its fact comes from."""

from __future__ import annotations

# numpy aliases removed in 1.24 -> what they were (AttributeError on numpy 2.4.6).
REMOVED_NUMPY = {
    "float": "float",
    "int": "int",
    "object": "object",
    "str": "str",
    "complex": "complex",
    "unicode": "str",
}
# Removed in 1.24 and back in 2.0 as numpy scalar types: fail on numpy 1.24-1.26 only.
BACK_IN_NUMPY2 = frozenset({"bool", "long"})
# Names numpy 2 took out of its main namespace (NEP 52; ``trapz`` and ``in1d`` in 2.4), each ``hasattr`` tried on the
# installed numpy 2.4.6 -> the release that removed it (AttributeError). Depth Anything V2's metric trainer starts
# with ``warnings.simplefilter('ignore', np.RankWarning)``.
REMOVED_NUMPY2 = {
    **dict.fromkeys(
        (
            "float_",
            "complex_",
            "unicode_",
            "string_",
            "NaN",
            "NAN",
            "Inf",
            "Infinity",
            "infty",
            "PINF",
            "NINF",
            "RankWarning",
            "product",
            "cumproduct",
            "sometrue",
            "alltrue",
            "asfarray",
            "find_common_type",
            "round_",
            "msort",
            "cast",
            "mat",
            "longfloat",
            "cfloat",
            "int0",
            "bool8",
            "object0",
            "ComplexWarning",
            "VisibleDeprecationWarning",
            "AxisError",
        ),
        "2.0",
    ),
    "trapz": "2.4",
    "in1d": "2.4",
}
# timm modules 0.4.12 had and 1.0.31 has not (the two wheels' file lists compared; ``timm.models.layers`` itself stays
# as a shim, its submodules do not): the import raises ModuleNotFoundError on timm >= 1.0. A repository that pins
# timm 0.4 keeps working, so a site is listed, never blocking (VideoMAE's and EquiFormer's ``timm.optim.novograd``).
TIMM_GONE_PREFIXES = (
    "timm.optim.novograd",
    "timm.models.layers.",
    "timm.data.parsers",
    "timm.models.efficientnet_blocks",
    "timm.models.efficientnet_builder",
    "timm.models.gluon_",
)
# ``collections`` aliases of its ABCs, removed in Python 3.10 (``collections.Callable`` is an AttributeError, ``from
# collections import Mapping`` an ImportError on the Python 3.11 here; Neuron's torch needs Python 3.10 or later).
COLLECTIONS_ABCS = frozenset(
    {
        "Awaitable", "AsyncIterable", "AsyncIterator", "ByteString", "Callable", "Container", "Coroutine",
        "Generator", "Hashable", "ItemsView", "Iterable", "Iterator", "KeysView", "Mapping", "MappingView",
        "MutableMapping", "MutableSequence", "MutableSet", "Sequence", "Set", "Sized", "ValuesView",
    }
)  # fmt: skip
# matplotlib APIs gone from the installed 3.11.2 (``hasattr`` tried): ``cm.get_cmap`` (removed in 3.9; use
# ``matplotlib.colormaps[name]``) and Axes3D's ``w_xaxis``/``w_yaxis``/``w_zaxis`` (removed in 3.8; use ``xaxis``),
# E(3) diffusion's visualiser, run every test epoch.
MPL_AXES = frozenset({"w_xaxis", "w_yaxis", "w_zaxis"})
# torchtext's last release (0.18.0, April 2024) is built for torch 2.3: on the installed torch 2.13 ``import
# torchtext`` raises ``OSError: Could not load this library: .../libtorchtext.so`` (tried). No torchtext pairs with the
# torch TorchNeuron ships, so an import the default path makes stops it (The Annotated Transformer reimplementations'
# legacy ``torchtext.data.Field``, S4's LRA loaders imported by every run).
TORCHTEXT = "torchtext"
# tensorboard_logger's last release (0.1.0, 2018; RepDistiller's scalar logger) ships ``*_pb2`` modules an old protoc
# generated: on protobuf >= 4 ``import tensorboard_logger`` raises ``TypeError: Descriptors cannot be created
# directly`` (tried with protobuf 7.36.2, the version pip resolves today) unless protobuf stays below 4 or the slow
# pure-Python parser is forced (``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python``).
TB_LOGGER = "tensorboard_logger"
# Names a current stack no longer has, each import tried on the installed one (torch 2.13.0, scipy 1.17.1):
# ``from torch._utils import _accumulate`` (deep-text-recognition-benchmark's dataset split) raises ImportError.
REMOVED_FROM: dict[str, dict[str, str]] = {
    "torch._utils": {"_accumulate": "torch 2.13"},
    "torch.utils.data.dataset": {"_accumulate": "torch 2.13"},
    "scipy.misc": {n: "scipy 1.17" for n in ("imread", "imsave", "imresize", "imrotate", "toimage", "bytescale")},
}
# Modules numpy 2.0 made private (``numpy.lib.arraypad`` -> ``numpy.lib._arraypad_impl``): ModuleNotFoundError on
# numpy 2.4.6 (FourCastNet's ``from numpy.lib.arraypad import pad``, VideoMAE's ``numpy.lib.function_base``).
REMOVED_MODULES = frozenset(
    f"numpy.lib.{m}"
    for m in (
        "arraypad",
        "arraysetops",
        "arrayterator",
        "function_base",
        "histograms",
        "index_tricks",
        "nanfunctions",
        "polynomial",
        "shape_base",
        "twodim_base",
        "type_check",
        "ufunclike",
        "utils",
    )
)
# torchaudio 2.9 moved its I/O onto torchcodec and dropped the rest (read in torchaudio 2.11.1's wheel: its
# ``__init__.py`` defines ``load``/``save`` as ``load_with_torchcodec``/``save_with_torchcodec``, which import
# ``torchcodec`` when called and raise ImportError without it; torchcodec is no dependency of the wheel, whose only
# requirement is torch; ``info``, ``set_audio_backend``, ``list_audio_backends`` and the ``backend``, ``io``,
# ``sox_effects`` and ``kaldi_io`` modules are gone). TorchNeuron's torch pairs with such a torchaudio.
TORCHAUDIO_IO = frozenset({"load", "save"})
TORCHAUDIO_GONE = frozenset({"info", "set_audio_backend", "list_audio_backends", "get_audio_backend"})
TORCHAUDIO_GONE_MODULES = frozenset({"backend", "io", "sox_effects", "kaldi_io"})
# numpy.random's public functions and classes (``dir(numpy.random)`` on numpy 2.4.6, the same names as 1.26):
# ``np.random.integers`` (CLAP's long-audio crop) is an AttributeError on any numpy, ``integers`` being a method of
# ``Generator`` only.
NUMPY_RANDOM = frozenset(
    {
        "BitGenerator", "Generator", "MT19937", "PCG64", "PCG64DXSM", "Philox", "RandomState", "SFC64",
        "SeedSequence", "beta", "binomial", "bit_generator", "bytes", "chisquare", "choice", "default_rng",
        "dirichlet", "exponential", "f", "gamma", "geometric", "get_bit_generator", "get_state", "gumbel",
        "hypergeometric", "laplace", "logistic", "lognormal", "logseries", "mtrand", "multinomial",
        "multivariate_normal", "negative_binomial", "noncentral_chisquare", "noncentral_f", "normal", "pareto",
        "permutation", "poisson", "power", "rand", "randint", "randn", "random", "random_integers", "random_sample",
        "ranf", "rayleigh", "sample", "seed", "set_bit_generator", "set_state", "shuffle", "standard_cauchy",
        "standard_exponential", "standard_gamma", "standard_normal", "standard_t", "test", "triangular", "uniform",
        "vonmises", "wald", "weibull", "zipf",
    }
)  # fmt: skip

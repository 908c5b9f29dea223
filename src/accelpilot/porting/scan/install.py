"""What the README's install step puts in the Neuron environment (rule ``install-pin``; issue 27's held-out labels:
llama2.c's ``torch==2.0.1``, VITS's ``torch==1.6.0``, Time-Series-Library's ``pip install torch==2.5.1 --index-url
.../cu121``, RAFT's ``conda install pytorch=1.6.0``, Tacotron 2's ``tensorflow==1.15.2``, consistency_models'
flash-attn in ``setup.py``).

TorchNeuron ships as its own torch build, paired with one torch release: a requirement that pins another torch (an
exact or upper-bound pin, or a CUDA build) makes ``pip install -r requirements.txt`` replace it, and the neuron device
is gone; TensorFlow 1.x has no wheel for a current Python; flash-attn, mamba-ssm and causal-conv1d compile CUDA
kernels at install and need the CUDA toolkit (nvcc); basicsr's newest release imports a torchvision module that
torchvision 0.17 removed (``_NO_IMPORT``). Such a line blocks when the README's own install command installs
its file (``pip install -r requirements.txt``, ``pip install -e .`` for ``setup.py``/``pyproject.toml``, also inside
an install script the README runs) or names the package itself; elsewhere it is the upgrade's work (a warning).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from accelpilot.porting.findings import INSTALL_FAILS, Finding, context_of_path, promoted_folders
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.documents import readme_path
from accelpilot.porting.scan.entry import _RUN_SH

RULE = "install-pin"
LIGHTNING = "lightning-legacy"
_PIP = re.compile(r"pip3?\s+install\s+([^\n`<|;&]*)")
# ``conda install pytorch=1.6.0 torchvision=0.7.0 cudatoolkit=10.1 -c pytorch`` (RAFT's README): conda's ``=`` pins
_CONDA = re.compile(r"(?:conda|mamba)\s+install\s+([^\n`<|;&]*)")
_OR_LATER = re.compile(r"\bor (?:later|newer|above|higher)\b|\bat least\b", re.I)
_CONDA_TORCH = re.compile(r"(?<![\w.-])pytorch\s*(==?|<=|<(?!=))\s*([\w.*]+)")
_REQ_FILE = re.compile(r"(?:^|\s)-r\s*([\w./-]+)")
# ``conda env create -f environment.yaml`` (latent-diffusion, LoFTR): the environment file is installed as a whole
_CONDA_ENV = re.compile(r"conda\s+env\s+(?:create|update)\b[^\n`]*?\s(?:-f|--file)[ =]?([\w./\[\]-]+\.ya?ml)")
# a conda environment's ``- pytorch-cuda=12.1``: the pytorch channel's CUDA build of PyTorch comes with it
_PYTORCH_CUDA = re.compile(r"(?<![\w.-])pytorch-cuda\s*[=<>]=?\s*[\d.*]+")
# ``conda env create -f conda_env[_cpu].yml`` (ColBERT): an optional part in brackets names two files, both installs
_OPTIONAL_PART = re.compile(r"\[([\w.-]*)\]")


def _conda_files(line: str) -> list[str]:
    """The environment files a ``conda env create`` line names, a bracketed optional part read both ways."""
    out: list[str] = []
    for f in _CONDA_ENV.findall(line):
        f = f.removeprefix("./")
        out += [_OPTIONAL_PART.sub("", f), _OPTIONAL_PART.sub(r"\1", f)] if _OPTIONAL_PART.search(f) else [f]
    return out


_EDITABLE = re.compile(r"(?:^|\s)(?:-e\s+)?\.(?:\[[\w,]*\])?(?:\s|$)")
# ``torch==2.0.1``, ``torch<2``, ``torch~=1.13``, ``torch>=1.13.1,<=2.0.1`` (nanoT5), a CUDA build
# (``torch==1.13.1+cu117``); ``torch>=2.0`` leaves the
# Neuron build in place and is no pin here.
_TORCH_PIN = re.compile(r"(?<![\w.-])torch\s*(?:>=?\s*[\w.*]+\s*,\s*)?(==|~=|<=|<(?!=))\s*([\w.*+]+)")
# a conda environment file's ``- pytorch=1.7.0`` (a list entry; ``=`` pins in conda's syntax)
# ``- pytorch=1.6``, or with its channel (ESMFold's ``- pytorch::pytorch=1.12.*``)
_CONDA_ENV_TORCH = re.compile(r"^\s*-\s*(?:[\w-]+::)?pytorch\s*(==?|<=|<(?!=))\s*([\w.*]+)")
# A Python before 3.10 pinned for the environment: no torch release TorchNeuron pairs with (2.9 and later) has a wheel
# for it (``pip index versions torch --python-version 3.9``: 2.8.0 the newest; for 3.8 none on manylinux_2_28).
_OLD_PYTHON = re.compile(r"(?:^\s*-\s*(?:[\w-]+::)?|\bconda\s+create\b[^\n`]*?\s)python\s*==?\s*(3\.[0-9])(?![0-9])")
_PYTHON_WHY = (
    "no torch that TorchNeuron pairs with (2.9 and later) has a wheel for it; the newest for Python 3.9 is 2.8"
)
_TF1 = re.compile(r"(?<![\w.-])tensorflow(?:-gpu)?\s*(==|~=|<=|<(?!=))\s*(1\.[\w.*]+)")
# timm before 0.4 imports ``torch._six`` (``from torch._six import container_abcs`` in timm 0.3.2's
# ``timm/models/layers/helpers.py``, read in its wheel; gone from 0.4.12's), a module torch 2.0 removed: the import of
# timm fails on the torch TorchNeuron ships (DeiT's, MAE's and ConvNeXt's ``timm==0.3.2``).
_OLD_TIMM = re.compile(r"(?<![\w.-])timm\s*(==|~=|<=|<(?!=))\s*(0\.[\w.*]+)")
# PyTorch Lightning 0.x (NeRF-pl's 0.7.5, Pointnet2_PyTorch's 0.7.1): its own rule, the runtime the trainer stands on
_OLD_LIGHTNING = re.compile(r"(?<![\w.-])pytorch[-_]lightning\s*(==|~=|<=|<(?!=))\s*(0\.[\w.*]+)")
# A package every release of which (the registry's newest included) fails to import beside the torchvision paired with
# TorchNeuron's torch: basicsr 1.4.2 (the newest on PyPI, 2022; read in its sdist) imports
# ``torchvision.transforms.functional_tensor`` at ``basicsr/data/degradations.py:8``, a module torchvision 0.17 removed,
# and its ``__init__`` imports every subpackage (Real-ESRGAN, GFPGAN and the BasicSR family stand on it).
_NO_IMPORT = {
    "basicsr": (
        "1.4.2",
        "imports torchvision.transforms.functional_tensor (basicsr/data/degradations.py:8), which torchvision 0.17 "
        "removed: importing basicsr fails beside the torchvision of TorchNeuron's torch",
    ),
}
# the name as a requirement (a line's start, after a space, a quote or ``[``), not in a list such as isort's
# ``known_third_party = PIL,basicsr,cv2`` (Real-ESRGAN's setup.cfg)
_NO_IMPORT_LINE = re.compile(
    r"(?<![^\s\"'\[])(" + "|".join(_NO_IMPORT) + r")\b(?![\w-])\s*((?:[<>=!~]=?\s*[\w.*]+\s*,?\s*)*)"
)
# The first release of a compiled package with a wheel for Python 3.10, the oldest Python the torch releases TorchNeuron
# pairs with (2.9 and later) support: numpy 1.21.3 and SciPy 1.7.2 (each release's notes: "provides 64 bit Python
# 3.10.0 wheels", "includes wheels for Python 3.10"). A pin that admits no release from there on (U-2-Net's
# ``numpy==1.15.2``, SimCSE's ``numpy>=1.19.5,<1.20``) leaves pip to build a source release on a Python it predates.
_FIRST_PY310_WHEEL = {"numpy": "1.21.3", "scipy": "1.7.2"}
_OLD_WHEEL_LINE = re.compile(
    r"(?<![^\s\"'\[])(" + "|".join(_FIRST_PY310_WHEEL) + r")\b(?![\w-])\s*((?:[<>=!~]=?\s*[\w.*]+\s*,?\s*)+)"
)
# ``DS_BUILD_OPS=1 pip install deepspeed`` (VideoMAE's INSTALL.md): DeepSpeed's setup builds every op it names with the
# CUDA toolkit at install time instead of JIT-loading them when used; without nvcc (a Trainium host) the install fails.
_DS_BUILD = re.compile(r"\bDS_BUILD_(\w+)=1\b[^\n`]*?\bpip3?\s+install\b[^\n`]*?(?<![\w.-])deepspeed\b")
# an install that skips the kernel build (flash-attn's ``FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE``): Python code only
_SKIPS_BUILD = re.compile(r"SKIP_CUDA_BUILD\s*=\s*(?:1|TRUE|true)")
_NVCC_BUILDS = re.compile(r"(?<![\w.-])(flash[-_]attn|mamba[-_]ssm|causal[-_]conv1d)\b")
_NVCC_RULES = frozenset({"flash-attn", "cuda-kernel-library"})
# An upper bound below this torch release keeps out the one TorchNeuron pairs with (torch-neuronx's last release
# pairs with PyTorch 2.9, DOMAIN.md; TorchNeuron native in SDK 2.32 is assumed no older); an exact pin of any other
# release replaces it.
_NEURON_TORCH = (2, 9)


def _installs(text: str) -> tuple[list[str], list[tuple[int, str]]]:
    """The files the README's ``pip install`` lines install (``requirements.txt``, ``setup.py`` for ``-e .``) and
    the pip lines themselves (line number, text)."""
    files: list[str] = []
    lines: list[tuple[int, str]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        for m in _PIP.finditer(line):
            args = m.group(1)
            lines.append((n, args))
            files += [f.removeprefix("./") for f in _REQ_FILE.findall(args)]
            if _EDITABLE.search(args):
                files += ["setup.py", "pyproject.toml", "setup.cfg"]
        files += _conda_files(line)
    return files, lines


# ``<details><summary>NVIDIA GPU</summary> ... pip install torch==2.8.0+cu128 ... </details>`` (F5-TTS): one install
# per device, folded; the user opens the one for their hardware.
_SUMMARY = re.compile(r"<summary>\s*(.*?)\s*</summary>", re.I | re.S)
_DEVICE_WORD = re.compile(r"\b(?:NVIDIA|CUDA|AMD|ROCm|Intel|XPU|Apple|Silicon|MPS|macOS|GPU|CPU)\b", re.I)


def device_choices(lines: list[str]) -> dict[int, str]:
    """Line number -> the summary of the folded ``<details>`` block it sits in, for blocks whose summary names a
    device or platform: a README's per-device install choices, of which a Neuron host runs none."""
    out: dict[int, str] = {}
    summary: str | None = None
    depth = 0
    for n, line in enumerate(lines, start=1):
        low = line.lower()
        if "<details" in low:
            depth += 1
        m = _SUMMARY.search(line)
        if depth and m is not None:
            summary = m.group(1) if _DEVICE_WORD.search(m.group(1)) else None
        if depth and summary is not None:
            out[n] = summary
        if "</details>" in low:
            depth = max(0, depth - 1)
            summary = None if depth == 0 else summary
    return out


def _below(version: str, bound: tuple[int, int]) -> bool:
    """``2.0.1`` is below (2, 9); an unreadable version counts as below (a pin the scan cannot clear)."""
    parts = re.findall(r"\d+", version)[:2]
    if not parts:
        return True
    return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0) < bound


def _optional_lines(rel: str, text: str) -> set[int]:
    """Lines of optional extras, which a plain install leaves out: a ``pyproject.toml`` table
    ``[project.optional-dependencies]`` (mamba's ``causal-conv1d``), a ``setup.py`` ``extras_require={...}``."""
    out: set[int] = set()
    lines = text.splitlines()
    if rel.endswith("pyproject.toml"):
        optional = False
        for n, line in enumerate(lines, start=1):
            if line.lstrip().startswith("["):
                optional = "optional-dependencies" in line or line.strip().startswith("[tool.")
            elif optional:
                out.add(n)
    elif rel.endswith("setup.py"):
        depth = None
        for n, line in enumerate(lines, start=1):
            if depth is None and "extras_require" in line:
                depth = 0
            if depth is not None:
                out.add(n)
                depth += line.count("{") + line.count("[") - line.count("}") - line.count("]")
                if depth <= 0 and ("}" in line or "]" in line or line.rstrip().endswith(",")):
                    depth = None
    return out


def _pins(text: str) -> list[tuple[int, str, str]]:
    """(line, message, kind) of each torch pin, TensorFlow 1.x pin or nvcc-built package in a text."""
    out: list[tuple[int, str, str]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        conda = _CONDA_ENV_TORCH.search(line)
        m = _TORCH_PIN.search(line) or conda
        if m is not None and (m.group(1) in ("==", "~=", "=") or _below(m.group(2), _NEURON_TORCH)):
            pin = f"pytorch{m.group(1)}{m.group(2)} (conda)" if conda else f"torch{m.group(1)}{m.group(2)}"
            out.append((n, f"{pin}: the install replaces the torch build TorchNeuron ships", "torch"))
        elif "+cu" in line and re.search(r"(?<![\w.-])torch(?![\w-])", line):
            out.append((n, "a CUDA build of torch: the install replaces the torch build TorchNeuron ships", "torch"))
        elif (cu := _PYTORCH_CUDA.search(line)) is not None:
            # mdlm's ``- pytorch-cuda=12.1``: the conda environment installs PyTorch's CUDA build (torch unpinned)
            out.append(
                (n, f"{cu.group(0).strip()} (conda): a CUDA build of PyTorch, which replaces TorchNeuron's", "torch")
            )
        if (m := _OLD_PYTHON.search(line)) is not None:
            out.append((n, f"python={m.group(1)} (conda): {_PYTHON_WHY}", "python"))
        if (m := _TF1.search(line)) is not None:
            out.append(
                (n, f"tensorflow{m.group(1)}{m.group(2)}: TensorFlow 1.x has no wheel for a current Python", "tf1")
            )
        if (m := _OLD_TIMM.search(line)) is not None and _below(m.group(2), (0, 4) if m.group(1) != "<" else (0, 5)):
            out.append(
                (
                    n,
                    f"timm{m.group(1)}{m.group(2)} imports torch._six, which torch 2.0 removed: importing timm fails",
                    "timm",
                )
            )
        if (m := _NVCC_BUILDS.search(line)) is not None:
            out.append((n, f"{m.group(1)} builds CUDA kernels at install (needs the CUDA toolkit, nvcc)", "nvcc"))
        if (m := _NO_IMPORT_LINE.search(line)) is not None and _admits(m.group(2), _NO_IMPORT[m.group(1)][0]):
            newest, why = _NO_IMPORT[m.group(1)]
            out.append((n, f"{m.group(1)} (newest release {newest}) {why}", "no-import"))
        if (m := _OLD_WHEEL_LINE.search(line)) is not None and _before_wheels(m.group(2), m.group(1)):
            first = _FIRST_PY310_WHEEL[m.group(1)]
            why = f"no release it admits has a wheel for Python 3.10 or later (the first is {first})"
            out.append((n, f"{m.group(1)}{m.group(2).strip().rstrip(',')}: {why}", "no-wheel"))
        if (m := _OLD_LIGHTNING.search(line)) is not None:
            pin = f"pytorch-lightning{m.group(1)}{m.group(2)}"
            out.append((n, f"{pin}: the 0.x Trainer API, removed in 1.0", LIGHTNING))
    return out


def _install_scripts(text: str, rels: list[str]) -> list[str]:
    """The tree's shell scripts named for installing that a README line runs (``bash install.sh``, ``sh
    ./scripts/install_env.sh``: ``entry._RUN_SH``), in README order."""
    present = set(rels)
    out: list[str] = []
    for line in text.splitlines():
        m = _RUN_SH.match(line)
        rel = m.group(1).removeprefix("./") if m is not None else ""
        if "install" in rel.rpartition("/")[2] and rel in present and rel not in out:
            out.append(rel)
    return out


# ``[INSTALL.md](INSTALL.md)`` (VideoMAE), ``See [here](docs/env_setup.md) for setting up the environment``
# (Equiformer): a document the README links, named for installing or setting up the environment
_DOC_LINK = re.compile(r"\]\(\s*\.?/?([\w./-]+\.md)(?:#[^)\s]*)?\s*\)")
_INSTALL_DOC = re.compile(r"(?i)install|env(?:ironment)?[_-]?setup|^setup|^environment")


def _install_documents(text: str, root: Path) -> list[str]:
    """The tree's markdown documents the README links whose name says they install (``INSTALL.md``,
    ``docs/env_setup.md``), in README order (the scan's file list holds no markdown: read from ``root``)."""
    out: list[str] = []
    for m in _DOC_LINK.finditer(text):
        rel = posixpath.normpath(m.group(1))
        if rel.startswith("..") or rel in out or not _INSTALL_DOC.search(posixpath.basename(rel)):
            continue
        if (root / rel).is_file():
            out.append(rel)
    return out


def _admits(spec: str, version: str) -> bool:
    """A requirement's version spec (``>=1.4.2``, none) admits ``version``: an unreadable spec counts as admitting."""
    spec = spec.strip().rstrip(",").replace(" ", "")
    if not spec:
        return True
    try:
        return SpecifierSet(spec).contains(version)
    except InvalidSpecifier:
        return True


def _before_wheels(spec: str, package: str) -> bool:
    """A version spec that admits no release from the package's first Python 3.10 wheel on: neither that release, a
    far later one, nor any release the spec itself names at or after it (``==1.26.4`` admits itself)."""
    first = _FIRST_PY310_WHEEL[package]
    named = [v for v in re.findall(r"\d+(?:\.\d+)*", spec) if Version(v) >= Version(first)]
    return not any(_admits(spec, v) for v in (first, "999", *named))


def _doc_text(root: Path, rel: str, read: Callable[[str], str | None], rels: list[str]) -> str | None:
    text = read(rel) if rel in rels else None
    if text is None:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = None
    return text


_DOC = re.compile(r"([\w./-]+\.md): `")
# ``name="open_flamingo"`` in setup.py, ``name = "open-flamingo"`` in pyproject.toml/setup.cfg
_DIST_NAME = re.compile(r"""^\s*name\s*=\s*["']([A-Za-z0-9][\w.-]*)["']""", re.M)
_SETUP_NAME = re.compile(r"""\bname\s*=\s*["']([A-Za-z0-9][\w.-]*)["']""")


def _dist(word: str) -> str:
    """A distribution name as pip compares it (PEP 503): lower case, runs of ``-_.`` one ``-``."""
    return re.sub(r"[-_.]+", "-", word.split("[", 1)[0].strip("'\"")).lower()


# ``name=PACKAGE_NAME`` in setup.py, the constant assigned at module level (facenet-pytorch's)
_SETUP_NAME_CONSTANT = re.compile(r"""\bname\s*=\s*([A-Za-z_]\w*)\s*[,)]""")


def _own_distribution(read: Callable[[str], str | None], rels: list[str]) -> str | None:
    """The distribution name the repository's root packaging file declares, normalised, or None."""
    for rel, pattern in (("pyproject.toml", _DIST_NAME), ("setup.cfg", _DIST_NAME), ("setup.py", _SETUP_NAME)):
        if rel in rels and (m := pattern.search(read(rel) or "")) is not None:
            return _dist(m.group(1))
    text = (read("setup.py") or "") if "setup.py" in rels else ""
    if (m := _SETUP_NAME_CONSTANT.search(text)) is not None:
        value = re.search(rf"""^{m.group(1)}\s*=\s*["']([A-Za-z0-9][\w.-]*)["']""", text, re.M)
        return _dist(value.group(1)) if value is not None else None
    return None  # an entry's ``how``: the sub-folder document whose command runs it


def install_pins(
    root: Path,
    read: Callable[[str], str | None],
    rels: list[str],
    findings: list[Finding],
    entries: Mapping[str, str] | None = None,
) -> list[Finding]:
    """The ``install-pin`` findings of a tree (torch and TensorFlow 1.x pins in requirement files and the README's
    pip lines), blocking where the README's install installs them; the package lines of nvcc-built libraries the
    README's install installs become blocking too. A sub-folder document whose commands are the default path
    (``entries``: LoRA's ``examples/NLG/README.md``) installs its files from its own folder."""
    found = readme_path(root)
    readme = found.name if found is not None else None
    text = _doc_text(root, readme, read, rels) if readme is not None else None
    installed, pip_lines = _installs(text or "")
    own = _own_distribution(read, rels)
    if own is not None and any(own in {_dist(w) for w in args.split()} for _, args in pip_lines):
        # ``pip install open-flamingo``: the repository's own package from the index, with the install_requires
        # (and pins) its packaging file declares
        installed += [f for f in ("setup.py", "pyproject.toml", "setup.cfg") if f in rels]
    docs = sorted({m.group(1) for how in (entries or {}).values() if (m := _DOC.match(how)) and "/" in m.group(1)})
    for doc in docs:
        base = doc.rpartition("/")[0]
        files, _ = _installs(_doc_text(root, doc, read, rels) or "")
        installed += [f"{base}/{f}" for f in files]
    # the pip lines of a root document whose commands are the default path (DeiT's README_deit.md: ``pip install
    # timm==0.3.2``) install as the README's own do
    command_docs = sorted({m.group(1) for how in (entries or {}).values() if (m := _DOC.match(how))} - {readme or ""})
    doc_pips = [
        (d, n, a) for d in command_docs if "/" not in d for n, a in _installs(_doc_text(root, d, read, rels) or "")[1]
    ]
    # ``bash install.sh`` in the README (Graphormer's, whose first line pins ``torch==1.9.1+cu111``): the script's pip
    # lines and the files they install are the README's install
    # the README's install scripts and the install document it links (VideoMAE's "follow the instructions in
    # [INSTALL.md](INSTALL.md)"): their pip lines and the files they install are the README's install
    install_docs = _install_scripts(text or "", rels) + _install_documents(text or "", root)
    for script in install_docs:
        files, lines = _installs(_doc_text(root, script, read, rels) or "")
        installed += files
        doc_pips += [(script, n, a) for n, a in lines]
    promoted = promoted_folders(entries or {})
    rule = RULES[RULE]
    out: list[Finding] = []
    # a conda environment file an install command names (Equiformer's ``env/env_equiformer.yml``) whatever its name
    candidates = [r for r in rels if _requirement_file(r) or (r in installed and r.endswith((".yml", ".yaml")))]
    readme_lines = (text or "").splitlines()
    floors = {
        f
        for n, line in enumerate(readme_lines, start=1)
        for f in _conda_files(line)
        if _OR_LATER.search("\n".join(readme_lines[max(0, n - 6) : n]))
    }
    # a CUDA build of torch (``torch==2.4.1+cu121``) is the cuda-version-pin item's line: it blocks as installed there
    cuda_builds = {(f.file, f.line): f for f in findings if f.rule == "cuda-version-pin" and f.porting}
    extras: dict[str, set[int]] = {}
    for rel in candidates:
        body = read(rel)
        extras[rel] = _optional_lines(rel, body or "")
        for n, message, kind in _pins(body or ""):
            if kind == "nvcc" or n in extras[rel]:
                continue  # the package rules hold nvcc lines; an optional extra is not installed
            if (rel, n) in cuda_builds:
                if rel in installed:
                    held = cuda_builds[(rel, n)]
                    held.severity = "blocking"
                    held.reason = f"the README installs {rel} (`pip install`): {message} ({rel}:{n})"
                continue
            snippet = (body or "").splitlines()[n - 1]
            f = Finding.from_rule(
                RULES[LIGHTNING] if kind == LIGHTNING else rule,
                file=rel,
                line=n,
                message=message,
                snippet=snippet,
                context=context_of_path(rel, rels, promoted),
            )
            how = "`conda env create`" if rel.endswith((".yml", ".yaml")) else "`pip install`"
            if rel in floors and f.context is None:
                # EDM's "PyTorch 1.12.0 (or later)" above its ``conda env create -f environment.yml``
                f.reason = f"the README asks for this release or later: {message} ({rel}:{n})"
            elif rel in installed and f.context is None:
                f.severity = "blocking"
                f.reason = f"the README installs {rel} ({how}): {message} ({rel}:{n})"
            out.append(f)
    doc_lines = (text or "").splitlines()
    for n, line in enumerate(doc_lines, start=1):
        if "conda" in line and (py := _OLD_PYTHON.search(line)) is not None:
            # StreamingLLM's ``conda create -yn streaming python=3.8``: the environment the README builds
            message = f"python={py.group(1)} (conda): {_PYTHON_WHY}"
            f = Finding.from_rule(rule, file=readme, line=n, message=message, snippet=py.group(0).strip()[:200])
            f.severity = "blocking"
            f.reason = f"the README's install command: {message} ({readme}:{n})"
            out.append(f)
        for m in _CONDA.finditer(line):
            pin = _CONDA_TORCH.search(m.group(1))
            if pin is None or (pin.group(1) not in ("=", "==") and not _below(pin.group(2), _NEURON_TORCH)):
                continue
            message = (
                f"pytorch{pin.group(1)}{pin.group(2)} (conda): the install replaces the torch build TorchNeuron ships"
            )
            f = Finding.from_rule(rule, file=readme, line=n, message=message, snippet=m.group(0).strip()[:200])
            if _OR_LATER.search("\n".join(doc_lines[max(0, n - 6) : n])):
                # CLIP's "install PyTorch 1.7.1 (or later)" above its conda line: the pin is a floor, not a stop
                f.reason = f"the README asks for this release or later: {message} ({readme}:{n})"
            else:
                f.severity = "blocking"
                f.reason = f"the README's install command: {message} ({readme}:{n})"
            out.append(f)
    texts: dict[str, list[str]] = {}
    # ``pip install laion-clap`` in the quick start: the repository's own package from the index is the user's
    # install, and a torch pinned on a later README line is another environment's (CLAP's "install the same
    # environment as we use" for reusing the repository's code): it blocks when that environment is built
    user = next((n for n, args in pip_lines if own is not None and own in {_dist(w) for w in args.split()}), None)
    choices: dict[str, dict[int, str]] = {}
    for doc, n, args in [(readme or "", n, a) for n, a in pip_lines] + doc_pips:
        if doc not in texts:
            texts[doc] = (_doc_text(root, doc, read, rels) or "").splitlines() if doc else []
            choices[doc] = device_choices(texts[doc])
        if n in choices[doc]:
            continue  # one of the README's per-device installs: a Neuron host takes TorchNeuron's build instead
        line = texts[doc][n - 1] if 0 < n <= len(texts[doc]) else args
        for _, message, kind in _pins(args):
            # flash-attn's setup builds (or fetches a CUDA wheel for) its kernels unless told to skip; mamba-ssm and
            # causal-conv1d now install without their CUDA build by default (mamba's README at e9594ce says so)
            if kind == "nvcc" and (not message.startswith("flash") or _SKIPS_BUILD.search(line)):
                continue
            f = Finding.from_rule(
                RULES[LIGHTNING] if kind == LIGHTNING else rule,
                file=doc,
                line=n,
                message=message,
                snippet=f"pip install {args}".strip(),
            )
            stops = ": the install fails on a Trainium host" if kind == "nvcc" else ""
            if user is not None and doc == readme and n > user:
                f.reason = (
                    f"blocks when this environment is built: the README's install is `pip install {own}` "
                    f"({readme}:{user}), and this later line pins {message}{stops} ({doc}:{n})"
                )
            else:
                f.severity = "blocking"
                f.reason = f"the README's install command: {message}{stops} ({doc}:{n})"
            out.append(f)
    out += _prebuilt_ops([(d, _doc_text(root, d, read, rels) or "") for d in [readme or "", *install_docs] if d])
    for f in findings:
        if (
            f.rule in _NVCC_RULES
            and f.file in installed
            and f.porting
            and (f.line or 0) not in extras.get(f.file, set())
            and _NVCC_BUILDS.search(f.snippet or f.message)
        ):
            f.severity = "blocking"
            f.reason = (
                f"the README installs {f.file} (`pip install`), and {f.message.removeprefix('package ')} "
                f"{INSTALL_FAILS}: without the CUDA toolkit (nvcc) on a Trainium host the install fails "
                f"({f.file}:{f.line})"
            )
    return out


def _prebuilt_ops(docs: list[tuple[str, str]]) -> list[Finding]:
    """``DS_BUILD_OPS=1 pip install deepspeed`` in the README's install (or a document or script it runs): blocking."""
    out: list[Finding] = []
    for doc, text in docs:
        for n, line in enumerate(text.splitlines(), start=1):
            m = _DS_BUILD.search(line)
            if m is None:
                continue
            message = (
                f"DS_BUILD_{m.group(1)}=1 pip install deepspeed pre-builds DeepSpeed's CUDA ops at install time "
                "(needs the CUDA toolkit, nvcc)"
            )
            f = Finding.from_rule(RULES[RULE], file=doc, line=n, message=message, snippet=m.group(0).strip()[:200])
            f.severity = "blocking"
            f.reason = f"the README's install command: {message}: the install fails on a Trainium host ({doc}:{n})"
            out.append(f)
    return out


def _requirement_file(rel: str) -> bool:
    """``requirements*.txt`` (any folder; LoRA's ``requirement.txt`` too), ``setup.py``/``setup.cfg``/``pyproject.toml``
    at the root."""
    name = rel.rpartition("/")[2]
    if name.startswith("environment") and name.endswith((".yml", ".yaml")):
        return True  # a conda environment file (its pins count where a README command installs it)
    return (name.startswith("requirement") and name.endswith(".txt")) or rel in (
        "setup.py",
        "setup.cfg",
        "pyproject.toml",
    )

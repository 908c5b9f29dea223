"""The documents a README sends its reader to (issue 27): the README itself by any case of its name, the root
documents it links, the shell scripts it links or names, the folder documents it points at and the quick-start page
of hosted documentation whose sources are in the tree. ``entry.py`` reads commands from them, in this order.
"""

from __future__ import annotations

import re
from pathlib import Path

_README = ("README.md", "README.rst", "README.txt", "README")


def readme_path(root: Path) -> Path | None:
    """The repository's README: by its usual names, else whatever case the file has (nnU-Net's ``readme.md``)."""
    hit = next((root / n for n in _README if (root / n).is_file()), None)
    if hit is not None:
        return hit
    try:
        names = {p.name.lower(): p for p in root.iterdir() if p.is_file()}
    except OSError:
        return None
    return next((names[n.lower()] for n in _README if n.lower() in names), None)


# A relative link to a folder (``[sft](sft)``, ``(scripts/)``): no dot-extension in its last part.
_DIR_LINK = re.compile(r"\]\(\s*(\.?/?[\w-]+(?:/[\w-]+)*/?)\s*\)")
# A relative link to a shell script (``[scripts/launch.sh](scripts/launch.sh)``).
_SH_LINK = re.compile(r"\]\(\s*(\.?/?[\w-]+(?:/[\w.-]+)*\.sh)\s*\)")
# ``git clone https://github.com/OWNER/REPO.git`` in a README: the repository it documents.
_CLONE = re.compile(
    r"git\s+clone\s+(?:--?[\w-]+(?:=\S+)?\s+)*https?://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?:[\s/]|$)"
)
# ``https://github.com/OWNER/REPO/blob/BRANCH/PATH``: a file of a repository at some branch.
_BLOB = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/blob/[\w.-]+/([\w./#-]+)")

_DETAILS = re.compile(r"<details>.*?</details>", re.S | re.I)
# A relative link to a markdown file (``[FINETUNE.md](FINETUNE.md)``, ``(./PRETRAIN.md#pre-training)``, or HTML's
# ``<a href="README_deit.md">``).
_LINK = re.compile(r"\]\(\s*([\w./-]+\.md(?:#[^)\s]*)?)\s*\)|href=[\"']([\w./-]+\.md(?:#[^\"'\s]*)?)[\"']")


def linked_documents(text: str, root: Path) -> list[Path]:
    """Root-level markdown files a README links by a relative link (``[FINETUNE.md](FINETUNE.md)`` or ``<a
    href="README_deit.md">``), in link order."""
    out: list[Path] = []
    for m in _LINK.finditer(text):
        name = (m.group(1) or m.group(2)).split("#", 1)[0].removeprefix("./")
        path = root / name
        if name and "/" not in name and path not in out and path.is_file():
            out.append(path)
    return out


def own_blob_links(text: str, present: set[str], suffix: str) -> list[str]:
    """Files of the tree a README links by their GitHub address (``[`pretrain.sh`](https://github.com/haotian-liu/
    LLaVA/blob/main/scripts/v1_5/pretrain.sh)``), when its ``git clone`` command names that repository: the README
    points at its own file. Links inside a ``<details>`` block (folded away: an alternative setup) are left out."""
    clone = _CLONE.search(text)
    if clone is None:
        return []
    own = clone.group(1).lower()
    out: list[str] = []
    for m in _BLOB.finditer(_DETAILS.sub("", text)):
        rel = m.group(2).split("#", 1)[0]
        if m.group(1).lower() == own and rel.endswith(suffix) and rel in present and rel not in out:
            out.append(rel)
    return out


# A shell script of the tree named in backticks in the README's prose: a script it tells the user to run.
_TICKED_SCRIPT = re.compile(r"(?<![\w`])`(\.?/?[\w-]+(?:/[\w.-]+)*\.sh)`(?!`)")


def linked_scripts(text: str, root: Path, present: set[str] | None = None) -> list[Path]:
    """Shell scripts the README links directly, or in a folder it links (``[finetuning](sft)`` and
    ``sft/script.sh``), or by their GitHub address (``own_blob_links``): a README that points at scripts runs its
    code the way those scripts do; read after the README's own commands."""
    out: list[Path] = [root / rel for rel in own_blob_links(text, present or set(), ".sh")]
    for m in _SH_LINK.finditer(text):  # ``[scripts/launch.sh](scripts/launch.sh)`` (consistency_models)
        script = root / m.group(1).removeprefix("./").lstrip("/")
        if script.is_file() and script.resolve().is_relative_to(root.resolve()) and script not in out:
            out.append(script)
    for m in _TICKED_SCRIPT.finditer(text):  # "In `run_unsup_example.sh`, we provide ... example" (SimCSE)
        script = root / m.group(1).removeprefix("./")
        if script.is_file() and script.resolve().is_relative_to(root.resolve()) and script not in out:
            out.append(script)
    for m in _DIR_LINK.finditer(text):
        folder = root / m.group(1).strip("./")
        if m.group(1).strip("./") and folder.is_dir() and folder.resolve().is_relative_to(root.resolve()):
            if _sub_project(folder):
                continue  # its own workflow, which the README refers to: an alternative, not the default path
            out += [p for p in sorted(folder.glob("*.sh")) if p not in out]
    return out


_OWN_INSTALL = ("requirements.txt", "setup.py", "pyproject.toml", "environment.yml", "environment.yaml")


def _sub_project(folder: Path) -> bool:
    """A folder with its own README and its own install (Depth-Anything-V2's ``metric_depth/``: a README, a
    ``requirements.txt``, its own copy of the model package and a ``dist_train.sh``): a project of its own that the
    root README refers to ("Please refer to [metric depth estimation](./metric_depth)"), whose scripts run its own
    workflow. TinyLlama's ``sft/`` (scripts only) is the README's own fine-tuning step."""
    return any((folder / n).is_file() for n in _README) and any((folder / n).is_file() for n in _OWN_INSTALL)


# A folder named in backticks in the README's prose (``follow the instructions in `examples/NLG/` ``).
_TICKED_FOLDER = re.compile(r"`\.?/?([\w-]+(?:/[\w-]+)+)/?`")


def folder_documents(text: str, root: Path) -> list[Path]:
    """Documents in sub-folders that the README sends the user to (``[readme](applications/dc_ae/README.md)``, a
    linked folder's ``README.md``, or one named in backticks: LoRA's "follow the instructions in `examples/NLG/`"),
    in the order the README names them; read only when the README and its root documents give no command."""
    out: list[Path] = []
    marks = [(m.start(), (m.group(1) or m.group(2) or "").split("#", 1)[0]) for m in _LINK.finditer(text)]
    marks += [(m.start(), f"{m.group(1).strip('./')}/README.md") for m in _DIR_LINK.finditer(text)]
    marks += [(m.start(), f"{m.group(1)}/README.md") for m in _TICKED_FOLDER.finditer(text)]
    for _, name in sorted(marks):
        path = root / name.removeprefix("./")
        if (
            "/" in name.strip("/")
            and path not in out
            and path.is_file()
            and path.resolve().is_relative_to(root.resolve())
        ):
            out.append(path)
    return out


# A README's link to its hosted documentation (``https://chemprop.readthedocs.io/en/main/``).
_HOSTED_DOCS = re.compile(r"https?://[\w.-]+\.(?:readthedocs\.io|github\.io)\b")
_QUICKSTART = re.compile(r"^(?:quick[-_]?start|getting[-_]started|get[-_]started)\.(?:md|rst)$", re.I)


def hosted_docs_pages(text: str, root: Path) -> list[Path]:
    """The quick-start pages of the documentation sources in the tree (``docs/source/quickstart.rst``), when the
    README links its hosted documentation and gives no command or document of its own to run (Chemprop's README:
    "Documentation can be found [here](https://chemprop.readthedocs.io/...)"): that page is the first run the user
    is sent to. Shallowest first."""
    if _HOSTED_DOCS.search(text) is None:
        return []
    pages = [
        p
        for folder in ("docs", "doc", "documentation")
        if (root / folder).is_dir()
        for p in (root / folder).rglob("*")
        if _QUICKSTART.match(p.name) and p.is_file() and len(p.relative_to(root).parts) <= 4
    ]
    return sorted(pages, key=lambda p: (len(p.parts), p.as_posix()))

"""The README command that runs an entry point, read as a command line (issue 27: settings a command passes).

``entry.py`` keeps, for each entry point, the first line of the command that runs it (``README: `torchrun ...
train.py```); here that command is found again in its document with its continuation lines (a trailing ``\\``) and
split into ``--flag value`` pairs with ``shlex``, so that a pass can judge what the command asks for: a Trainer's
``TrainingArguments`` flags (``hf_stack.py``), or Lightning's ``--accelerator=cuda`` (below).
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.families import _module_names, imports_of
from accelpilot.porting.scan.hydra_config import hydra_default, hydra_group_default, hydra_override, yaml_section
from accelpilot.porting.scan.nodes import dotted

# Lightning (2.6.6, ``lightning/fabric/connector.py``): an accelerator that is not available raises
# ``RuntimeError("`CUDAAccelerator` can not run on your system since the accelerator is not available ...")``.
# PyTorch Lightning 1.4.2's ``utilities/device_parser.py`` (read in its wheel): requested GPU ids that CUDA does not
# list raise; Lightning 2.x removed the ``gpus`` argument itself.
TRAINER_GPUS_STOP = (
    "PyTorch Lightning's device parser raises MisconfigurationException('You requested GPUs: [0] But your machine "
    "only has: []') when CUDA lists no GPU (pytorch-lightning 1.4.2, utilities/device_parser.py; 2.x removed `gpus`)"
)
_GPUS = re.compile(r"--gpus[=\s]")
LIGHTNING_STOP = (
    "Lightning raises RuntimeError('`CUDAAccelerator` can not run on your system since the accelerator is not "
    "available') on a host without CUDA (lightning 2.6.6, fabric/connector.py), and its CLI offers no Neuron "
    "accelerator: the launch and the Fabric runtime (strategy, precision plugin) move to torchrun and "
    "torch.distributed on the neuron device"
)
_CONTINUED = re.compile(r"[ \t]*\\[ \t]*\r?\n[ \t]*")
_LIGHTNING = re.compile(r"\b(?:lightning|fabric)\s+run\b")


def doc_command(root: Path, how: str) -> list[tuple[int, str, str]]:
    """The README command ``how`` names (``README: `cmd```), with its continuation lines: (line, document, text)."""
    m = re.match(r"([\w./-]+): `(.*)`$", how, re.S)
    if m is None:
        return []
    label = "README.md" if m.group(1) == "README" else m.group(1)  # the document's path in the scan
    doc = root / label
    try:
        lines = doc.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    head = m.group(2).strip()
    for group in logical_lines(label, lines):
        logical = join_continued("\n".join(text for _, _, text in group)).strip()
        if head and (logical[:120] == head or logical.startswith(head) or group[0][2].strip().startswith(head)):
            return group
    return []


def logical_lines(label: str, lines: list[str]) -> Iterator[list[tuple[int, str, str]]]:
    """Each line of a document with its continuation lines (a trailing ``\\``): [(line, document, text)]."""
    i = 0
    while i < len(lines):
        group = [(i + 1, label, lines[i])]
        while group[-1][2].rstrip().endswith("\\") and group[-1][0] < len(lines):
            group.append((group[-1][0] + 1, label, lines[group[-1][0]]))
        yield group
        i = group[-1][0]


def join_continued(text: str) -> str:
    """``cmd \\`` + newline + ``    --flag`` as one line (how ``entry.py`` reads a command over several lines)."""
    return _CONTINUED.sub(" ", text)


def command_flags(command: list[tuple[int, str, str]]) -> list[tuple[str, str | None, int, str]]:
    """(flag, value, line, line text) of each ``--flag [value]`` of a command."""
    out: list[tuple[str, str | None, int, str]] = []
    for ln, _, text in command:
        try:
            toks = shlex.split(text.rstrip().rstrip("\\"), comments=True)
        except ValueError:
            toks = text.split()
        for i, t in enumerate(toks):
            if not t.startswith("--") or len(t) < 3:
                continue
            name, eq, val = t[2:].partition("=")
            if not eq:
                nxt = toks[i + 1] if i + 1 < len(toks) else None
                val = nxt if nxt is not None and not nxt.startswith("-") else ""
            out.append((name.replace("-", "_"), val, ln, text))
    return out


def _lightning_trainer(path: Path) -> bool:
    """The script builds a PyTorch Lightning ``Trainer`` (read from its bytes)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return (b"pytorch_lightning" in data or b"lightning.pytorch" in data) and b"Trainer" in data


def lightning_settings(root: Path, how: dict[str, str], rels: Sequence[str] = ()) -> list[Finding]:
    """``lightning run model --accelerator=cuda ... script.py`` as an entry point's command, or ``--gpus 0,`` passed
    to a script that builds a PyTorch Lightning ``Trainer``, or the script's own ``Trainer(gpus=...)`` with a
    default of one GPU or more the command leaves as it is: blocking."""
    out: list[Finding] = []
    for script, cmd in how.items():
        if not _LIGHTNING.search(cmd):
            if script.endswith(".py") and _lightning_trainer(root / script):
                # every command that runs the script (RWKV-LM's ``--accelerator cpu`` prepare script, then its
                # ``--accelerator gpu`` run script), the first that asks for CUDA
                asked: list[Finding] = []
                for each in [cmd, *getattr(how, "others", {}).get(script, ())]:
                    asked = asked or (_trainer_gpus(root, script, each) if _GPUS.search(each) else [])
                    asked = asked or _trainer_accelerator(root, script, each)
                out += asked or trainer_gpus_default(root, script, cmd, rels)
            continue
        command = doc_command(root, cmd)
        for name, val, ln, text in command_flags(command):
            if name == "accelerator" and (val or "").lower() in ("cuda", "gpu"):
                message = f"--accelerator={val} (Lightning on CUDA)"
                out.append(_lightning_stop(script, cmd, command[0][1], ln, text, message, LIGHTNING_STOP))
    return out


# A script's own ``--device`` option (``parser.add_argument('--device', ...)``, ``"--device"``): it places on what the
# command names.
_DEVICE_OPTION = re.compile(r"""add_argument\(\s*(?:['"]-\w['"]\s*,\s*)?['"]--device['"]""")
_CUDA_VALUE = re.compile(r"^(?:cuda(?::\d+)?|gpu)$", re.I)
DEVICE_FLAG_STOP = (
    "the script places its model and tensors on the device its --device option names, and torch raises "
    "('Torch not compiled with CUDA enabled', or no CUDA device) on a host without CUDA: the command passes the "
    "neuron device instead"
)


def device_flag(root: Path, how: dict[str, str]) -> list[Finding]:
    """``python inference.py ... --device cuda`` (RobustVideoMatting's documented run) where the script declares its
    own ``--device`` option: the command as written places the run on CUDA, so it stops without CUDA (blocking,
    on the document's line). The first such command of each entry point."""
    out: list[Finding] = []
    for script, cmd in how.items():
        text = _read(root / script) if script.endswith(".py") else None
        if text is None or "--device" not in text or _DEVICE_OPTION.search(text) is None:
            continue
        for each in [cmd, *getattr(how, "others", {}).get(script, ())]:
            command = doc_command(root, each)
            hit = next(
                (
                    (val, ln, line)
                    for name, val, ln, line in command_flags(command)
                    if name == "device" and val and _CUDA_VALUE.match(val)
                ),
                None,
            )
            if hit is None:
                continue
            val, ln, line = hit
            doc = command[0][1]
            f = Finding.from_rule(
                RULES["cuda-device-literal"],
                file=doc,
                line=ln,
                message=f"--device {val} (the command asks for CUDA)",
                snippet=line.strip()[:200],
            )
            f.severity = "blocking"
            f.reason = f"entry point {script} ({each[:160]}): {DEVICE_FLAG_STOP}: {doc}:{ln}"
            out.append(f)
            break
    return out


def _lightning_stop(script: str, cmd: str, doc: str, ln: int, text: str, message: str, stop: str) -> Finding:
    """A blocking ``lightning-cuda`` line of the document holding the entry point's command, with why it stops."""
    f = Finding.from_rule(RULES["lightning-cuda"], file=doc, line=ln, message=message, snippet=text.strip()[:200])
    f.severity = "blocking"
    f.reason = f"entry point {script} ({cmd[:160]}): {stop}: {doc}:{ln}"
    return f


def _trainer_accelerator(root: Path, script: str, cmd: str) -> list[Finding]:
    """``--accelerator gpu`` (or ``cuda``) passed to a script that builds its Lightning ``Trainer`` from the command
    line (RWKV-LM's ``Trainer.from_argparse_args`` under ``demo-training-run.sh``): Lightning asks for CUDA."""
    command = doc_command(root, cmd)
    return [
        _lightning_stop(
            script, cmd, command[0][1], ln, text, f"--accelerator {val} (Lightning on CUDA)", LIGHTNING_STOP
        )
        for name, val, ln, text in command_flags(command)
        if name == "accelerator" and (val or "").lower() in ("cuda", "gpu")
    ][:1]


def _trainer_gpus(root: Path, script: str, cmd: str) -> list[Finding]:
    """``--gpus N`` (not 0) in the command of a Lightning Trainer script: Lightning's device parser raises."""
    command = doc_command(root, cmd)
    return [
        _lightning_stop(
            script,
            cmd,
            command[0][1],
            ln,
            text,
            f"--gpus {val} (Lightning's Trainer asks for CUDA GPUs)",
            TRAINER_GPUS_STOP,
        )
        for name, val, ln, text in command_flags(command)
        if name == "gpus" and (val or "").strip() not in ("", "0", "None", "none", "null")
    ]


def trainer_gpus_default(root: Path, script: str, cmd: str, rels: Sequence[str]) -> list[Finding]:
    """The script's ``Trainer(gpus=...)`` (NeRF-pl's ``gpus=hparams.num_gpus``) when it asks for one GPU or more on
    the README command: a literal, or an option the command does not pass whose ``add_argument`` default (in the
    script or a module it imports: ``opt.py``'s ``--num_gpus`` default 1) is one or more. Lightning's device parser
    then raises on a host without CUDA."""
    text = _read(root / script)
    try:
        tree = ast.parse(text or "")
    except (SyntaxError, ValueError):
        return []
    passed = {name: val for name, val, _, _ in command_flags(doc_command(root, cmd))}
    mods = _module_names(rels, {script: cmd})
    sources = [text or "", *(_read(root / r) or "" for r in sorted(imports_of(script, (text or "").encode(), mods)))]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Trainer")):
            continue
        grouped = _trainer_group(root, script, tree, node, cmd)
        if grouped is not None:
            return [grouped]
        for k in node.keywords:
            if k.arg != "gpus":
                continue
            value, option, hydra = k.value, None, None
            if isinstance(value, ast.Call) and len(value.args) == 1 and ast.unparse(value.func) in _WRAPS:
                value = value.args[0]  # ``gpus=list(cfg.gpus)``
            key = _hydra_key(value)
            if key is not None and (found := hydra_override(cmd, key) or hydra_default(root, script, tree, key)):
                # Pointnet2's ``cfg.gpus``: ``gpus: [0]`` in its config.yaml
                asked: str | None = found
                hydra = f"{key}={found} ({'the command' if hydra_override(cmd, key) else 'its Hydra config'})"
            elif isinstance(value, ast.Attribute):
                option = value.attr
                given = passed.get(option)
                asked = given if given is not None else _default_of(option, sources)
            else:
                asked = str(value.value) if isinstance(value, ast.Constant) else None
            if asked is None or asked.strip() in ("", "0", "None", "none", "null", "[]"):
                continue
            how = hydra or (f"--{option} {asked}" if option else asked)
            line = (text or "").splitlines()[k.value.lineno - 1]
            f = Finding.from_rule(
                RULES["lightning-cuda"],
                file=script,
                line=k.value.lineno,
                message=f"Trainer(gpus={ast.unparse(k.value)}) with {how} (Lightning's Trainer asks for CUDA GPUs)",
                snippet=line.strip()[:200],
            )
            f.severity = "blocking"
            f.reason = f"entry point {script} ({cmd[:160]}): {TRAINER_GPUS_STOP}: {script}:{k.value.lineno}"
            return [f]
    return []


_WRAPS = frozenset({"list", "tuple", "int"})


def _trainer_group(root: Path, script: str, tree: ast.Module, node: ast.Call, cmd: str) -> Finding | None:
    """``pl.Trainer(**config.trainer)`` where the Hydra group ``trainer``'s default option asks for a GPU
    (``accelerator: gpu``, or ``gpus`` of one or more) and the command does not override it (S4)."""
    star = next((k.value for k in node.keywords if k.arg is None), None)
    group = _hydra_key(star) if star is not None else None
    found = hydra_group_default(root, script, tree, group) if group and "." not in group else None
    if found is None and isinstance(star, ast.Subscript) and isinstance(star.slice, ast.Constant):
        # ``Trainer(**config['trainer_params'])`` over a plain YAML config (PyTorch-VAE's ``gpus: [1]``)
        group = None
        found = yaml_section(root, script, _read(root / script) or "", cmd, str(star.slice.value))
    if found is None or star is None:
        return None
    path, settings = found
    override = (lambda k: hydra_override(cmd, f"{group}.{k}")) if group else (lambda k: None)
    accel = str(override("accelerator") or settings.get("accelerator", "")).lower()
    gpus = str(override("gpus") or settings.get("gpus", "")).strip()
    if accel not in ("gpu", "cuda") and gpus in ("", "0", "None", "none", "null", "[]"):
        return None
    asked = f"accelerator: {accel}" if accel in ("gpu", "cuda") else f"gpus: {gpus}"
    f = Finding.from_rule(
        RULES["lightning-cuda"],
        file=script,
        line=node.lineno,
        message=f"Trainer(**{ast.unparse(star)}) with {asked} in {path} (Lightning's Trainer asks for CUDA)",
        snippet=ast.unparse(node)[:200],
    )
    f.severity = "blocking"
    stop = LIGHTNING_STOP if accel in ("gpu", "cuda") else TRAINER_GPUS_STOP
    f.reason = f"entry point {script} ({cmd[:160]}): {stop}: {path}"
    return f


def _hydra_key(value: ast.expr) -> str | None:
    """``cfg.trainer.gpus`` -> ``trainer.gpus``: the config key a Hydra ``cfg`` attribute chain reads."""
    head, _, key = (dotted(value) or "").partition(".")
    return key if key and head in ("cfg", "config", "conf") else None


def _default_of(option: str, sources: Sequence[str]) -> str | None:
    """The ``default=`` of ``add_argument('--option', ...)`` in the first source that declares it (a literal)."""
    pattern = re.compile(rf"""add_argument\(\s*['"]--{re.escape(option)}['"][^)]*?\bdefault\s*=\s*([\w.'"-]+)""", re.S)
    for body in sources:
        m = pattern.search(body)
        if m is not None:
            return m.group(1).strip("'\"")
    return None


# torch 2.x's ``torch.distributed.launch`` (without ``--use-env``) passes ``--local-rank=<rank>`` (dashed) to the
# script; a parser that declares only ``--local_rank`` exits with "unrecognized arguments" (torch 2.13's
# torch/distributed/run.py documents it). torchrun sets LOCAL_RANK instead and passes nothing.
_LAUNCH = re.compile(r"torch\.distributed\.launch\b")
_USE_ENV = re.compile(r"--use[-_]env\b")
LOCAL_RANK_STOP = (
    "torch.distributed.launch on torch >= 2.0 (the torch TorchNeuron needs) passes --local-rank=<rank>, and a parser "
    "that declares only --local_rank exits with 'unrecognized arguments: --local-rank=0' (documented in torch 2.13's "
    "torch/distributed/run.py): declare both spellings, or read LOCAL_RANK under torchrun"
)


def local_rank_flag(root: Path, how: dict[str, str], rels: list[str]) -> list[Finding]:
    """An entry point launched by ``python -m torch.distributed.launch`` (without ``--use_env``) that parses only
    ``--local_rank``: blocking, at the parser's line."""
    out: list[Finding] = []
    mods = _module_names(rels, how)
    for script, cmd in how.items():
        if not (_LAUNCH.search(cmd) and not _USE_ENV.search(cmd) and script.endswith(".py")):
            continue
        text = _read(root / script)
        if text is None or "--local-rank" in text:
            continue
        # the parser's arguments may be declared in a module the script imports (LoRA's ``gpu.py``
        # ``add_gpu_params(parser)``, beside it)
        imported = sorted(imports_of(script, text.encode(), mods))
        for rel, body in [(script, text), *((r, _read(root / r)) for r in imported)]:
            if body is None or "--local_rank" not in body or "--local-rank" in body:
                continue
            n = next((i for i, ln in enumerate(body.splitlines(), 1) if _DECLARED.search(ln)), None)
            if n is None:
                continue
            line = body.splitlines()[n - 1]
            f = Finding.from_rule(
                RULES["launcher-local-rank"], file=rel, line=n, message="--local_rank only", snippet=line
            )
            f.severity = "blocking"
            f.reason = f"entry point {script} ({cmd[:160]}): {LOCAL_RANK_STOP}: {rel}:{n}"
            out.append(f)
            break
    return out


_DECLARED = re.compile(r"""["']--local_rank["']""")  # the parser's argument (one line or many)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def drop_held_lightning(findings: list[Finding]) -> list[Finding]:
    """Without the ``lightning-trainer`` lines where a ``lightning-cuda`` or ``lightning-legacy`` finding already
    holds the move of the Lightning loop to the neuron device (a CUDA launch to replace, a 0.x Trainer to upgrade):
    the same unit of work, counted once."""
    if not any(f.rule in ("lightning-cuda", "lightning-legacy") for f in findings):
        return findings
    return [f for f in findings if f.rule != "lightning-trainer"]

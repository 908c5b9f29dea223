"""Inception-based evaluation (rule ``fid-evaluation``, issue 27: the held-out labellers' FID items of
denoising-diffusion, rosinality's StyleGAN2, score_sde, k-diffusion and consistency models).

A line per file that brings the metric's feature extractor in: an import of pytorch-fid, torch-fidelity, clean-fid,
torchmetrics' FID or TF-GAN, or the repository's own ``class InceptionV3`` (``*InceptionV3*FeatureExtractor``) or
``def fid_inception_v3``. Read from the source text, line by line, behind a byte check: no parse."""

from __future__ import annotations

import re

from accelpilot.porting.scan.patterns import RawFinding

RULE = "fid-evaluation"
_GATE = (b"fid", b"fidelity", b"InceptionV3", b"tensorflow_gan")
_LINE = re.compile(
    rb"^[ \t]*(?:"
    rb"(?:from|import)[ \t]+(?P<lib>pytorch_fid|torch_fidelity|cleanfid|tensorflow_gan|torchmetrics\.image\.fid)\b"
    rb"|class[ \t]+(?P<cls>\w*InceptionV3\w*)[ \t]*[(:]"
    rb"|def[ \t]+(?P<fn>fid_inception_v3)[ \t]*\("
    rb")",
    re.M,
)


def fid_lines(data: bytes) -> list[RawFinding]:
    """The first ``fid-evaluation`` line of one Python source, or none."""
    if not any(g in data for g in _GATE):
        return []
    m = _LINE.search(data)
    if m is None:
        return []
    ln = data.count(b"\n", 0, m.start()) + 1
    what = m.group("lib") or m.group("cls") or m.group("fn") or b""
    kind = "import of" if m.group("lib") else "the repository's"
    text = data[m.start() : data.find(b"\n", m.start()) if b"\n" in data[m.start() :] else len(data)]
    msg = f"{kind} {what.decode()}: an Inception feature extractor for FID/IS evaluation"
    return [(RULE, ln, msg, text.decode("utf-8", "replace").strip(), None, None)]

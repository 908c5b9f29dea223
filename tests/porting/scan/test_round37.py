"""Round 37's tuning fixes (issue 27): calls whose library changed under them (the captioning tutorial's two-field
``pack_padded_sequence`` unpack, Conv-TasNet's ``librosa.output.write_wav``), and such a call in a helper nothing
names (Wav2Lip's ``save_wavenet_wav``)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path

_TRAIN = (
    "import torch\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n\n"
    "def train(scores, targets, lengths):\n"
    "    scores, _ = pack_padded_sequence(scores, lengths, batch_first=True)\n"
    "    packed = pack_padded_sequence(targets, lengths, batch_first=True)\n"
    "    return scores, packed.data\n\n\n"
    "if __name__ == '__main__':\n    train(None, None, None)\n"
)


def test_a_two_field_unpack_of_pack_padded_sequence_blocks_in_an_entry_point(tmp_path: Path) -> None:
    """``scores, _ = pack_padded_sequence(...)``: a PackedSequence has four fields since torch 1.1 (ValueError on
    torch 2.13, tried), a torch item blocking in the README's training script with the torch stack as its reason.
    Near miss: ``packed = pack_padded_sequence(...)`` then ``packed.data`` is no finding."""
    root = write_tree(tmp_path, {"README.md": "```\npython train.py\n```\n", "train.py": _TRAIN})
    items = build_items(scan_path(root, jobs=1).findings)
    found = [(i.title, i.severity, [ln.line for ln in i.lines]) for i in items if i.rule == "stack-upgrade"]
    assert found == [("stack upgrade: APIs removed since the code was written: torch", "blocking", [6])]
    reason = next(i.reason for i in items if i.rule == "stack-upgrade") or ""
    assert "the torch 2.x TorchNeuron needs" in reason


def test_librosa_output_in_a_used_helper_is_an_item_and_in_an_unnamed_one_never_runs(tmp_path: Path) -> None:
    """``librosa.output.write_wav`` (gone since librosa 0.8; 0.11.0's wheel has no ``librosa/output``) in a helper
    the separation script calls is a librosa warning item; the same call in a helper no source of the tree names
    (Wav2Lip's ``save_wavenet_wav``) runs on no path: listed apart as ``unused-helper``. A package's helpers are
    its users' API and stay (not exercised here)."""
    audio = (
        "import librosa\n\n\n"
        "def save(wav, path, sr):\n    librosa.output.write_wav(path, wav, sr)\n\n\n"
        "def save_wavenet_wav(wav, path, sr):\n    librosa.output.write_wav(path, wav, sr=sr)\n"
    )
    root = write_tree(
        tmp_path,
        {
            "README.md": "```\npython separate.py\n```\n",
            "separate.py": "import torch\nfrom audio import save\n\nsave(None, 'x.wav', 8000)\n",
            "audio.py": audio,
        },
    )
    lines = [(f.line, f.severity, f.context) for f in scan_path(root, jobs=1).findings if f.rule == "stack-upgrade"]
    assert lines == [(5, "warning", None), (9, "warning", "unused-helper")]


def test_a_weights_only_load_in_a_function_the_entry_point_calls_blocks(tmp_path: Path) -> None:
    """LaMa's ``predict.py`` calls ``load_checkpoint`` of ``saicinpainting/training/trainers/__init__.py``, whose
    unconditional ``torch.load`` reads a Lightning checkpoint (``state['state_dict']``): torch >= 2.6 loads with
    ``weights_only=True`` and raises, so the entry point stops there. Near miss: a load under ``if resume:`` in the
    called function stays "blocks when that checkpoint is loaded here"."""
    trainers = (
        "import torch\nimport pytorch_lightning as ptl\n\n\n"
        "class Module(ptl.LightningModule):\n    pass\n\n\n"
        "def load_checkpoint(path):\n    state = torch.load(path, map_location='cpu')\n"
        "    return state['state_dict']\n\n\n"
        "def resume(path, resume=False):\n    if resume:\n        state = torch.load(path)\n"
        "        return state['state_dict']\n"
    )
    predict = (
        "import torch\nfrom trainers import load_checkpoint, resume\n\n\n"
        "def main():\n    model = load_checkpoint('big-lama/best.ckpt')\n    resume('x.ckpt')\n\n\nmain()\n"
    )
    root = write_tree(
        tmp_path,
        {"README.md": "```\npython predict.py\n```\n", "predict.py": predict, "trainers/__init__.py": trainers},
    )
    loads = [(f.line, f.severity) for f in scan_path(root, jobs=1).findings if f.rule == "checkpoint-weights-only"]
    assert loads == [(10, "blocking"), (16, "warning")]


def test_an_encoder_and_optimizer_handed_in_and_saved_bare_make_an_object_checkpoint(tmp_path: Path) -> None:
    """The captioning tutorial's ``save_checkpoint(data_name, epoch, encoder, decoder, encoder_optimizer)`` saves
    ``{'encoder': encoder, 'encoder_optimizer': encoder_optimizer}``: the modules and the optimizer pickle their
    classes, so the README's ``caption.py``, which loads that checkpoint, stops under torch >= 2.6's weights-only
    default. Near miss (OpenPCDet): ``optimizer_state = state['optimizer_state']`` saved bare is a state dict."""
    utils = (
        "import torch\n\n\n"
        "def save_checkpoint(data_name, epoch, encoder, decoder, encoder_optimizer):\n"
        "    state = {'epoch': epoch, 'encoder': encoder, 'decoder': decoder, 'encoder_optimizer': encoder_optimizer}\n"
        "    torch.save(state, 'checkpoint_' + data_name + '.pth.tar')\n"
    )
    caption = "import torch\n\ncheckpoint = torch.load('BEST.pth.tar')\ndecoder = checkpoint['decoder']\n"
    plain = (
        "import torch\n\n\ndef save_optimizer(state):\n    optimizer_state = state['optimizer_state']\n"
        "    torch.save({'optimizer_state': optimizer_state}, 'optim.pth')\n"
    )
    files = {"README.md": "```\npython caption.py --model BEST.pth.tar\n```\n", "caption.py": caption}
    root = write_tree(tmp_path / "a", {**files, "utils.py": utils})
    loads = [(f.file, f.severity) for f in scan_path(root, jobs=1).findings if f.rule == "checkpoint-weights-only"]
    assert loads == [("caption.py", "blocking")]
    root = write_tree(
        tmp_path / "b", {**files, "caption.py": caption.replace("'decoder'", "'optimizer_state'"), "utils.py": plain}
    )
    assert [f for f in scan_path(root, jobs=1).findings if f.rule == "checkpoint-weights-only"] == []

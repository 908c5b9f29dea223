"""Round 23's tuning fixes (issue 27): torchaudio >= 2.9 reads and writes audio through torchcodec, which it does not
install (EnCodec's CLI), and has dropped ``info``/``set_audio_backend`` and its ``backend``/``io`` modules; the
README's ``pip install flash-attn`` builds CUDA kernels (alignment-handbook); a setup document the README links from
a sub-folder (Equiformer's ``docs/env_setup.md``) is its install, with the conda file it names."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import rule_lines

from accelpilot.porting.scan import scan_path


def _stack(root: Path) -> list[tuple[str, int, str, str]]:
    return [
        (f.file or "", f.line or 0, f.severity, f.message)
        for f in scan_path(root, jobs=1).findings
        if f.rule == "stack-upgrade"
    ]


def test_torchaudio_load_in_the_entry_point_blocks_and_elsewhere_is_listed(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython compress.py input.wav\n```\n")
    (tmp_path / "compress.py").write_text(
        "import sys\nimport torchaudio\nfrom audio import write\n\n\nif __name__ == '__main__':\n"
        "    wav, sr = torchaudio.load(sys.argv[1])\n    write(wav, sr)\n"
    )
    (tmp_path / "audio.py").write_text(
        "import torchaudio as ta\n\n\ndef write(wav, sr):\n    ta.save('x.wav', wav, sr)\n"
    )
    found = _stack(tmp_path)
    assert [(f, n, s) for f, n, s, _ in found] == [("audio.py", 5, "warning"), ("compress.py", 7, "blocking")]
    assert all("torchcodec" in m for *_, m in found)


def test_removed_torchaudio_functions_and_modules_are_sites(tmp_path: Path) -> None:
    (tmp_path / "data.py").write_text(
        "import torchaudio\nfrom torchaudio.backend import sox_io_backend\n\n\ndef meta(p):\n"
        "    torchaudio.set_audio_backend('soundfile')\n    return torchaudio.info(p)\n"
    )
    messages = [m for *_, m in _stack(tmp_path)]
    assert len(messages) == 3
    assert "ModuleNotFoundError" in messages[0] and all("torchaudio 2.9" in m for m in messages)


def test_other_loads_named_load_are_no_torchaudio_site(tmp_path: Path) -> None:
    (tmp_path / "data.py").write_text(
        "import torch\nimport torchaudio.transforms as T\nimport soundfile\n\n\ndef read(p):\n"
        "    torch.load(p)\n    return soundfile.read(p), T.Resample(16000, 8000)\n"
    )
    assert _stack(tmp_path) == []


def test_the_readmes_flash_attn_install_blocks_unless_it_skips_the_build(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "README.md").write_text('```\nuv pip install "flash-attn==2.7.4.post1" --no-build-isolation\n```\n')
    assert rule_lines(tmp_path, "install-pin") == [("README.md", 2, "blocking")]
    (tmp_path / "README.md").write_text("```\nFLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE pip install flash-attn\n```\n")
    assert rule_lines(tmp_path, "install-pin") == []
    # mamba-ssm's own README (e9594ce): "Installs `mamba-ssm` ... and does not compile CUDA extensions"
    (tmp_path / "README.md").write_text("```\npip install mamba-ssm --no-build-isolation\n```\n")
    assert rule_lines(tmp_path, "install-pin") == []


def test_a_setup_document_the_readme_links_installs_the_conda_file_it_names(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("See [here](docs/env_setup.md) for setting up the environment.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "env_setup.md").write_text("```bash\nconda env create -f env/env_model.yml\n```\n")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "env_model.yml").write_text("name: model\ndependencies:\n  - pytorch=1.10.2=py3.8_cuda11.3\n")
    (tmp_path / "train.py").write_text("import torch\n")
    assert rule_lines(tmp_path, "install-pin") == [("env/env_model.yml", 3, "blocking")]
    (tmp_path / "README.md").write_text("See [the notes](docs/notes.md).\n")  # a linked document that is no setup
    (tmp_path / "docs" / "env_setup.md").rename(tmp_path / "docs" / "notes.md")
    assert (
        rule_lines(tmp_path, "install-pin") == []
    )  # a conda file no install names, and not named environment*.yml: not read

"""Round 35's tuning fixes (issue 27): SadTalker's entry script picks its device in its ``__main__`` block with
``if torch.cuda.is_available() and not args.cpu: args.device = "cuda"``, a choice with a CPU fallback."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def test_a_cuda_probes_body_in_an_entry_scripts_main_block_keeps_its_guard(tmp_path: Path) -> None:
    """In the ``__main__`` block of the script the README runs, the body of ``if torch.cuda.is_available() and not
    args.cpu:`` is an optional path (a warning), as it is outside the block; an unguarded ``torch.cuda.synchronize()``
    there still blocks."""
    (tmp_path / "README.md").write_text("```\npython inference.py\n```\n")
    (tmp_path / "inference.py").write_text(
        "import argparse\nimport torch\n\n"
        "if __name__ == '__main__':\n"
        "    args = argparse.ArgumentParser().parse_args()\n"
        "    if torch.cuda.is_available() and not args.cpu:\n"
        "        args.device = 'cuda'\n"
        "    else:\n"
        "        args.device = 'cpu'\n"
        "    torch.cuda.synchronize()\n"
    )
    found = {(f.rule, f.line): f.severity for f in scan_path(tmp_path, jobs=1).findings}
    assert found[("cuda-device-literal", 7)] == "warning"
    assert found[("torch-cuda-api", 10)] == "blocking"

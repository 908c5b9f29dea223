"""The walk: file kinds by name, excluded directories."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import cast

from accelpilot.porting.scan import classify, scan_path

REPO = Path(__file__).parent.parent / "fixtures" / "repo"


def test_rocm_image_and_classify() -> None:
    assert classify("Dockerfile") == "dockerfile"
    assert classify("Dockerfile.gpu") == "dockerfile"
    assert classify("requirements-dev.txt") == "requirements"
    assert classify("notes.txt") is None
    assert classify("k.cuh") == "cuda"


def test_excluded_directories_are_recorded(tmp_path: Path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    log = scan_path(tmp_path)
    assert log.findings == [] and [(s.path, s.reason) for s in log.skipped] == [(".venv", "excluded directory")]


# ---------------------------------------------------------------------------------------------------------------
# Symbolic links never lead out of the root (issue 11)
# ---------------------------------------------------------------------------------------------------------------


def _repo_with_links(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("import torch\nKEY = 's3://private-bucket/key'\ntorch.cuda.synchronize()\n")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (repo / "ext").symlink_to(outside, target_is_directory=True)
    (repo / "secret.py").symlink_to(outside / "secret.py")
    (repo / "up").symlink_to("..", target_is_directory=True)
    (repo / "alias").symlink_to("src", target_is_directory=True)
    return repo


def test_links_out_of_the_root_are_skipped_with_the_reason(tmp_path: Path) -> None:
    repo = _repo_with_links(tmp_path)
    for follow in (False, True):
        log = scan_path(repo, follow_symlinks=follow)
        reasons = {s.path: s.reason for s in log.skipped}
        for link in ("ext", "secret.py", "up"):
            assert reasons[link] == "symlink to outside the scanned root: not followed"
        assert "private-bucket" not in log.to_json()
        assert all(f.file is not None and not f.file.startswith(("ext", "up")) for f in log.findings)


def test_links_inside_the_root_only_with_follow_symlinks(tmp_path: Path) -> None:
    repo = _repo_with_links(tmp_path)
    log = scan_path(repo)
    assert [f.file for f in log.findings] == ["src/a.py"]
    assert {s.path: s.reason for s in log.skipped}["alias"].startswith("symlink inside the root: not followed")
    followed = scan_path(repo, follow_symlinks=True)
    assert sorted(cast(str, f.file) for f in followed.findings) == ["alias/a.py", "src/a.py"]


def test_a_root_given_through_a_link_is_scanned(tmp_path: Path) -> None:
    repo = _repo_with_links(tmp_path)
    (tmp_path / "via").symlink_to(repo, target_is_directory=True)
    assert [f.file for f in scan_path(tmp_path / "via").findings] == ["src/a.py"]


def test_file_names_that_are_not_utf8_are_scanned_and_shown_escaped(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9_\xff.py")
    (tmp_path / name).write_text("import torch\ntorch.cuda.synchronize()\n")
    log = scan_path(tmp_path)
    assert [(f.file, f.line) for f in log.findings] == [("caf\\xe9_\\xff.py", 2)]
    json.loads(log.to_json())  # serialisable: no lone surrogates

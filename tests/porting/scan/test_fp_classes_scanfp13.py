"""False-positive classes left by the earlier fixers of issue 12 (scanfp13), each beside the near misses that must
stay findings: exact findings and items, and pruned scans equal to full parses."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python

RUNNER = """\
import torch


class Runner:
    def step(self, fn, x, stream, use_graph):
        if not use_graph:
            with torch.cuda.stream(stream):
                fn(x)
        else:
            graph = self.graph
            if graph is not None:
                with torch.cuda.stream(stream):
                    graph.replay()
            else:
                self._capture(fn, stream, x)

    def _capture(self, fn, stream, x):
        with torch.cuda.stream(stream), self.pool_ctx():
            fn(x)
        x = x.to("cuda:0")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            fn(x)
        self.graph = graph
"""

# No graph is captured in this file: a stream around a ``replay()`` here is not known to be a CUDA graph's.
PLAYER = """\
import torch


def play(recording, stream):
    with torch.cuda.stream(stream):
        recording.replay()
"""


def _items(root: Path) -> list[tuple[str, list[tuple[str, int]]]]:
    return [(i.key, [(ln.file or "", ln.line or 0) for ln in i.lines]) for i in scan_path(root, jobs=1).items]


def test_a_cuda_graphs_capture_and_replay_contexts_join_the_cuda_graphs_item(tmp_path: Path) -> None:
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / "player.py").write_text(PLAYER)
    log = scan_path(tmp_path, jobs=1)
    found = sorted((f.file, f.rule, f.line or 0, f.subject) for f in log.findings)
    assert found == [
        ("player.py", "torch-cuda-api", 5, None),
        ("runner.py", "cuda-device-literal", 20, None),
        ("runner.py", "cuda-graphs", 21, None),
        ("runner.py", "cuda-graphs", 22, None),
        ("runner.py", "torch-cuda-api", 7, None),
        ("runner.py", "torch-cuda-api", 12, "serves:cuda-graphs:21"),
        ("runner.py", "torch-cuda-api", 18, "serves:cuda-graphs:21"),
    ]
    assert all(f.context is None for f in log.findings)
    # the replay's stream (12) and the warm-up's stream (18) join the graph they serve; the eager path's stream (7),
    # a device literal in the capturing def outside a ``with`` (20) and a replay with no capture in its file stay
    assert _items(tmp_path) == [
        ("file|device-placement|player.py", [("player.py", 5)]),
        ("file|device-placement|runner.py", [("runner.py", 7), ("runner.py", 20)]),
        ("repo|cuda-graphs", [("runner.py", 12), ("runner.py", 18), ("runner.py", 21), ("runner.py", 22)]),
    ]


def test_pruned_scan_equals_full_parse_on_scanfp13_classes() -> None:
    for src in (RUNNER, PLAYER):
        assert scan_python(src) == scan_python(src, prune=False)

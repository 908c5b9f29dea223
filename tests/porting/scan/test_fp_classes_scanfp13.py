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
    for src in (RUNNER, PLAYER, STREAMS, SPEECH):
        assert scan_python(src) == scan_python(src, prune=False)


STREAMS = """\
import torch


class IO:
    def __init__(self, device, use_stream):
        self.compute_stream = torch.cuda.Stream(device=device) if device.type == "cuda" else None
        self.copy_stream = torch.cuda.Stream(device=device) if use_stream else None
        self.pinned = torch.zeros(4).to("cuda:0") if device.type == "cuda" else None
        self.side = torch.cuda.Stream(device=device) if device.type == "cuda" else torch.zeros(1)
"""


def test_a_cuda_object_made_only_for_a_held_cuda_device_with_none_elsewhere_is_that_backends_branch(
    tmp_path: Path,
) -> None:
    (tmp_path / "io.py").write_text(STREAMS)
    log = scan_path(tmp_path, jobs=1)
    found = sorted((f.rule, f.line or 0, f.context) for f in log.findings)
    # 6 is set apart; a test on a flag (7), a body placing work anew (8), a CUDA-named fallback's twin (9) stay
    assert found == [
        ("cuda-device-literal", 8, None),
        ("torch-cuda-api", 6, "backend-branch"),
        ("torch-cuda-api", 7, None),
        ("torch-cuda-api", 9, None),
    ]
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [("file|device-placement|io.py", [7, 8, 9])]


SPEECH = """\
import torch


class Speech(torch.nn.Module):
    def generate(self, features):
        sequences, outputs = self.generate_with_fallback(features)
        segments = []
        for seq in sequences:
            segments.append(self._split_segments(seq))
        audio = self._cut_codes(outputs)
        first = self._prepare(features)
        kept = sequences[sequences != 0]
        return segments, audio, first, kept, self._trim(outputs)

    def generate_with_fallback(self, features):
        outputs = super().generate(features)
        sequences = self._postprocess(outputs)
        return sequences, outputs

    def _postprocess(self, outputs):
        return self._token_times(outputs)

    def _token_times(self, outputs):
        return torch.unique(outputs.frames)

    def _split_segments(self, seq):
        return torch.nonzero(seq > 50)

    def _cut_codes(self, outputs):
        codes = outputs.codes
        return self.codec.decode(torch.nonzero(codes))

    def _prepare(self, features):
        return torch.nonzero(features)

    def sample(self, ids):
        for _ in range(4):
            logits = self(ids).logits
            ids = self._pick(logits, ids)
        return ids

    def _pick(self, logits, ids):
        return torch.nonzero(logits > 0)

    def _trim(self, hidden):
        return torch.nonzero(hidden)

    def forward(self, hidden):
        return self._trim(hidden)
"""


def test_shape_hazards_of_helpers_on_a_finished_decodes_result_are_host_side(tmp_path: Path) -> None:
    (tmp_path / "speech.py").write_text(SPEECH)
    log = scan_path(tmp_path, jobs=1)
    found = sorted((f.rule, f.line or 0, f.context) for f in log.findings)
    # 24 (reached only from the post-processing of ``super().generate``'s result) and 27 (a ``for`` target over the
    # result of a def that decodes) are host-side. Stay: the decoding def's own hazard (12), a helper calling a
    # codec (31), one on the input features (34), a decode loop's per-step helper (43), one the forward also calls (46)
    assert found == [
        ("boolean-mask-index", 12, None),
        ("data-dependent-op", 24, "host-side"),
        ("data-dependent-op", 27, "host-side"),
        ("data-dependent-op", 31, None),
        ("data-dependent-op", 34, None),
        ("data-dependent-op", 43, None),
        ("data-dependent-op", 46, None),
    ]
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [
        ("file|boolean-mask-index|speech.py", [12]),
        ("file|data-dependent-op|speech.py", [31, 34, 43, 46]),
    ]


TIMERS = """\
import torch

device_type = "cuda" if torch.cuda.is_available() else "cpu"
synchronize = torch.cuda.synchronize if device_type == "cuda" else lambda: None
peak = torch.cuda.max_memory_allocated if device_type == "cuda" else lambda: 0
sync_any = torch.cuda.synchronize if device_type == "cuda" else torch.zeros
"""


def test_a_cuda_function_chosen_only_on_a_cuda_device_type_with_a_no_op_lambda_elsewhere_does_not_stop(
    tmp_path: Path,
) -> None:
    """nanochat's ``synchronize = torch.cuda.synchronize if device_type == "cuda" else lambda: None``: off CUDA the
    no-op runs, so the README script that holds it does not stop. Near miss: another function as the other arm
    (line 6) stays a use of CUDA."""
    (tmp_path / "train.py").write_text(TIMERS)
    (tmp_path / "README.md").write_text("Run `python train.py`.\n")
    found = {
        (f.line, f.context, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "torch-cuda-api"
    }
    assert (4, "backend-branch", "info") in found and (5, "backend-branch", "info") in found
    assert (6, None, "blocking") in found

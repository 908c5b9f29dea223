import pytest
import torch
from mamba_like.ops.triton.ssd_chunk import _chunk_scan_kernel


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_chunk_scan() -> None:
    assert _chunk_scan_kernel is not None

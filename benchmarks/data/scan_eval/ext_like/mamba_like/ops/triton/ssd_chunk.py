import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64}), triton.Config({"BLOCK_M": 128})], key=["L"])
@triton.jit
def _chunk_scan_kernel(x_ptr, out_ptr, L, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs, mask=offs < L), 0), mask=offs < L)

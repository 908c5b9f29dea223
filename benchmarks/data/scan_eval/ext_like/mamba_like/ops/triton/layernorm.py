import torch
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_kernel(X, Y, W, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    var = tl.sum(x * x, axis=0) / N
    tl.store(Y + row * stride + cols, x * tl.rsqrt(var + eps) * tl.load(W + cols, mask=cols < N), mask=cols < N)


def rms_norm_fn(x, weight, eps=1e-6):
    y = torch.empty_like(x)
    M, N = x.shape
    _layer_norm_fwd_kernel[(M,)](x, y, weight, x.stride(0), N, eps, BLOCK_N=triton.next_power_of_2(N))
    return y

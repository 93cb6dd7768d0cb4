"""A CUDA fault (GPU only): a Triton kernel storing 8 TiB past its buffer, an illegal memory access."""

import torch
import triton
import triton.language as tl


@triton.jit
def _scribble(out, far):
    tl.store(out + far, 1.0)


def run_query(tables, **params):
    revenue = torch.zeros(1, dtype=torch.float64, device="cuda")
    _scribble[(1,)](revenue, 1 << 40)
    torch.cuda.synchronize()
    return {"revenue": revenue}

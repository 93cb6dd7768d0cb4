"""TPC-H Q6's _query_core in CUDA C++ (scope: core), built with load_inline when the file is imported.

The build goes to the runner's own TORCH_EXTENSIONS_DIR, for the GPU it runs on (`-arch=sm_90` on an
H100/H200). Only pybind11 is included on the C++ side (`no_implicit_headers`): the kernels take raw
device pointers, which keeps the build to seconds instead of compiling torch's headers. The bounds
arrive as C++ doubles, so 0.05 stays the float64 0.05 (a float32 0.05 would drop every row at it).
"""

import torch
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q06_launch(int64_t shipdate, int64_t discount, int64_t quantity, int64_t price, int64_t partials,
                int64_t out, int64_t n, int64_t blocks, int32_t date_lo, int32_t date_hi, double disc_lo,
                double disc_hi, double qty_hi, int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q06", &q06_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>

constexpr int THREADS = 256;

// The block's sum, valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double warp_sums[THREADS / 32];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0;
  if (warp == 0)
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void __launch_bounds__(THREADS) q06_partials(
    const int32_t* __restrict__ shipdate, const double* __restrict__ discount,
    const double* __restrict__ quantity, const double* __restrict__ price, double* __restrict__ partials,
    int64_t n, int32_t date_lo, int32_t date_hi, double disc_lo, double disc_hi, double qty_hi) {
  double sum = 0.0;
  for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * THREADS) {
    // Every column read whole, then one select: the bandwidth floor counts all their bytes.
    const int32_t d = __ldg(shipdate + i);
    const double disc = __ldg(discount + i), qty = __ldg(quantity + i), p = __ldg(price + i);
    const bool keep = (d >= date_lo) & (d < date_hi) & (disc >= disc_lo) & (disc <= disc_hi) & (qty < qty_hi);
    sum += keep ? p * disc : 0.0;
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(THREADS) q06_total(const double* __restrict__ partials, double* out,
                                                     int64_t blocks) {
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < blocks; i += THREADS) sum += partials[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) out[0] = sum;
}

void q06_launch(int64_t shipdate, int64_t discount, int64_t quantity, int64_t price, int64_t partials,
                int64_t out, int64_t n, int64_t blocks, int32_t date_lo, int32_t date_hi, double disc_lo,
                double disc_hi, double qty_hi, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  q06_partials<<<(unsigned)blocks, THREADS, 0, s>>>(
      reinterpret_cast<const int32_t*>(shipdate), reinterpret_cast<const double*>(discount),
      reinterpret_cast<const double*>(quantity), reinterpret_cast<const double*>(price),
      reinterpret_cast<double*>(partials), n, date_lo, date_hi, disc_lo, disc_hi, qty_hi);
  q06_total<<<1, THREADS, 0, s>>>(reinterpret_cast<const double*>(partials),
                                  reinterpret_cast<double*>(out), blocks);
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_example_cuda_q06_core",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def _query_core(
    l_shipdate, l_discount, l_quantity, l_extendedprice, date_lo, date_hi, discount_lo, discount_hi, quantity
):
    device = l_shipdate.device
    n = l_shipdate.numel()
    blocks = max(1, min(4 * torch.cuda.get_device_properties(device).multi_processor_count, (n + 255) // 256))
    partials = torch.empty(blocks, dtype=torch.float64, device=device)
    out = torch.empty(1, dtype=torch.float64, device=device)
    columns = (l_shipdate, l_discount, l_quantity, l_extendedprice)
    assert all(c.is_contiguous() for c in columns) and l_shipdate.dtype == torch.int32
    _EXT.q06(
        *(c.data_ptr() for c in columns),
        partials.data_ptr(),
        out.data_ptr(),
        n,
        blocks,
        int(date_lo),
        int(date_hi),
        float(discount_lo),
        float(discount_hi),
        float(quantity),
        torch.cuda.current_stream(device).cuda_stream,
    )
    return out

"""TPC-H Q14's _query_core in CUDA C++ (scope: core), built with load_inline when the file is imported.

`q14_flags` writes a promo flag per part key (part keys are dense 1..N, so every slot a lineitem row
reads is written); `q14_partials` makes one grid-stride pass over lineitem with two float64 sums per
block; `q14_total` adds the blocks' sums and divides. The build goes to the runner's own
TORCH_EXTENSIONS_DIR for the GPU it runs on; only pybind11 is included on the C++ side.
"""

import torch
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q14_launch(int64_t l_partkey, int64_t l_extendedprice, int64_t l_discount, int64_t l_shipdate,
                int64_t p_partkey, int64_t p_type, int64_t promo_types, int64_t flags, int64_t partials,
                int64_t out, int64_t lines, int64_t parts, int64_t blocks, int32_t date_lo, int32_t date_hi,
                int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q14", &q14_launch); }
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
  __syncthreads();  // warp_sums may still be read by a previous call's warp 0
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0;
  if (warp == 0)
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void __launch_bounds__(THREADS) q14_flags(
    const int64_t* __restrict__ p_partkey, const int32_t* __restrict__ p_type,
    const bool* __restrict__ promo_types, uint8_t* __restrict__ flags, int64_t parts) {
  const int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x;
  if (i < parts) flags[p_partkey[i]] = promo_types[p_type[i]] ? 1 : 0;
}

__global__ void __launch_bounds__(THREADS) q14_partials(
    const int64_t* __restrict__ l_partkey, const double* __restrict__ price,
    const double* __restrict__ discount, const int32_t* __restrict__ shipdate,
    const uint8_t* __restrict__ flags, double* __restrict__ partials, int64_t n, int32_t date_lo,
    int32_t date_hi) {
  double promo = 0.0, total = 0.0;
  for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * THREADS) {
    // Every column read whole (the bandwidth floor counts all their bytes); the flag only for the month.
    const int32_t d = __ldg(shipdate + i);
    const int64_t key = __ldg(l_partkey + i);
    const double revenue = __ldg(price + i) * (1.0 - __ldg(discount + i));
    if (d >= date_lo && d < date_hi) {
      total += revenue;
      if (flags[key]) promo += revenue;
    }
  }
  promo = block_sum(promo);
  total = block_sum(total);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = promo;
    partials[2 * blockIdx.x + 1] = total;
  }
}

__global__ void __launch_bounds__(THREADS) q14_total(const double* __restrict__ partials, double* out,
                                                     int64_t blocks) {
  double promo = 0.0, total = 0.0;
  for (int64_t i = threadIdx.x; i < blocks; i += THREADS) {
    promo += partials[2 * i];
    total += partials[2 * i + 1];
  }
  promo = block_sum(promo);
  total = block_sum(total);
  if (threadIdx.x == 0) out[0] = 100.0 * promo / total;
}

void q14_launch(int64_t l_partkey, int64_t l_extendedprice, int64_t l_discount, int64_t l_shipdate,
                int64_t p_partkey, int64_t p_type, int64_t promo_types, int64_t flags, int64_t partials,
                int64_t out, int64_t lines, int64_t parts, int64_t blocks, int32_t date_lo, int32_t date_hi,
                int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  q14_flags<<<(unsigned)((parts + THREADS - 1) / THREADS), THREADS, 0, s>>>(
      reinterpret_cast<const int64_t*>(p_partkey), reinterpret_cast<const int32_t*>(p_type),
      reinterpret_cast<const bool*>(promo_types), reinterpret_cast<uint8_t*>(flags), parts);
  q14_partials<<<(unsigned)blocks, THREADS, 0, s>>>(
      reinterpret_cast<const int64_t*>(l_partkey), reinterpret_cast<const double*>(l_extendedprice),
      reinterpret_cast<const double*>(l_discount), reinterpret_cast<const int32_t*>(l_shipdate),
      reinterpret_cast<const uint8_t*>(flags), reinterpret_cast<double*>(partials), lines, date_lo, date_hi);
  q14_total<<<1, THREADS, 0, s>>>(reinterpret_cast<const double*>(partials),
                                  reinterpret_cast<double*>(out), blocks);
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_example_cuda_q14_core",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def _query_core(
    l_partkey, l_extendedprice, l_discount, l_shipdate, p_partkey, p_type, promo_types, date_lo, date_hi
):
    device = l_partkey.device
    lines, parts = l_partkey.numel(), p_partkey.numel()
    tensors = (l_partkey, l_extendedprice, l_discount, l_shipdate, p_partkey, p_type, promo_types)
    assert all(t.is_contiguous() for t in tensors)
    assert (l_partkey.dtype, p_partkey.dtype, p_type.dtype, l_shipdate.dtype, promo_types.dtype) == (
        torch.int64, torch.int64, torch.int32, torch.int32, torch.bool,
    )  # fmt: skip
    blocks = max(
        1, min(4 * torch.cuda.get_device_properties(device).multi_processor_count, (lines + 255) // 256)
    )
    flags = torch.empty(parts + 1, dtype=torch.uint8, device=device)
    partials = torch.empty(2 * blocks, dtype=torch.float64, device=device)
    out = torch.empty(1, dtype=torch.float64, device=device)
    _EXT.q14(
        *(t.data_ptr() for t in tensors),
        flags.data_ptr(),
        partials.data_ptr(),
        out.data_ptr(),
        lines,
        parts,
        blocks,
        int(date_lo),
        int(date_hi),
        torch.cuda.current_stream(device).cuda_stream,
    )
    return out

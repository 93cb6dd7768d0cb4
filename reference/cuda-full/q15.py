"""TPC-H Q15 in CUDA C++ (scope: full): exact revenue per supplier key in one lineitem pass, then its max.

WITH revenue AS (SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue
                 FROM lineitem WHERE l_shipdate >= :date AND l_shipdate < :date + 3 months GROUP BY 1)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue
WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue) ORDER BY s_suppkey

`total_revenue = max(...)` is an equality of DECIMAL sums, so (as in the TorchPlan) revenues are summed
exactly in int64 units of 1/10000: price cents times hundredths of (1 - discount). Supplier keys are
dense 1..S: the group-by is an array indexed by key.

1. `q15_zero`: the revenue slots, the max and the match count zeroed (800 KB at SF10).
2. `q15_lines`: one pass over lineitem; a row in the quarter adds its revenue to its supplier's slot
   (int64 atomics, ~4% of the rows over 100K slots: little contention).
3. `q15_max`: per supplier row its revenue; a block max, one atomicMax per block.
4. `q15_select`: supplier rows whose revenue equals the max (> 0: a zero max is no revenue at all)
   appended to a list (one match in TPC-H data, so one atomic).
5. `q15_order`: one block places each match at its rank by s_suppkey (keys are unique).
s_name, s_address and s_phone are returned as supplier row numbers. Five launches, no PyTorch kernel;
one sync reads the number of matches.
"""

import torch
from torch.utils.cpp_extension import load_inline

from evaluator.tpch.encoding import add_months, parse_date

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q15_launch(int64_t l_suppkey, int64_t l_extendedprice, int64_t l_discount, int64_t l_shipdate,
                int64_t s_suppkey, int64_t revenue, int64_t match_key, int64_t match_row, int64_t match_rev,
                int64_t out_key, int64_t out_row, int64_t out_rev, int64_t lines, int64_t suppliers,
                int64_t date_lo, int64_t date_hi, int64_t line_blocks, int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q15", &q15_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>

constexpr int THREADS = 256;

// revenue[0..S] by key, then revenue[S + 1] = the max, revenue[S + 2] = the number of matches.
__global__ void __launch_bounds__(THREADS) q15_zero(unsigned long long* __restrict__ revenue, int64_t slots) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i < slots) revenue[i] = 0;
}

__global__ void __launch_bounds__(THREADS) q15_lines(
    const int64_t* __restrict__ l_suppkey, const double* __restrict__ price,
    const double* __restrict__ discount, const int32_t* __restrict__ shipdate,
    unsigned long long* __restrict__ revenue, int64_t n, int64_t suppliers, int32_t date_lo,
    int32_t date_hi) {
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    // Every column read whole: the bandwidth floor counts all their bytes.
    const int32_t d = __ldg(shipdate + i);
    const int64_t key = __ldg(l_suppkey + i);
    const double p = __ldg(price + i), disc = __ldg(discount + i);
    if (d < date_lo || d >= date_hi || key < 0 || key > suppliers) continue;
    const long long units = __double2ll_rn(p * 100.0) * (100 - __double2ll_rn(disc * 100.0));
    atomicAdd(revenue + key, (unsigned long long)units);
  }
}

__global__ void __launch_bounds__(THREADS) q15_max(
    const int64_t* __restrict__ s_suppkey, unsigned long long* __restrict__ revenue, int64_t suppliers) {
  __shared__ unsigned long long warp_max[THREADS / 32];
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  unsigned long long v = 0;
  if (i < suppliers) {
    const int64_t key = s_suppkey[i];
    if (key >= 0 && key <= suppliers) v = revenue[key];
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned long long o = __shfl_down_sync(0xffffffffu, v, offset);
    v = o > v ? o : v;
  }
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < THREADS / 32; ++w) v = warp_max[w] > v ? warp_max[w] : v;
    if (v) atomicMax(revenue + suppliers + 1, v);
  }
}

__global__ void __launch_bounds__(THREADS) q15_select(
    const int64_t* __restrict__ s_suppkey, unsigned long long* __restrict__ revenue,
    int64_t* __restrict__ match_key, int64_t* __restrict__ match_row, double* __restrict__ match_rev,
    int64_t suppliers) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= suppliers) return;
  const unsigned long long best = revenue[suppliers + 1];
  const int64_t key = s_suppkey[i];
  if (best == 0 || key < 0 || key > suppliers || revenue[key] != best) return;
  const unsigned long long slot = atomicAdd(revenue + suppliers + 2, 1ull);
  match_key[slot] = key;
  match_row[slot] = i;
  match_rev[slot] = (double)best / 10000.0;
}

// One block: each match written at its rank by key (keys are unique).
__global__ void __launch_bounds__(THREADS) q15_order(
    const unsigned long long* __restrict__ revenue, const int64_t* __restrict__ match_key,
    const int64_t* __restrict__ match_row, const double* __restrict__ match_rev,
    int64_t* __restrict__ out_key, int64_t* __restrict__ out_row, double* __restrict__ out_rev,
    int64_t suppliers) {
  const int64_t m = (int64_t)revenue[suppliers + 2];
  for (int64_t i = threadIdx.x; i < m; i += THREADS) {
    const int64_t key = match_key[i];
    int64_t rank = 0;
    for (int64_t j = 0; j < m; ++j) rank += match_key[j] < key;
    out_key[rank] = key;
    out_row[rank] = match_row[i];
    out_rev[rank] = match_rev[i];
  }
}

void q15_launch(int64_t l_suppkey, int64_t l_extendedprice, int64_t l_discount, int64_t l_shipdate,
                int64_t s_suppkey, int64_t revenue, int64_t match_key, int64_t match_row, int64_t match_rev,
                int64_t out_key, int64_t out_row, int64_t out_rev, int64_t lines, int64_t suppliers,
                int64_t date_lo, int64_t date_hi, int64_t line_blocks, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  auto* rev = reinterpret_cast<unsigned long long*>(revenue);
  auto* skey = reinterpret_cast<const int64_t*>(s_suppkey);
  auto* mkey = reinterpret_cast<int64_t*>(match_key);
  auto* mrow = reinterpret_cast<int64_t*>(match_row);
  auto* mrev = reinterpret_cast<double*>(match_rev);
  q15_zero<<<(unsigned)((suppliers + 3 + THREADS - 1) / THREADS), THREADS, 0, s>>>(rev, suppliers + 3);
  if (lines > 0)
    q15_lines<<<(unsigned)line_blocks, THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(l_suppkey), reinterpret_cast<const double*>(l_extendedprice),
        reinterpret_cast<const double*>(l_discount), reinterpret_cast<const int32_t*>(l_shipdate), rev, lines,
        suppliers, (int32_t)date_lo, (int32_t)date_hi);
  if (suppliers > 0) {
    const unsigned blocks = (unsigned)((suppliers + THREADS - 1) / THREADS);
    q15_max<<<blocks, THREADS, 0, s>>>(skey, rev, suppliers);
    q15_select<<<blocks, THREADS, 0, s>>>(skey, rev, mkey, mrow, mrev, suppliers);
  }
  q15_order<<<1, THREADS, 0, s>>>(rev, mkey, mrow, mrev, reinterpret_cast<int64_t*>(out_key),
                                  reinterpret_cast<int64_t*>(out_row), reinterpret_cast<double*>(out_rev),
                                  suppliers);
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_reference_cuda_q15",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def run_query(tables, date: str = "1996-01-01"):
    lineitem, supplier = tables["lineitem"], tables["supplier"]
    columns = (
        lineitem["l_suppkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_shipdate"],
        supplier["s_suppkey"],
    )
    assert all(c.is_contiguous() for c in columns)
    assert tuple(c.dtype for c in columns) == (
        torch.int64,
        torch.float64,
        torch.float64,
        torch.int32,
        torch.int64,
    )
    device = columns[0].device
    lines, suppliers = lineitem.rows, supplier.rows
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    # Slots 0..S by key (keys are dense 1..S), then the max and the number of matches.
    revenue = torch.empty(suppliers + 3, dtype=torch.int64, device=device)
    size = max(1, suppliers)
    match_key = torch.empty(size, dtype=torch.int64, device=device)
    match_row = torch.empty(size, dtype=torch.int64, device=device)
    match_rev = torch.empty(size, dtype=torch.float64, device=device)
    out_key = torch.empty(size, dtype=torch.int64, device=device)
    out_row = torch.empty(size, dtype=torch.int64, device=device)
    out_rev = torch.empty(size, dtype=torch.float64, device=device)
    _EXT.q15(
        *(c.data_ptr() for c in columns),
        revenue.data_ptr(),
        match_key.data_ptr(),
        match_row.data_ptr(),
        match_rev.data_ptr(),
        out_key.data_ptr(),
        out_row.data_ptr(),
        out_rev.data_ptr(),
        lines,
        suppliers,
        parse_date(date),
        add_months(date, 3),
        max(1, min(8 * sms, (lines + 255) // 256)),
        torch.cuda.current_stream(device).cuda_stream,
    )
    found = int(revenue[suppliers + 2].item())  # the one sync: the result's size
    rows = out_row[:found]
    return {
        "s_suppkey": out_key[:found],
        "s_name": rows,
        "s_address": rows,
        "s_phone": rows,
        "total_revenue": out_rev[:found],
    }

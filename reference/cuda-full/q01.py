"""TPC-H Q1 in CUDA C++ (scope: full): every group's sums in one pass, exact integers on the decimals.

SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
       sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
       avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
FROM lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL ':delta' DAY
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus

The group is dense (flag code * statuses + status code, 6 groups in TPC-H). Each thread keeps every
group's sums in registers (compile-time group slots, one predicated add per slot and sum: no atomics,
no local memory), as integers: quantity, price in cents, discount and tax in hundredths, so the
discounted price is cents * (100 - d) and the charge cents * (100 - d) * (100 + t), all exact (the
charge's sum stays below 2^64 up to SF20 or so). A block adds its threads' sums by warp shuffles and
writes them as one partial row; a one-block kernel adds the partials, turns them into the result's
float64 columns and compacts the groups that hold rows, in code order. Two launches, one sync (how many
groups hold rows, the result's size).
"""

import datetime as dt

import torch
from torch.utils.cpp_extension import load_inline

THREADS = 256
BLOCKS_PER_SM = 2  # ~105 registers a thread: 2 blocks of 256 fit an SM, one wave

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q01_launch(int64_t returnflag, int64_t linestatus, int64_t quantity, int64_t price, int64_t discount,
                int64_t tax, int64_t shipdate, int64_t partials, int64_t out, int64_t keys, int64_t counts,
                int64_t present, int64_t n, int64_t statuses, int64_t groups, int64_t date_hi, int64_t blocks,
                int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q01", &q01_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>

constexpr int THREADS = 256;
constexpr int VALUES = 6;  // per group: qty, cents, disc_price, charge, disc, count
constexpr int SLOTS = 8;   // groups the final kernel handles

struct Row {
  int g;  // group, or -1 when the row fails the WHERE
  int32_t qty, disc;
  int64_t cents, disc_price;
  uint64_t charge;
};

__device__ __forceinline__ Row load_row(const int32_t* __restrict__ flag, const int32_t* __restrict__ status,
                                        const double* __restrict__ quantity, const double* __restrict__ price,
                                        const double* __restrict__ discount, const double* __restrict__ tax,
                                        const int32_t* __restrict__ shipdate, int64_t i, int statuses,
                                        int32_t date_hi) {
  // Every column read whole: the bandwidth floor counts all their bytes.
  Row r;
  const int32_t f = __ldg(flag + i), s = __ldg(status + i), d = __ldg(shipdate + i);
  const double q = __ldg(quantity + i), p = __ldg(price + i), disc = __ldg(discount + i), t = __ldg(tax + i);
  r.g = d <= date_hi ? f * statuses + s : -1;
  r.qty = __double2int_rn(q);
  r.cents = __double2ll_rn(p * 100.0);
  r.disc = __double2int_rn(disc * 100.0);
  r.disc_price = r.cents * (100 - r.disc);
  r.charge = (uint64_t)r.disc_price * (uint64_t)(100 + __double2int_rn(t * 100.0));
  return r;
}

template <int G>
__global__ void __launch_bounds__(THREADS) q01_partials(
    const int32_t* __restrict__ flag, const int32_t* __restrict__ status, const double* __restrict__ quantity,
    const double* __restrict__ price, const double* __restrict__ discount, const double* __restrict__ tax,
    const int32_t* __restrict__ shipdate, uint64_t* __restrict__ partials, int64_t n, int statuses,
    int32_t date_hi) {
  int32_t qty[G], disc[G], count[G];
  int64_t cents[G], disc_price[G];
  uint64_t charge[G];
#pragma unroll
  for (int g = 0; g < G; ++g) qty[g] = disc[g] = count[g] = 0, cents[g] = disc_price[g] = 0, charge[g] = 0;
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  // Two rows an iteration, both loaded before either is added: twice the bytes in flight.
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += 2 * stride) {
    Row a = load_row(flag, status, quantity, price, discount, tax, shipdate, i, statuses, date_hi);
    Row b;
    b.g = -1;
    if (i + stride < n)
      b = load_row(flag, status, quantity, price, discount, tax, shipdate, i + stride, statuses, date_hi);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (a.g == g) {
        qty[g] += a.qty, disc[g] += a.disc, count[g] += 1;
        cents[g] += a.cents, disc_price[g] += a.disc_price, charge[g] += a.charge;
      }
      if (b.g == g) {
        qty[g] += b.qty, disc[g] += b.disc, count[g] += 1;
        cents[g] += b.cents, disc_price[g] += b.disc_price, charge[g] += b.charge;
      }
    }
  }
  __shared__ unsigned long long block[G * VALUES];
  for (int v = threadIdx.x; v < G * VALUES; v += THREADS) block[v] = 0;
  __syncthreads();
  const bool lead = (threadIdx.x & 31) == 0;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    uint64_t v[VALUES] = {(uint64_t)(int64_t)qty[g], (uint64_t)cents[g],          (uint64_t)disc_price[g],
                          charge[g],                 (uint64_t)(int64_t)disc[g], (uint64_t)(int64_t)count[g]};
#pragma unroll
    for (int k = 0; k < VALUES; ++k) {
      unsigned long long x = v[k];
      for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_down_sync(0xffffffffu, x, offset);
      if (lead) atomicAdd(block + g * VALUES + k, x);
    }
  }
  __syncthreads();
  for (int v = threadIdx.x; v < G * VALUES; v += THREADS)
    partials[(int64_t)blockIdx.x * SLOTS * VALUES + v] = block[v];
}

// One block: the partials added per (group, value), then the groups that hold rows in code order.
__global__ void __launch_bounds__(THREADS) q01_final(
    const uint64_t* __restrict__ partials, double* __restrict__ out, int64_t* __restrict__ keys,
    int64_t* __restrict__ counts, int64_t* __restrict__ present, int blocks, int groups, int statuses) {
  __shared__ uint64_t total[SLOTS * VALUES];
  for (int v = threadIdx.x; v < SLOTS * VALUES; v += THREADS) {
    uint64_t sum = 0;
    if (v < groups * VALUES)
      for (int b = 0; b < blocks; ++b) sum += partials[(int64_t)b * SLOTS * VALUES + v];
    total[v] = sum;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  int k = 0;
  for (int g = 0; g < groups; ++g) {
    const uint64_t* t = total + g * VALUES;
    const int64_t count = (int64_t)t[5];
    if (count == 0) continue;
    keys[k] = g / statuses;
    keys[SLOTS + k] = g % statuses;
    const double qty = (double)(int64_t)t[0], base = (double)(int64_t)t[1] / 100.0;
    out[0 * SLOTS + k] = qty;
    out[1 * SLOTS + k] = base;
    out[2 * SLOTS + k] = (double)(int64_t)t[2] / 10000.0;
    out[3 * SLOTS + k] = (double)t[3] / 1000000.0;
    out[4 * SLOTS + k] = qty / (double)count;
    out[5 * SLOTS + k] = base / (double)count;
    out[6 * SLOTS + k] = (double)(int64_t)t[4] / 100.0 / (double)count;
    counts[k] = count;
    ++k;
  }
  *present = k;
}

void q01_launch(int64_t returnflag, int64_t linestatus, int64_t quantity, int64_t price, int64_t discount,
                int64_t tax, int64_t shipdate, int64_t partials, int64_t out, int64_t keys, int64_t counts,
                int64_t present, int64_t n, int64_t statuses, int64_t groups, int64_t date_hi, int64_t blocks,
                int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  auto* f = reinterpret_cast<const int32_t*>(returnflag);
  auto* st = reinterpret_cast<const int32_t*>(linestatus);
  auto* q = reinterpret_cast<const double*>(quantity);
  auto* p = reinterpret_cast<const double*>(price);
  auto* d = reinterpret_cast<const double*>(discount);
  auto* t = reinterpret_cast<const double*>(tax);
  auto* sd = reinterpret_cast<const int32_t*>(shipdate);
  auto* part = reinterpret_cast<uint64_t*>(partials);
  // The fewest register slots that hold the dictionaries' groups (6 in TPC-H).
  if (groups <= 6)
    q01_partials<6><<<(unsigned)blocks, THREADS, 0, s>>>(f, st, q, p, d, t, sd, part, n, (int)statuses,
                                                         (int32_t)date_hi);
  else
    q01_partials<8><<<(unsigned)blocks, THREADS, 0, s>>>(f, st, q, p, d, t, sd, part, n, (int)statuses,
                                                         (int32_t)date_hi);
  q01_final<<<1, THREADS, 0, s>>>(part, reinterpret_cast<double*>(out), reinterpret_cast<int64_t*>(keys),
                                  reinterpret_cast<int64_t*>(counts), reinterpret_cast<int64_t*>(present),
                                  (int)blocks, (int)groups, (int)statuses);
}
"""

SLOTS, VALUES = 8, 6


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_reference_cuda_q01",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def _days(day: dt.date) -> int:
    return (day - dt.date(1970, 1, 1)).days


def run_query(tables, delta: int = 90):
    lineitem = tables["lineitem"]
    names = (
        "l_returnflag",
        "l_linestatus",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_tax",
        "l_shipdate",
    )
    columns = tuple(lineitem[c] for c in names)
    assert all(c.is_contiguous() for c in columns)
    assert tuple(c.dtype for c in columns) == (torch.int32, torch.int32) + (torch.float64,) * 4 + (
        torch.int32,
    )
    device = columns[0].device
    statuses = len(lineitem.dictionary("l_linestatus"))
    groups = len(lineitem.dictionary("l_returnflag")) * statuses
    if groups > SLOTS:
        raise ValueError(f"Q1 kernel holds {SLOTS} groups, the dictionaries make {groups}")
    n = lineitem.rows
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    blocks = max(1, min(BLOCKS_PER_SM * sms, (n + THREADS - 1) // THREADS))
    partials = torch.empty(blocks * SLOTS * VALUES, dtype=torch.int64, device=device)
    out = torch.empty((8, SLOTS), dtype=torch.float64, device=device)
    keys = torch.empty((2, SLOTS), dtype=torch.int64, device=device)
    counts = torch.empty(SLOTS, dtype=torch.int64, device=device)
    present = torch.empty(1, dtype=torch.int64, device=device)
    _EXT.q01(
        *(c.data_ptr() for c in columns),
        partials.data_ptr(),
        out.data_ptr(),
        keys.data_ptr(),
        counts.data_ptr(),
        present.data_ptr(),
        n,
        statuses,
        groups,
        _days(dt.date(1998, 12, 1) - dt.timedelta(days=delta)),
        blocks,
        torch.cuda.current_stream(device).cuda_stream,
    )
    k = int(present.item())  # the one sync: how many groups hold rows
    return {
        "l_returnflag": keys[0, :k],
        "l_linestatus": keys[1, :k],
        "sum_qty": out[0, :k],
        "sum_base_price": out[1, :k],
        "sum_disc_price": out[2, :k],
        "sum_charge": out[3, :k],
        "avg_qty": out[4, :k],
        "avg_price": out[5, :k],
        "avg_disc": out[6, :k],
        "count_order": counts[:k],
    }

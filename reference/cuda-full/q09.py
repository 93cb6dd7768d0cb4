"""TPC-H Q9 in CUDA C++ (scope: full): key-indexed dimension arrays, one pass over lineitem, exact sums.

SELECT nation, o_year, sum(amount) AS sum_profit FROM (
  SELECT n_name AS nation, extract(year FROM o_orderdate) AS o_year,
         l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
  FROM part, supplier, lineitem, partsupp, orders, nation
  WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
    AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey
    AND p_name LIKE '%:color%') GROUP BY nation, o_year ORDER BY nation, o_year DESC

1. `q09_parts`: a block copies 128 p_name rows into shared memory (16-byte loads), each thread runs
   shift-and (bitap) over its row with a 256-entry mask table in shared memory: a bit per matching
   part key (a bitmap, 250 KB at SF10, mostly L1-resident in the lineitem pass).
2. `q09_suppliers`: per supplier key its nation's n_name code (the 25 nation rows scanned).
   `q09_orders`: per order key extract(year) by civil-from-days arithmetic (int16); the first threads
   zero the group sums.
3. `q09_supply`: ps_supplycost in cents of the matching parts' partsupp rows at slot 4 x partkey + i,
   i the supplier's place among the part's four: dbgen puts part p's i-th supplier at
   (p + i x (S/4 + (p-1)/S)) mod S + 1 (S suppliers), so the (partkey, suppkey) join is that formula.
4. `q09_lines`: per lineitem row of a matching part, the amount in exact int64 units of 1/10000
   (cents x hundredths - cost cents x quantity x 100), added in shared memory to its group (nation
   code x 16 years, numbered so ascending ids are the ORDER BY), one global atomic per block and group.
5. `q09_final`: one block compacts the groups with rows.
Six launches and one memset (the bitmap); one sync reads the number of groups.
"""

import torch
from torch.utils.cpp_extension import load_inline

FIRST_YEAR = 1988  # TPC-H order dates lie in 1992..1998; 16 years leave room on both sides
YEARS = 16
NAMES = 32  # n_name codes the groups hold (25 nations)
GROUPS = NAMES * YEARS
ROWS = 128  # p_name rows per block of the LIKE

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q09_launch(
    int64_t p_partkey, int64_t p_name, int64_t s_suppkey, int64_t s_nationkey, int64_t n_nationkey,
    int64_t n_name, int64_t o_orderkey, int64_t o_orderdate, int64_t ps_partkey, int64_t ps_suppkey,
    int64_t ps_supplycost, int64_t l_partkey, int64_t l_suppkey, int64_t l_orderkey, int64_t l_extendedprice,
    int64_t l_discount, int64_t l_quantity, int64_t part_bits, int64_t supp_name, int64_t order_year,
    int64_t cost, int64_t sums, int64_t out_nation, int64_t out_year, int64_t out_sum, int64_t found,
    int64_t parts, int64_t width, int64_t suppliers, int64_t nations, int64_t orders, int64_t supply,
    int64_t lines, uint64_t pattern0, uint64_t pattern1, uint64_t pattern2, uint64_t pattern3, int64_t length,
    int64_t line_blocks, int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q09", &q09_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>

constexpr int THREADS = 256;
constexpr int ROWS = 128;
constexpr int FIRST_YEAR = 1988;
constexpr int YEARS = 16;
constexpr int NAMES = 32;
constexpr int GROUPS = NAMES * YEARS;

struct Pattern {
  uint64_t words[4];  // the color's bytes, little-endian, at most 32
  int length;
};

__global__ void __launch_bounds__(ROWS) q09_parts(
    const int64_t* __restrict__ p_partkey, const uint8_t* __restrict__ p_name, uint32_t* __restrict__ bits,
    int64_t parts, int width, Pattern pattern) {
  extern __shared__ uint4 tile[];
  __shared__ uint32_t masks[256];
  for (int b = threadIdx.x; b < 256; b += ROWS) masks[b] = 0;
  __syncthreads();
  if (threadIdx.x < pattern.length) {
    const int k = threadIdx.x;
    // Selects, not an indexed load: the struct stays in registers.
    const uint64_t word = k < 8 ? pattern.words[0]
                          : k < 16 ? pattern.words[1]
                          : k < 24 ? pattern.words[2]
                                   : pattern.words[3];
    atomicOr(masks + ((word >> (8 * (k & 7))) & 255), 1u << k);
  }
  const int64_t row0 = (int64_t)blockIdx.x * ROWS;
  const int rows = (int)min((int64_t)ROWS, parts - row0);
  const uint8_t* base = p_name + row0 * width;
  const int bytes = rows * width;
  // Every byte of the column read once, coalesced: 16-byte loads, the ragged end byte by byte.
  const int vectors = bytes / 16;
  for (int i = threadIdx.x; i < vectors; i += ROWS) tile[i] = __ldg(reinterpret_cast<const uint4*>(base) + i);
  uint8_t* text = reinterpret_cast<uint8_t*>(tile);
  for (int i = vectors * 16 + threadIdx.x; i < bytes; i += ROWS) text[i] = __ldg(base + i);
  __syncthreads();
  if ((int)threadIdx.x >= rows) return;
  const uint8_t* row = text + threadIdx.x * width;
  // Shift-and: bit k of state = the last k + 1 bytes are the color's first k + 1.
  const uint32_t hit = 1u << (pattern.length - 1);
  uint32_t state = 0, found = 0;
#pragma unroll 8
  for (int k = 0; k < width; ++k) {
    state = ((state << 1) | 1u) & masks[row[k]];
    found |= state & hit;
  }
  if (found) {
    const int64_t key = __ldg(p_partkey + row0 + threadIdx.x);
    atomicOr(bits + (key >> 5), 1u << (key & 31));
  }
}

__global__ void __launch_bounds__(THREADS) q09_suppliers(
    const int64_t* __restrict__ s_suppkey, const int64_t* __restrict__ s_nationkey,
    const int64_t* __restrict__ n_nationkey, const int32_t* __restrict__ n_name,
    int32_t* __restrict__ supp_name, int64_t suppliers, int64_t nations) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= suppliers) return;
  const int64_t nation = s_nationkey[i];
  int32_t name = -1;  // no such nation: the supplier joins nothing
  for (int64_t j = 0; j < nations; ++j)
    if (n_nationkey[j] == nation) name = n_name[j];
  supp_name[s_suppkey[i]] = name;
}

// H. Hinnant's civil_from_days: the year of a day count (days since 1970-01-01, after year 0).
__device__ __forceinline__ int year_of(int32_t days) {
  const int z = days + 719468;
  const int era = z / 146097;
  const int doe = z - era * 146097;
  const int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int mp = (5 * doy + 2) / 153;
  return yoe + era * 400 + (mp >= 10);
}

__global__ void __launch_bounds__(THREADS) q09_orders(
    const int64_t* __restrict__ o_orderkey, const int32_t* __restrict__ o_orderdate,
    int16_t* __restrict__ order_year, unsigned long long* __restrict__ sums, int64_t orders) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i < 2 * GROUPS) sums[i] = 0;  // the group sums, then the groups' row counts
  if (i < orders) order_year[__ldg(o_orderkey + i)] = (int16_t)year_of(__ldg(o_orderdate + i));
}

// Which of part's four suppliers supp is (0..3), or -1 (dbgen's partsupp formula, spec 4.2.3).
__device__ __forceinline__ int supplier_slot(int64_t part, int64_t supp, int64_t suppliers) {
  const int64_t step = suppliers / 4 + (part - 1) / suppliers;
  int slot = -1;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if ((part + i * step) % suppliers + 1 == supp) slot = i;
  return slot;
}

__device__ __forceinline__ bool has_bit(const uint32_t* __restrict__ bits, int64_t key) {
  return (__ldg(bits + (key >> 5)) >> (key & 31)) & 1u;
}

__global__ void __launch_bounds__(THREADS) q09_supply(
    const int64_t* __restrict__ ps_partkey, const int64_t* __restrict__ ps_suppkey,
    const double* __restrict__ ps_supplycost, const uint32_t* __restrict__ bits, int64_t* __restrict__ cost,
    int64_t supply, int64_t parts, int64_t suppliers) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= supply) return;
  const int64_t part = __ldg(ps_partkey + i), supp = __ldg(ps_suppkey + i);
  const double c = __ldg(ps_supplycost + i);
  if (part < 1 || part > parts || !has_bit(bits, part)) return;
  const int slot = supplier_slot(part, supp, suppliers);
  if (slot >= 0) cost[part * 4 + slot] = __double2ll_rn(c * 100.0);
}

__global__ void __launch_bounds__(THREADS) q09_lines(
    const int64_t* __restrict__ l_partkey, const int64_t* __restrict__ l_suppkey,
    const int64_t* __restrict__ l_orderkey, const double* __restrict__ price,
    const double* __restrict__ discount, const double* __restrict__ quantity,
    const uint32_t* __restrict__ bits, const int64_t* __restrict__ cost,
    const int32_t* __restrict__ supp_name, const int16_t* __restrict__ order_year,
    unsigned long long* __restrict__ sums, int64_t n, int64_t parts, int64_t suppliers) {
  __shared__ unsigned long long acc[GROUPS];
  __shared__ int rows[GROUPS];
  for (int g = threadIdx.x; g < GROUPS; g += THREADS) acc[g] = 0, rows[g] = 0;
  __syncthreads();
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    // Every column read whole: the bandwidth floor counts all their bytes.
    const int64_t part = __ldg(l_partkey + i), supp = __ldg(l_suppkey + i), order = __ldg(l_orderkey + i);
    const double p = __ldg(price + i), d = __ldg(discount + i), q = __ldg(quantity + i);
    if (part < 1 || part > parts || !has_bit(bits, part)) continue;
    const int slot = supplier_slot(part, supp, suppliers);
    if (slot < 0) continue;
    const int name = supp_name[supp];
    const int year = order_year[order] - FIRST_YEAR;
    if (name < 0 || name >= NAMES || year < 0 || year >= YEARS) continue;
    const int g = name * YEARS + (YEARS - 1 - year);
    // Units of 1/10000: cents x hundredths kept, minus cost cents x quantity x 100.
    const long long amount = __double2ll_rn(p * 100.0) * (100 - __double2ll_rn(d * 100.0)) -
                             cost[part * 4 + slot] * __double2ll_rn(q) * 100;
    atomicAdd(acc + g, (unsigned long long)amount);  // two's complement: negative amounts add right
    atomicAdd(rows + g, 1);
  }
  __syncthreads();
  for (int g = threadIdx.x; g < GROUPS; g += THREADS)
    if (rows[g]) {
      atomicAdd(sums + g, acc[g]);
      atomicAdd(sums + GROUPS + g, (unsigned long long)rows[g]);
    }
}

// One block: the groups with rows, in id order (nation, o_year DESC), and their number.
__global__ void q09_final(
    const unsigned long long* __restrict__ sums, int64_t* __restrict__ out_nation,
    int64_t* __restrict__ out_year, double* __restrict__ out_sum, int64_t* __restrict__ found) {
  int k = 0;
  for (int g = 0; g < GROUPS; ++g) {
    if (sums[GROUPS + g] == 0) continue;
    out_nation[k] = g / YEARS;
    out_year[k] = FIRST_YEAR + YEARS - 1 - g % YEARS;
    out_sum[k] = (double)(long long)sums[g] / 10000.0;
    ++k;
  }
  *found = k;
}

void q09_launch(
    int64_t p_partkey, int64_t p_name, int64_t s_suppkey, int64_t s_nationkey, int64_t n_nationkey,
    int64_t n_name, int64_t o_orderkey, int64_t o_orderdate, int64_t ps_partkey, int64_t ps_suppkey,
    int64_t ps_supplycost, int64_t l_partkey, int64_t l_suppkey, int64_t l_orderkey, int64_t l_extendedprice,
    int64_t l_discount, int64_t l_quantity, int64_t part_bits, int64_t supp_name, int64_t order_year,
    int64_t cost, int64_t sums, int64_t out_nation, int64_t out_year, int64_t out_sum, int64_t found,
    int64_t parts, int64_t width, int64_t suppliers, int64_t nations, int64_t orders, int64_t supply,
    int64_t lines, uint64_t pattern0, uint64_t pattern1, uint64_t pattern2, uint64_t pattern3, int64_t length,
    int64_t line_blocks, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  auto* bits = reinterpret_cast<uint32_t*>(part_bits);
  auto* names = reinterpret_cast<int32_t*>(supp_name);
  auto* years = reinterpret_cast<int16_t*>(order_year);
  auto* costs = reinterpret_cast<int64_t*>(cost);
  auto* totals = reinterpret_cast<unsigned long long*>(sums);
  Pattern pattern{{pattern0, pattern1, pattern2, pattern3}, (int)length};
  if (parts > 0)
    q09_parts<<<(unsigned)((parts + ROWS - 1) / ROWS), ROWS, ROWS * width, s>>>(
        reinterpret_cast<const int64_t*>(p_partkey), reinterpret_cast<const uint8_t*>(p_name), bits, parts,
        (int)width, pattern);
  if (suppliers > 0)
    q09_suppliers<<<(unsigned)((suppliers + THREADS - 1) / THREADS), THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(s_suppkey), reinterpret_cast<const int64_t*>(s_nationkey),
        reinterpret_cast<const int64_t*>(n_nationkey), reinterpret_cast<const int32_t*>(n_name), names,
        suppliers, nations);
  const int64_t order_threads = orders > 2 * GROUPS ? orders : 2 * GROUPS;
  q09_orders<<<(unsigned)((order_threads + THREADS - 1) / THREADS), THREADS, 0, s>>>(
      reinterpret_cast<const int64_t*>(o_orderkey), reinterpret_cast<const int32_t*>(o_orderdate), years,
      totals, orders);
  if (supply > 0 && suppliers > 0)
    q09_supply<<<(unsigned)((supply + THREADS - 1) / THREADS), THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(ps_partkey), reinterpret_cast<const int64_t*>(ps_suppkey),
        reinterpret_cast<const double*>(ps_supplycost), bits, costs, supply, parts, suppliers);
  if (lines > 0 && suppliers > 0)
    q09_lines<<<(unsigned)line_blocks, THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(l_partkey), reinterpret_cast<const int64_t*>(l_suppkey),
        reinterpret_cast<const int64_t*>(l_orderkey), reinterpret_cast<const double*>(l_extendedprice),
        reinterpret_cast<const double*>(l_discount), reinterpret_cast<const double*>(l_quantity), bits, costs,
        names, years, totals, lines, parts, suppliers);
  q09_final<<<1, 1, 0, s>>>(
      totals, reinterpret_cast<int64_t*>(out_nation), reinterpret_cast<int64_t*>(out_year),
      reinterpret_cast<double*>(out_sum), reinterpret_cast<int64_t*>(found));
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_reference_cuda_q09",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def run_query(tables, color: str = "green"):
    part, supplier, lineitem = tables["part"], tables["supplier"], tables["lineitem"]
    partsupp, orders, nation = tables["partsupp"], tables["orders"], tables["nation"]
    pattern = color.encode()
    if not 1 <= len(pattern) <= 32:
        raise ValueError("Q9's color has 1 to 32 bytes")
    if len(nation.dictionary("n_name")) > NAMES:
        raise ValueError(f"Q9 kernel holds {NAMES} nation names")
    p_name = part["p_name"]
    if not p_name.is_contiguous() or p_name.data_ptr() % 16:
        p_name = p_name.contiguous().clone()  # 16-byte aligned tiles (a fresh allocation always is)
    columns = (
        part["p_partkey"],
        p_name,
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        nation["n_nationkey"],
        nation["n_name"],
        orders["o_orderkey"],
        orders["o_orderdate"],
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_supplycost"],
        lineitem["l_partkey"],
        lineitem["l_suppkey"],
        lineitem["l_orderkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_quantity"],
    )
    assert all(c.is_contiguous() for c in columns)
    assert tuple(c.dtype for c in columns) == (
        (
            torch.int64,
            torch.uint8,
            torch.int64,
            torch.int64,
            torch.int64,
            torch.int32,
            torch.int64,
            torch.int32,
        )
        + (torch.int64, torch.int64, torch.float64, torch.int64, torch.int64, torch.int64)
        + (torch.float64,) * 3
    )
    device = p_name.device
    parts, width = p_name.shape
    suppliers, orders_n, supply, lines = supplier.rows, orders.rows, partsupp.rows, lineitem.rows
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    # Keys are dense from 1, except dbgen's sparse order keys: below 4 x the order count. Every slot a
    # later kernel reads is written first (each lineitem key is a key of its table).
    part_bits = torch.zeros((parts + 1 + 31) // 32, dtype=torch.int32, device=device)  # a memset
    supp_name = torch.empty(suppliers + 1, dtype=torch.int32, device=device)
    order_year = torch.empty(4 * orders_n + 1, dtype=torch.int16, device=device)
    cost = torch.empty(4 * (parts + 1), dtype=torch.int64, device=device)
    sums = torch.empty(2 * GROUPS, dtype=torch.int64, device=device)
    out_nation = torch.empty(GROUPS, dtype=torch.int64, device=device)
    out_year = torch.empty(GROUPS, dtype=torch.int64, device=device)
    out_sum = torch.empty(GROUPS, dtype=torch.float64, device=device)
    found = torch.empty(1, dtype=torch.int64, device=device)
    words = [int.from_bytes(pattern[8 * i : 8 * i + 8], "little") for i in range(4)]
    _EXT.q09(
        *(c.data_ptr() for c in columns),
        part_bits.data_ptr(),
        supp_name.data_ptr(),
        order_year.data_ptr(),
        cost.data_ptr(),
        sums.data_ptr(),
        out_nation.data_ptr(),
        out_year.data_ptr(),
        out_sum.data_ptr(),
        found.data_ptr(),
        parts,
        width,
        suppliers,
        nation.rows,
        orders_n,
        supply,
        lines,
        *words,
        len(pattern),
        max(1, min(8 * sms, (lines + 255) // 256)),
        torch.cuda.current_stream(device).cuda_stream,
    )
    k = int(found.item())  # the one sync: the result's size
    return {"nation": out_nation[:k], "o_year": out_year[:k], "sum_profit": out_sum[:k]}

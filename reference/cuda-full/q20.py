"""TPC-H Q20 in CUDA C++ (scope: full): key flags, per-part supplier slots, one lineitem pass.

SELECT s_name, s_address FROM supplier, nation
WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp
                    WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE ':color%')
                      AND ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem
                                         WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
                                           AND l_shipdate in [:date, :date + 1 year)))
  AND s_nationkey = n_nationkey AND n_name = ':nation'
ORDER BY s_name

As in the TorchPlan, the nation filter is pushed into the IN subquery. Part keys are dense 1..P with 4
partsupp rows each, and dbgen puts part p's i-th supplier at (p + i x (S/4 + (p-1)/S)) mod S + 1 (as in
Q9): a (partkey, suppkey) pair is slot 4 x partkey + i, with no search and no slot counter.

1. `q20_parts`: the LIKE prefix compared on p_name's first bytes (the prefix as kernel arguments); a bit
   per matching part key (a bitmap: 250 KB at SF10), its 4 slots emptied. `q20_suppliers`: a flag per
   supplier key of :nation, the marks cleared.
2. `q20_partsupp`: candidate rows (flagged part and supplier) store their availqty in their slot.
3. `q20_lines`: one pass over lineitem; a row in the year of a candidate pair adds (1 << 32) + quantity
   to its slot (count and sum in one int64 atomic).
4. `q20_slots`: per flagged part, a slot with lines and 2 x availqty > sum (exact: whole quantities)
   marks its supplier.
5. `q20_select`: marked suppliers appended with their s_name packed as big-endian 64-bit words
   (comparing words compares bytes); `q20_rank`: each answer row's rank by s_name (then row) against
   all the others, in shared-memory tiles, and the row written at its rank.
Seven launches and one memset (the bitmap); one sync reads the number of answer rows.
"""

import torch
from torch.utils.cpp_extension import load_inline

from evaluator.tpch.encoding import add_months, parse_date

THREADS = 256
NAME_WORDS = 4  # s_name (25 bytes) as 4 big-endian 64-bit words
PREFIX_WORDS = 8  # the LIKE prefix as up to 8 64-bit words: 64 bytes, wider than p_name (55)

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q20_launch(
    int64_t p_partkey, int64_t p_name, int64_t s_suppkey, int64_t s_nationkey, int64_t s_name,
    int64_t n_nationkey, int64_t n_name, int64_t ps_partkey, int64_t ps_suppkey, int64_t ps_availqty,
    int64_t l_partkey, int64_t l_suppkey, int64_t l_quantity, int64_t l_shipdate, int64_t part_bits,
    int64_t supp_ok, int64_t marked, int64_t avail, int64_t totals, int64_t found, int64_t list_row,
    int64_t list_name, int64_t out_row, int64_t parts, int64_t p_width, int64_t suppliers, int64_t s_width,
    int64_t nations, int64_t supply, int64_t lines, int64_t nation, int64_t date_lo, int64_t date_hi,
    uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3, uint64_t w4, uint64_t w5, uint64_t w6, uint64_t w7,
    int64_t length, int64_t line_blocks, int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q20", &q20_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int THREADS = 256;
constexpr int SLOTS = 4;
constexpr int NAME_WORDS = 4;
constexpr int PREFIX_WORDS = 8;
constexpr int COUNT_SHIFT = 32;

struct Prefix {
  uint64_t words[PREFIX_WORDS];  // the LIKE prefix, little-endian
  int length;
};

__device__ __forceinline__ bool has_bit(const uint32_t* __restrict__ bits, int64_t key) {
  return (__ldg(bits + (key >> 5)) >> (key & 31)) & 1u;
}

__global__ void __launch_bounds__(THREADS) q20_parts(
    const int64_t* __restrict__ p_partkey, const uint8_t* __restrict__ p_name, uint32_t* __restrict__ bits,
    int64_t* __restrict__ avail, unsigned long long* __restrict__ totals, int64_t parts, int width,
    Prefix prefix) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= parts) return;
  const uint8_t* name = p_name + i * width;
  bool ok = prefix.length <= width;
  // Only the prefix's bytes are read; the words are selected with constant indices (registers).
#pragma unroll
  for (int w = 0; w < PREFIX_WORDS; ++w)
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const int c = 8 * w + b;
      if (ok && c < prefix.length) ok = name[c] == ((prefix.words[w] >> (8 * b)) & 255);
    }
  if (!ok) return;
  const int64_t key = p_partkey[i];
  atomicOr(bits + (key >> 5), 1u << (key & 31));
#pragma unroll
  for (int s = 0; s < SLOTS; ++s) avail[key * SLOTS + s] = -1, totals[key * SLOTS + s] = 0;
}

__global__ void __launch_bounds__(THREADS) q20_suppliers(
    const int64_t* __restrict__ s_suppkey, const int64_t* __restrict__ s_nationkey,
    const int64_t* __restrict__ n_nationkey, const int32_t* __restrict__ n_name, int8_t* __restrict__ supp_ok,
    int8_t* __restrict__ marked, int* __restrict__ found, int64_t suppliers, int64_t nations,
    int32_t nation) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i == 0) *found = 0;
  if (i >= suppliers) return;
  const int64_t nkey = s_nationkey[i];
  bool ok = false;
  for (int64_t j = 0; j < nations; ++j) ok |= n_nationkey[j] == nkey && n_name[j] == nation;
  const int64_t key = s_suppkey[i];
  supp_ok[key] = ok;
  marked[key] = 0;
}

// Which of part's four suppliers supp is (0..3), or -1 (dbgen's partsupp formula, spec 4.2.3).
__device__ __forceinline__ int supplier_slot(int64_t part, int64_t supp, int64_t suppliers) {
  const int64_t step = suppliers / 4 + (part - 1) / suppliers;
  int slot = -1;
#pragma unroll
  for (int i = 0; i < SLOTS; ++i)
    if ((part + i * step) % suppliers + 1 == supp) slot = i;
  return slot;
}

__global__ void __launch_bounds__(THREADS) q20_partsupp(
    const int64_t* __restrict__ ps_partkey, const int64_t* __restrict__ ps_suppkey,
    const int64_t* __restrict__ ps_availqty, const uint32_t* __restrict__ bits,
    const int8_t* __restrict__ supp_ok, int64_t* __restrict__ avail, int64_t supply, int64_t parts,
    int64_t suppliers) {
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < supply; i += stride) {
    // Every column read whole: the bandwidth floor counts all their bytes.
    const int64_t part = __ldg(ps_partkey + i), supp = __ldg(ps_suppkey + i), qty = __ldg(ps_availqty + i);
    if (supp < 1 || supp > suppliers || !supp_ok[supp] || part < 1 || part > parts || !has_bit(bits, part))
      continue;
    const int slot = supplier_slot(part, supp, suppliers);
    if (slot >= 0) avail[part * SLOTS + slot] = qty;
  }
}

__global__ void __launch_bounds__(THREADS) q20_lines(
    const int64_t* __restrict__ l_partkey, const int64_t* __restrict__ l_suppkey,
    const double* __restrict__ l_quantity, const int32_t* __restrict__ l_shipdate,
    const uint32_t* __restrict__ bits, const int8_t* __restrict__ supp_ok, const int64_t* __restrict__ avail,
    unsigned long long* __restrict__ totals, int64_t n, int64_t parts, int64_t suppliers, int32_t date_lo,
    int32_t date_hi) {
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    // Every column read whole: the bandwidth floor counts all their bytes.
    const int64_t part = __ldg(l_partkey + i), supp = __ldg(l_suppkey + i);
    const double q = __ldg(l_quantity + i);
    const int32_t d = __ldg(l_shipdate + i);
    if (d < date_lo || d >= date_hi || supp < 1 || supp > suppliers || part < 1 || part > parts) continue;
    if (!__ldg(supp_ok + supp) || !has_bit(bits, part)) continue;
    const int slot = supplier_slot(part, supp, suppliers);
    if (slot < 0 || avail[part * SLOTS + slot] < 0) continue;
    atomicAdd(totals + part * SLOTS + slot, (1ull << COUNT_SHIFT) + (unsigned long long)__double2ll_rn(q));
  }
}

__global__ void __launch_bounds__(THREADS) q20_slots(
    const uint32_t* __restrict__ bits, const int64_t* __restrict__ avail,
    const unsigned long long* __restrict__ totals, int8_t* __restrict__ marked, int64_t parts,
    int64_t suppliers) {
  const int64_t part = (int64_t)blockIdx.x * THREADS + threadIdx.x + 1;
  if (part > parts || !has_bit(bits, part)) return;
  const int64_t step = suppliers / 4 + (part - 1) / suppliers;
#pragma unroll
  for (int s = 0; s < SLOTS; ++s) {
    const int64_t qty = avail[part * SLOTS + s];
    const unsigned long long t = totals[part * SLOTS + s];
    const long long count = (long long)(t >> COUNT_SHIFT), sum = (long long)(t & 0xffffffffull);
    // availqty > 0.5 * sum, exact; SUM over no lines is NULL, which passes nothing.
    if (qty >= 0 && count > 0 && 2 * qty > sum) marked[(part + s * step) % suppliers + 1] = 1;
  }
}

__global__ void __launch_bounds__(THREADS) q20_select(
    const int64_t* __restrict__ s_suppkey, const uint8_t* __restrict__ s_name,
    const int8_t* __restrict__ marked, int* __restrict__ found, int64_t* __restrict__ list_row,
    unsigned long long* __restrict__ list_name, int64_t suppliers, int width) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= suppliers || !marked[s_suppkey[i]]) return;
  cg::coalesced_group group = cg::coalesced_threads();
  int at = 0;
  if (group.thread_rank() == 0) at = atomicAdd(found, (int)group.size());
  at = group.shfl(at, 0) + group.thread_rank();
  list_row[at] = i;
  // s_name as big-endian words, zero-padded: comparing words in order compares the bytes.
  const uint8_t* name = s_name + i * width;
#pragma unroll
  for (int w = 0; w < NAME_WORDS; ++w) {
    unsigned long long word = 0;
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const int c = 8 * w + b;
      word = (word << 8) | (c < width ? name[c] : 0);
    }
    list_name[(int64_t)at * NAME_WORDS + w] = word;
  }
}

// Row a before row b: s_name, then the supplier row (equal names never occur in TPC-H).
__device__ __forceinline__ bool before(const unsigned long long* a, int64_t ra, const unsigned long long* b,
                                       int64_t rb) {
#pragma unroll
  for (int w = 0; w < NAME_WORDS; ++w)
    if (a[w] != b[w]) return a[w] < b[w];
  return ra < rb;
}

__global__ void __launch_bounds__(THREADS) q20_rank(
    const int* __restrict__ found, const int64_t* __restrict__ list_row,
    const unsigned long long* __restrict__ list_name, int64_t* __restrict__ out_row) {
  __shared__ unsigned long long names[THREADS * NAME_WORDS];
  __shared__ int64_t rows[THREADS];
  const int m = *found;
  const int i = blockIdx.x * THREADS + threadIdx.x;
  if ((int)(blockIdx.x * THREADS) >= m) return;  // the whole block is past the list
  unsigned long long mine[NAME_WORDS] = {0, 0, 0, 0};
  int64_t row = 0;
  if (i < m) {
    row = list_row[i];
#pragma unroll
    for (int w = 0; w < NAME_WORDS; ++w) mine[w] = list_name[(int64_t)i * NAME_WORDS + w];
  }
  int rank = 0;
  for (int tile = 0; tile < m; tile += THREADS) {
    __syncthreads();
    const int j = tile + threadIdx.x;
    if (j < m) {
      rows[threadIdx.x] = list_row[j];
#pragma unroll
      for (int w = 0; w < NAME_WORDS; ++w)
        names[threadIdx.x * NAME_WORDS + w] = list_name[(int64_t)j * NAME_WORDS + w];
    }
    __syncthreads();
    const int count = min(THREADS, m - tile);
    for (int k = 0; k < count; ++k) rank += before(names + k * NAME_WORDS, rows[k], mine, row);
  }
  if (i < m) out_row[rank] = row;
}

void q20_launch(
    int64_t p_partkey, int64_t p_name, int64_t s_suppkey, int64_t s_nationkey, int64_t s_name,
    int64_t n_nationkey, int64_t n_name, int64_t ps_partkey, int64_t ps_suppkey, int64_t ps_availqty,
    int64_t l_partkey, int64_t l_suppkey, int64_t l_quantity, int64_t l_shipdate, int64_t part_bits,
    int64_t supp_ok, int64_t marked, int64_t avail, int64_t totals, int64_t found, int64_t list_row,
    int64_t list_name, int64_t out_row, int64_t parts, int64_t p_width, int64_t suppliers, int64_t s_width,
    int64_t nations, int64_t supply, int64_t lines, int64_t nation, int64_t date_lo, int64_t date_hi,
    uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3, uint64_t w4, uint64_t w5, uint64_t w6, uint64_t w7,
    int64_t length, int64_t line_blocks, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  const Prefix prefix{{w0, w1, w2, w3, w4, w5, w6, w7}, (int)length};
  auto* bits = reinterpret_cast<uint32_t*>(part_bits);
  auto* ok = reinterpret_cast<int8_t*>(supp_ok);
  auto* marks = reinterpret_cast<int8_t*>(marked);
  auto* avails = reinterpret_cast<int64_t*>(avail);
  auto* sums = reinterpret_cast<unsigned long long*>(totals);
  auto* nfound = reinterpret_cast<int*>(found);
  auto* lrow = reinterpret_cast<int64_t*>(list_row);
  auto* lname = reinterpret_cast<unsigned long long*>(list_name);
  if (parts > 0)
    q20_parts<<<(unsigned)((parts + THREADS - 1) / THREADS), THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(p_partkey), reinterpret_cast<const uint8_t*>(p_name), bits, avails,
        sums, parts, (int)p_width, prefix);
  q20_suppliers<<<(unsigned)((suppliers + THREADS) / THREADS), THREADS, 0, s>>>(
      reinterpret_cast<const int64_t*>(s_suppkey), reinterpret_cast<const int64_t*>(s_nationkey),
      reinterpret_cast<const int64_t*>(n_nationkey), reinterpret_cast<const int32_t*>(n_name), ok, marks,
      nfound, suppliers, nations, (int32_t)nation);
  if (suppliers == 0) return;
  if (supply > 0)
    q20_partsupp<<<(unsigned)line_blocks, THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(ps_partkey), reinterpret_cast<const int64_t*>(ps_suppkey),
        reinterpret_cast<const int64_t*>(ps_availqty), bits, ok, avails, supply, parts, suppliers);
  if (lines > 0)
    q20_lines<<<(unsigned)line_blocks, THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(l_partkey), reinterpret_cast<const int64_t*>(l_suppkey),
        reinterpret_cast<const double*>(l_quantity), reinterpret_cast<const int32_t*>(l_shipdate), bits, ok,
        avails, sums, lines, parts, suppliers, (int32_t)date_lo, (int32_t)date_hi);
  if (parts > 0)
    q20_slots<<<(unsigned)((parts + THREADS - 1) / THREADS), THREADS, 0, s>>>(
        bits, avails, sums, marks, parts, suppliers);
  const unsigned key_blocks = (unsigned)((suppliers + THREADS - 1) / THREADS);
  q20_select<<<key_blocks, THREADS, 0, s>>>(
      reinterpret_cast<const int64_t*>(s_suppkey), reinterpret_cast<const uint8_t*>(s_name), marks, nfound,
      lrow, lname, suppliers, (int)s_width);
  q20_rank<<<key_blocks, THREADS, 0, s>>>(nfound, lrow, lname, reinterpret_cast<int64_t*>(out_row));
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_reference_cuda_q20",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def run_query(tables, color: str = "forest", date: str = "1994-01-01", nation: str = "CANADA"):
    supplier, nation_table, part = tables["supplier"], tables["nation"], tables["part"]
    partsupp, lineitem = tables["partsupp"], tables["lineitem"]
    prefix = color.encode()
    columns = (
        part["p_partkey"],
        part["p_name"],
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        supplier["s_name"],
        nation_table["n_nationkey"],
        nation_table["n_name"],
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_availqty"],
        lineitem["l_partkey"],
        lineitem["l_suppkey"],
        lineitem["l_quantity"],
        lineitem["l_shipdate"],
    )
    assert all(c.is_contiguous() for c in columns)
    assert tuple(c.dtype for c in columns) == (
        (torch.int64, torch.uint8, torch.int64, torch.int64, torch.uint8, torch.int64, torch.int32)
        + (torch.int64, torch.int64, torch.int64, torch.int64, torch.int64, torch.float64, torch.int32)
    )
    s_width = supplier["s_name"].shape[1]
    if s_width > 8 * NAME_WORDS:
        raise ValueError(f"Q20 kernel orders s_name of up to {8 * NAME_WORDS} bytes")
    device = columns[0].device
    parts, p_width = part["p_name"].shape
    suppliers, supply, lines = supplier.rows, partsupp.rows, lineitem.rows
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    names = nation_table.dictionary("n_name")
    nation_code = names.index(nation) if nation in names else -1
    # A prefix longer than 64 bytes is longer than p_name too: no part matches (length > width).
    words = [int.from_bytes(prefix[8 * w : 8 * w + 8], "little") for w in range(PREFIX_WORDS)]

    def empty(size, dtype):
        return torch.empty(max(1, size), dtype=dtype, device=device)

    part_bits = torch.zeros((parts + 1 + 31) // 32, dtype=torch.int32, device=device)  # a memset
    supp_ok = empty(suppliers + 1, torch.int8)
    marked = empty(suppliers + 1, torch.int8)
    avail = empty(4 * (parts + 1), torch.int64)
    totals = empty(4 * (parts + 1), torch.int64)
    found = empty(1, torch.int32)
    list_row = empty(suppliers, torch.int64)
    list_name = empty(suppliers * NAME_WORDS, torch.int64)
    out_row = empty(suppliers, torch.int64)
    _EXT.q20(
        *(c.data_ptr() for c in columns),
        part_bits.data_ptr(),
        supp_ok.data_ptr(),
        marked.data_ptr(),
        avail.data_ptr(),
        totals.data_ptr(),
        found.data_ptr(),
        list_row.data_ptr(),
        list_name.data_ptr(),
        out_row.data_ptr(),
        parts,
        p_width,
        suppliers,
        s_width,
        nation_table.rows,
        supply,
        lines,
        nation_code,
        parse_date(date),
        add_months(date, 12),
        *words,
        min(len(prefix), 1 << 20),
        max(1, min(8 * sms, (lines + THREADS - 1) // THREADS)),
        torch.cuda.current_stream(device).cuda_stream,
    )
    m = int(found.item())  # the one sync: the result's size
    rows = out_row[:m]
    return {"s_name": rows, "s_address": rows}

"""TPC-H Q21 in CUDA C++ (scope: full): per-order first supplier by compare-and-swap, one lineitem pass.

SELECT s_name, count(*) AS numwait FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (SELECT * FROM lineitem l3 WHERE l3.l_orderkey = l1.l_orderkey
                  AND l3.l_suppkey <> l1.l_suppkey AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey AND n_name = ':nation'
GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 100

Per order key two words hold the first supplier seen among all its lines and among its late lines (0:
none yet; -2 in the all-word marks an order that is not 'F'), and two flags whether a different
supplier was seen. A line reads the word; if 0 it compare-and-swaps its supplier in, and an old value
neither 0 nor its own sets the flag: exact in any order, since the word changes once, and atomics are
only paid by an order's first lines. EXISTS l2 is the all-flag (l1's own supplier is one of the
order's); NOT EXISTS l3 is "no late-flag" (l1 is late itself).

1. `q21_suppliers`: per supplier key its :nation flag, row and a zeroed count; `q21_orders`: the words
   and flags per order key.
2. `q21_lines`: the pass; candidate l1 rows (late, 'F', supplier of :nation, ~1% of lineitem) go to the
   block's own slab of a buffer (a shared-memory counter: no global one).
3. `q21_wait`: once every order's flags are final, each candidate that waited adds 1 to its supplier.
4. `q21_list`: suppliers with a count appended to a list, each with its ORDER BY key packed into 4
   words (numwait DESC, then s_name's bytes big-endian); `q21_rank`: each one's rank against all the
   listed in shared-memory tiles, and the first 100 written at their ranks.
Six launches, no PyTorch kernel; one sync reads how many suppliers have a count.
"""

import torch
from torch.utils.cpp_extension import load_inline

LIMIT = 100
THREADS = 256
NAME_WORDS = 4  # the ORDER BY key of a supplier: numwait and up to 28 s_name bytes in 4 words

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q21_launch(
    int64_t s_suppkey, int64_t s_nationkey, int64_t s_name, int64_t n_nationkey, int64_t n_name,
    int64_t o_orderkey, int64_t o_orderstatus, int64_t l_orderkey, int64_t l_suppkey, int64_t l_commitdate,
    int64_t l_receiptdate, int64_t supplier_ok, int64_t supplier_row, int64_t numwait, int64_t words,
    int64_t flags, int64_t cand_key, int64_t cand_supp, int64_t cand_count, int64_t listed, int64_t list_row,
    int64_t list_wait, int64_t list_words, int64_t out_row, int64_t out_wait, int64_t suppliers,
    int64_t name_width, int64_t nations, int64_t orders, int64_t order_keys, int64_t lines, int64_t nation,
    int64_t status, int64_t line_blocks, int64_t slab, int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q21", &q21_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int THREADS = 256;
constexpr int LIMIT = 100;
constexpr int32_t NOT_F = -2;
constexpr int NAME_WORDS = 4;

__global__ void __launch_bounds__(THREADS) q21_suppliers(
    const int64_t* __restrict__ s_suppkey, const int64_t* __restrict__ s_nationkey,
    const int64_t* __restrict__ n_nationkey, const int32_t* __restrict__ n_name,
    int8_t* __restrict__ supplier_ok, int32_t* __restrict__ supplier_row, int32_t* __restrict__ numwait,
    int* __restrict__ listed, int64_t suppliers, int64_t nations, int32_t nation) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i == 0) numwait[0] = 0, *listed = 0;  // key 0 is no supplier's: the count array is scanned whole
  if (i >= suppliers) return;
  const int64_t nkey = s_nationkey[i];
  bool ok = false;
  for (int64_t j = 0; j < nations; ++j) ok |= n_nationkey[j] == nkey && n_name[j] == nation;
  const int64_t key = s_suppkey[i];
  supplier_ok[key] = ok;
  supplier_row[key] = (int32_t)i;
  numwait[key] = 0;
}

// words[2k] / words[2k + 1]: first supplier of all / late lines of order key k; flags likewise.
__global__ void __launch_bounds__(THREADS) q21_orders(
    const int64_t* __restrict__ o_orderkey, const int32_t* __restrict__ o_orderstatus,
    int2* __restrict__ words, char2* __restrict__ flags, int64_t orders, int32_t status) {
  const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (i >= orders) return;
  const int64_t key = __ldg(o_orderkey + i);
  const bool failed = __ldg(o_orderstatus + i) == status;
  words[key] = make_int2(failed ? 0 : NOT_F, 0);
  flags[key] = make_char2(0, 0);
}

// Records supp as a supplier of the order word: true when the order has another one.
__device__ __forceinline__ bool another(int32_t* word, int32_t supp) {
  int32_t seen = __ldcg(word);
  if (seen == 0) seen = atomicCAS(word, 0, supp);  // 0 back: supp is the first
  return seen != 0 && seen != supp;
}

__global__ void __launch_bounds__(THREADS) q21_lines(
    const int64_t* __restrict__ l_orderkey, const int64_t* __restrict__ l_suppkey,
    const int32_t* __restrict__ commitdate, const int32_t* __restrict__ receiptdate,
    const int8_t* __restrict__ supplier_ok, int32_t* __restrict__ words, int8_t* __restrict__ flags,
    int64_t* __restrict__ cand_key, int32_t* __restrict__ cand_supp, int* __restrict__ cand_count, int64_t n,
    int64_t slab) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  const int64_t stride = (int64_t)gridDim.x * THREADS;
  int64_t* my_key = cand_key + blockIdx.x * slab;
  int32_t* my_supp = cand_supp + blockIdx.x * slab;
  for (int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
    // Every column read whole: the bandwidth floor counts all their bytes.
    const int64_t key = __ldg(l_orderkey + i);
    const int32_t supp = (int32_t)__ldg(l_suppkey + i);
    const bool late = __ldg(receiptdate + i) > __ldg(commitdate + i);
    int32_t* word = words + 2 * key;
    if (__ldcg(word) == NOT_F) continue;
    if (another(word, supp)) flags[2 * key] = 1;
    if (!late) continue;
    if (another(word + 1, supp)) flags[2 * key + 1] = 1;
    if (supplier_ok[supp]) {
      const int at = atomicAdd(&count, 1);
      my_key[at] = key;
      my_supp[at] = supp;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) cand_count[blockIdx.x] = count;
}

__global__ void __launch_bounds__(THREADS) q21_wait(
    const int64_t* __restrict__ cand_key, const int32_t* __restrict__ cand_supp,
    const int* __restrict__ cand_count, const int8_t* __restrict__ flags, int32_t* __restrict__ numwait,
    int64_t slab) {
  const int count = cand_count[blockIdx.x];
  for (int j = threadIdx.x; j < count; j += THREADS) {
    const int64_t at = blockIdx.x * slab + j;
    const int64_t key = cand_key[at];
    if (flags[2 * key] && !flags[2 * key + 1]) atomicAdd(numwait + cand_supp[at], 1);
  }
}

// Suppliers with a count appended, each with its ORDER BY key as 4 words that compare in order: numwait
// DESC (2^32 - 1 - numwait in the high half of word 0), then s_name's bytes big-endian (4 in word 0, 8 in
// each of words 1-3: s_name has 25), then the row (equal names never occur in TPC-H).
__global__ void __launch_bounds__(THREADS) q21_list(
    const int32_t* __restrict__ numwait, const int32_t* __restrict__ supplier_row,
    const uint8_t* __restrict__ s_name, int* __restrict__ listed, int64_t* __restrict__ list_row,
    int64_t* __restrict__ list_wait, unsigned long long* __restrict__ list_words, int64_t suppliers,
    int width) {
  const int64_t key = (int64_t)blockIdx.x * THREADS + threadIdx.x;
  if (key > suppliers || numwait[key] == 0) return;
  cg::coalesced_group group = cg::coalesced_threads();
  int at = 0;
  if (group.thread_rank() == 0) at = atomicAdd(listed, (int)group.size());
  at = group.shfl(at, 0) + group.thread_rank();
  const int32_t wait = numwait[key], row = supplier_row[key];
  const uint8_t* name = s_name + (int64_t)row * width;
  list_row[at] = row;
  list_wait[at] = wait;
  unsigned long long word = 0xffffffffull - (unsigned long long)wait;
  int w = 0;
#pragma unroll
  for (int c = 0; c < 28; ++c) {
    word = (word << 8) | (c < width ? name[c] : 0);
    if (c == 3 || c == 11 || c == 19 || c == 27) list_words[(int64_t)at * NAME_WORDS + w++] = word, word = 0;
  }
}

// Entry a before entry b: the words in order, then the row.
__device__ __forceinline__ bool before(const unsigned long long* a, int64_t ra, const unsigned long long* b,
                                       int64_t rb) {
#pragma unroll
  for (int w = 0; w < NAME_WORDS; ++w)
    if (a[w] != b[w]) return a[w] < b[w];
  return ra < rb;
}

// Each listed supplier's rank against all the others (shared-memory tiles); the first 100 placed.
__global__ void __launch_bounds__(THREADS) q21_rank(
    const int* __restrict__ listed, const int64_t* __restrict__ list_row,
    const int64_t* __restrict__ list_wait, const unsigned long long* __restrict__ list_words,
    int64_t* __restrict__ out_row, int64_t* __restrict__ out_wait) {
  __shared__ unsigned long long words[THREADS * NAME_WORDS];
  __shared__ int64_t rows[THREADS];
  const int m = *listed;
  const int i = blockIdx.x * THREADS + threadIdx.x;
  if ((int)(blockIdx.x * THREADS) >= m) return;  // the whole block is past the list
  unsigned long long mine[NAME_WORDS] = {0, 0, 0, 0};
  int64_t row = 0;
  if (i < m) {
    row = list_row[i];
#pragma unroll
    for (int w = 0; w < NAME_WORDS; ++w) mine[w] = list_words[(int64_t)i * NAME_WORDS + w];
  }
  int rank = 0;
  for (int tile = 0; tile < m; tile += THREADS) {
    __syncthreads();
    const int j = tile + threadIdx.x;
    if (j < m) {
      rows[threadIdx.x] = list_row[j];
#pragma unroll
      for (int w = 0; w < NAME_WORDS; ++w)
        words[threadIdx.x * NAME_WORDS + w] = list_words[(int64_t)j * NAME_WORDS + w];
    }
    __syncthreads();
    const int count = min(THREADS, m - tile);
    for (int k = 0; k < count; ++k) rank += before(words + k * NAME_WORDS, rows[k], mine, row);
  }
  if (i < m && rank < LIMIT) {
    out_row[rank] = row;
    out_wait[rank] = list_wait[i];
  }
}

void q21_launch(
    int64_t s_suppkey, int64_t s_nationkey, int64_t s_name, int64_t n_nationkey, int64_t n_name,
    int64_t o_orderkey, int64_t o_orderstatus, int64_t l_orderkey, int64_t l_suppkey, int64_t l_commitdate,
    int64_t l_receiptdate, int64_t supplier_ok, int64_t supplier_row, int64_t numwait, int64_t words,
    int64_t flags, int64_t cand_key, int64_t cand_supp, int64_t cand_count, int64_t listed, int64_t list_row,
    int64_t list_wait, int64_t list_words, int64_t out_row, int64_t out_wait, int64_t suppliers,
    int64_t name_width, int64_t nations, int64_t orders, int64_t order_keys, int64_t lines, int64_t nation,
    int64_t status, int64_t line_blocks, int64_t slab, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  auto* ok = reinterpret_cast<int8_t*>(supplier_ok);
  auto* rows = reinterpret_cast<int32_t*>(supplier_row);
  auto* waits = reinterpret_cast<int32_t*>(numwait);
  auto* nlisted = reinterpret_cast<int*>(listed);
  auto* ckey = reinterpret_cast<int64_t*>(cand_key);
  auto* csupp = reinterpret_cast<int32_t*>(cand_supp);
  auto* ccount = reinterpret_cast<int*>(cand_count);
  q21_suppliers<<<(unsigned)((suppliers + THREADS) / THREADS), THREADS, 0, s>>>(
      reinterpret_cast<const int64_t*>(s_suppkey), reinterpret_cast<const int64_t*>(s_nationkey),
      reinterpret_cast<const int64_t*>(n_nationkey), reinterpret_cast<const int32_t*>(n_name), ok, rows,
      waits, nlisted, suppliers, nations, (int32_t)nation);
  if (orders > 0)
    q21_orders<<<(unsigned)((orders + THREADS - 1) / THREADS), THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(o_orderkey), reinterpret_cast<const int32_t*>(o_orderstatus),
        reinterpret_cast<int2*>(words), reinterpret_cast<char2*>(flags), orders, (int32_t)status);
  if (lines > 0) {
    q21_lines<<<(unsigned)line_blocks, THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(l_orderkey), reinterpret_cast<const int64_t*>(l_suppkey),
        reinterpret_cast<const int32_t*>(l_commitdate), reinterpret_cast<const int32_t*>(l_receiptdate), ok,
        reinterpret_cast<int32_t*>(words), reinterpret_cast<int8_t*>(flags), ckey, csupp, ccount, lines,
        slab);
    q21_wait<<<(unsigned)line_blocks, THREADS, 0, s>>>(
        ckey, csupp, ccount, reinterpret_cast<int8_t*>(flags), waits, slab);
  }
  const unsigned key_blocks = (unsigned)((suppliers + THREADS) / THREADS);
  q21_list<<<key_blocks, THREADS, 0, s>>>(
      waits, rows, reinterpret_cast<const uint8_t*>(s_name), nlisted, reinterpret_cast<int64_t*>(list_row),
      reinterpret_cast<int64_t*>(list_wait), reinterpret_cast<unsigned long long*>(list_words), suppliers,
      (int)name_width);
  q21_rank<<<key_blocks, THREADS, 0, s>>>(
      nlisted, reinterpret_cast<const int64_t*>(list_row), reinterpret_cast<const int64_t*>(list_wait),
      reinterpret_cast<const unsigned long long*>(list_words), reinterpret_cast<int64_t*>(out_row),
      reinterpret_cast<int64_t*>(out_wait));
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_reference_cuda_q21",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def _code(dictionary, value):
    return dictionary.index(value) if value in dictionary else -1


def run_query(tables, nation: str = "SAUDI ARABIA"):
    supplier, orders, lineitem = tables["supplier"], tables["orders"], tables["lineitem"]
    nations = tables["nation"]
    columns = (
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        supplier["s_name"],
        nations["n_nationkey"],
        nations["n_name"],
        orders["o_orderkey"],
        orders["o_orderstatus"],
        lineitem["l_orderkey"],
        lineitem["l_suppkey"],
        lineitem["l_commitdate"],
        lineitem["l_receiptdate"],
    )
    assert all(c.is_contiguous() for c in columns)
    assert tuple(c.dtype for c in columns) == (
        (torch.int64, torch.int64, torch.uint8, torch.int64, torch.int32, torch.int64, torch.int32)
        + (torch.int64, torch.int64, torch.int32, torch.int32)
    )
    if supplier["s_name"].shape[1] > 28:
        raise ValueError("Q21 kernel orders s_name of up to 28 bytes")
    device = columns[0].device
    suppliers, orders_n, lines = supplier.rows, orders.rows, lineitem.rows
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    line_blocks = max(1, min(8 * sms, (lines + THREADS - 1) // THREADS))
    # A block's slab holds every row it visits, so it never overflows; only ~1% of it is written.
    slab = -(-lines // (line_blocks * THREADS)) * THREADS

    def empty(size, dtype):
        return torch.empty(max(1, size), dtype=dtype, device=device)

    # Keys are dense from 1, except dbgen's sparse order keys: below 4 x the order count. A slot is read
    # only where it was written (each lineitem key is a key of its table).
    order_keys = 4 * orders_n + 1
    supplier_ok = empty(suppliers + 1, torch.int8)
    supplier_row = empty(suppliers + 1, torch.int32)
    numwait = empty(suppliers + 1, torch.int32)
    words = empty(2 * order_keys, torch.int32)
    flags = empty(2 * order_keys, torch.int8)
    cand_key = empty(line_blocks * slab, torch.int64)
    cand_supp = empty(line_blocks * slab, torch.int32)
    cand_count = empty(line_blocks, torch.int32)
    listed = empty(1, torch.int32)
    list_row = empty(suppliers + 1, torch.int64)
    list_wait = empty(suppliers + 1, torch.int64)
    list_words = empty((suppliers + 1) * NAME_WORDS, torch.int64)
    out_row = empty(LIMIT, torch.int64)
    out_wait = empty(LIMIT, torch.int64)
    _EXT.q21(
        *(c.data_ptr() for c in columns),
        supplier_ok.data_ptr(),
        supplier_row.data_ptr(),
        numwait.data_ptr(),
        words.data_ptr(),
        flags.data_ptr(),
        cand_key.data_ptr(),
        cand_supp.data_ptr(),
        cand_count.data_ptr(),
        listed.data_ptr(),
        list_row.data_ptr(),
        list_wait.data_ptr(),
        list_words.data_ptr(),
        out_row.data_ptr(),
        out_wait.data_ptr(),
        suppliers,
        supplier["s_name"].shape[1],
        nations.rows,
        orders_n,
        order_keys,
        lines,
        _code(nations.dictionary("n_name"), nation),
        _code(orders.dictionary("o_orderstatus"), "F"),
        line_blocks,
        slab,
        torch.cuda.current_stream(device).cuda_stream,
    )
    k = min(LIMIT, int(listed.item()))  # the one sync: how many suppliers have a count
    return {"s_name": out_row[:k], "numwait": out_wait[:k]}

"""TPC-H Q13 in CUDA C++ (scope: full): LIKE '%w1%w2%' over o_comment fused with the per-customer count.

SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%:word1%:word2%' GROUP BY c_custkey)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC

1. `q13_scan`: a block copies ROWS comment rows (one contiguous byte range of the [orders, width] matrix)
   into shared memory with 16-byte loads, then each thread walks its row's bytes once with a 64-bit
   window of the last 8 bytes: a word of at most 8 bytes is one masked compare per byte. The first end
   of word1 is kept; a later word2 that starts after it excludes the row (LIKE holds). A counted order
   adds 1 to its customer's count (customer keys are dense 1..N).
2. `q13_histogram`: per customer its count, binned in a shared-memory histogram, added once per block.
3. `q13_result`: one block ranks the non-empty bins by (custdist, c_count) descending (256 x 256
   compares) and writes them at their ranks, with the number of groups and an overflow flag.

Three launches and two memsets; one sync reads the number of groups. A count of BINS or more (none in
TPC-H data) takes a PyTorch slow path.
"""

import torch
from torch.utils.cpp_extension import load_inline

ROWS = 128  # comment rows per block of the scan: ROWS * width bytes is a multiple of 16 for any width
BINS = 256  # c_count values the histogram holds; bin BINS flags a larger one
HIST_BLOCKS = 264
MAX_WORD = 8  # a 64-bit window holds words of up to 8 bytes

CPP = r"""
#include <pybind11/pybind11.h>
#include <cstdint>

void q13_launch(int64_t comment, int64_t o_custkey, int64_t c_custkey, int64_t counts, int64_t hist,
                int64_t c_count, int64_t custdist, int64_t groups, int64_t orders, int64_t width,
                int64_t customers, int64_t customer_keys, uint64_t p1, uint64_t m1, int64_t len1,
                uint64_t p2, uint64_t m2, int64_t len2, int64_t hist_blocks, int64_t stream);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("q13", &q13_launch); }
"""

CUDA = r"""
#include <cstdint>
#include <cuda_runtime.h>

constexpr int ROWS = 128;
constexpr int BINS = 256;
constexpr int HIST_THREADS = 256;

__global__ void __launch_bounds__(ROWS) q13_scan(
    const uint8_t* __restrict__ comment, const int64_t* __restrict__ o_custkey, int32_t* __restrict__ counts,
    int64_t orders, int width, int64_t customer_keys, uint64_t p1, uint64_t m1, int len1, uint64_t p2,
    uint64_t m2, int len2) {
  extern __shared__ uint4 tile[];
  const int64_t row0 = (int64_t)blockIdx.x * ROWS;
  const int rows = (int)min((int64_t)ROWS, orders - row0);
  const uint8_t* base = comment + row0 * width;
  const int bytes = rows * width;
  // Every byte of the column is read once, coalesced: 16-byte loads, the ragged end byte by byte.
  const int vectors = bytes / 16;
  const uint4* src = reinterpret_cast<const uint4*>(base);
  for (int i = threadIdx.x; i < vectors; i += ROWS) tile[i] = __ldg(src + i);
  uint8_t* bytes_sh = reinterpret_cast<uint8_t*>(tile);
  for (int i = vectors * 16 + threadIdx.x; i < bytes; i += ROWS) bytes_sh[i] = __ldg(base + i);
  __syncthreads();
  if ((int)threadIdx.x >= rows) return;
  const int64_t row = row0 + threadIdx.x;
  const int64_t key = __ldg(o_custkey + row);
  const uint8_t* text = bytes_sh + threadIdx.x * width;
  // The window's low byte is the newest: a word matches when its bytes, newest lowest, equal the
  // window's under its mask. Bytes before the row are zero, which no word holds.
  uint64_t window = 0;
  int end1 = 1 << 30;  // where the first word1 ends
  bool excluded = false;
#pragma unroll 8
  for (int k = 0; k < width; ++k) {
    window = (window << 8) | text[k];
    // word2 starting after word1's end: k - len2 + 1 > end1.
    excluded |= ((window & m2) == p2) & (k - len2 >= end1);
    if (((window & m1) == p1) & (end1 == (1 << 30))) end1 = k;
  }
  if (!excluded && key >= 0 && key < customer_keys) atomicAdd(counts + key, 1);
}

__global__ void __launch_bounds__(HIST_THREADS) q13_histogram(
    const int64_t* __restrict__ c_custkey, const int32_t* __restrict__ counts, int32_t* __restrict__ hist,
    int64_t customers, int64_t customer_keys) {
  __shared__ int32_t local[BINS + 1];
  for (int b = threadIdx.x; b <= BINS; b += HIST_THREADS) local[b] = 0;
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * HIST_THREADS + threadIdx.x; i < customers;
       i += (int64_t)gridDim.x * HIST_THREADS) {
    const int64_t key = __ldg(c_custkey + i);
    const int32_t count = (key >= 0 && key < customer_keys) ? __ldg(counts + key) : 0;
    atomicAdd(local + min(count, BINS), 1);
  }
  __syncthreads();
  for (int b = threadIdx.x; b <= BINS; b += HIST_THREADS)
    if (local[b]) atomicAdd(hist + b, local[b]);
}

__global__ void __launch_bounds__(BINS) q13_result(
    const int32_t* __restrict__ hist, int64_t* __restrict__ c_count, int64_t* __restrict__ custdist,
    int32_t* __restrict__ groups) {
  __shared__ int64_t packed[BINS];
  __shared__ int present;
  const int b = threadIdx.x;
  const int64_t dist = hist[b];
  // custdist DESC, c_count DESC: one descending order of custdist * 2^32 + c_count.
  const int64_t mine = dist > 0 ? (dist << 32) + b : -1;
  packed[b] = mine;
  if (b == 0) present = 0;
  __syncthreads();
  if (dist > 0) {
    int rank = 0;
    for (int j = 0; j < BINS; ++j) rank += packed[j] > mine;
    c_count[rank] = b;
    custdist[rank] = dist;
    atomicAdd(&present, 1);
  }
  __syncthreads();
  if (b == 0) {
    groups[0] = present;
    groups[1] = hist[BINS];
  }
}

void q13_launch(int64_t comment, int64_t o_custkey, int64_t c_custkey, int64_t counts, int64_t hist,
                int64_t c_count, int64_t custdist, int64_t groups, int64_t orders, int64_t width,
                int64_t customers, int64_t customer_keys, uint64_t p1, uint64_t m1, int64_t len1,
                uint64_t p2, uint64_t m2, int64_t len2, int64_t hist_blocks, int64_t stream) {
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  if (orders > 0) {
    const unsigned blocks = (unsigned)((orders + ROWS - 1) / ROWS);
    q13_scan<<<blocks, ROWS, ROWS * width, s>>>(
        reinterpret_cast<const uint8_t*>(comment), reinterpret_cast<const int64_t*>(o_custkey),
        reinterpret_cast<int32_t*>(counts), orders, (int)width, customer_keys, p1, m1, (int)len1, p2, m2,
        (int)len2);
  }
  if (customers > 0)
    q13_histogram<<<(unsigned)hist_blocks, HIST_THREADS, 0, s>>>(
        reinterpret_cast<const int64_t*>(c_custkey), reinterpret_cast<const int32_t*>(counts),
        reinterpret_cast<int32_t*>(hist), customers, customer_keys);
  q13_result<<<1, BINS, 0, s>>>(reinterpret_cast<const int32_t*>(hist), reinterpret_cast<int64_t*>(c_count),
                                reinterpret_cast<int64_t*>(custdist), reinterpret_cast<int32_t*>(groups));
}
"""


def _build():
    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name="dkb_reference_cuda_q13",
        cpp_sources=CPP,
        cuda_sources=CUDA,
        extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"],
        no_implicit_headers=True,
    )


_EXT = _build()


def _pattern(word: str) -> tuple[int, int, int]:
    """(bytes as the scan's window holds them, newest lowest; their mask; length)."""
    data = word.encode()
    if not 1 <= len(data) <= MAX_WORD:
        raise ValueError("Q13's words have 1 to 8 bytes")
    return int.from_bytes(data, "big"), (1 << (8 * len(data))) - 1, len(data)


def _slow_path(c_custkey, counts, customer_keys):
    """Counts of BINS or more (impossible in TPC-H data): the same answer with PyTorch ops."""
    count = counts[c_custkey.clamp(0, customer_keys - 1)].long()
    hist = torch.bincount(count)
    present = hist.nonzero().squeeze(1)
    dist = hist[present]
    order = torch.argsort(dist * (1 << 32) + present, descending=True)
    return {"c_count": present[order], "custdist": dist[order]}


def run_query(tables, word1: str = "special", word2: str = "requests"):
    customer, orders = tables["customer"], tables["orders"]
    comment, o_custkey, c_custkey = orders["o_comment"], orders["o_custkey"], customer["c_custkey"]
    device = comment.device
    p1, m1, len1 = _pattern(word1)
    p2, m2, len2 = _pattern(word2)
    if not comment.is_contiguous() or comment.data_ptr() % 16:
        comment = comment.contiguous().clone()  # 16-byte aligned tiles (a fresh allocation always is)
    assert o_custkey.is_contiguous() and c_custkey.is_contiguous()
    assert o_custkey.dtype == torch.int64 and c_custkey.dtype == torch.int64
    n, width = comment.shape
    customer_keys = customer.rows + 1  # customer keys are dense 1..N
    counts = torch.zeros(customer_keys, dtype=torch.int32, device=device)
    hist = torch.zeros(BINS + 1, dtype=torch.int32, device=device)
    c_count = torch.empty(BINS, dtype=torch.int64, device=device)
    custdist = torch.empty(BINS, dtype=torch.int64, device=device)
    groups = torch.empty(2, dtype=torch.int32, device=device)
    customers = c_custkey.numel()
    _EXT.q13(
        comment.data_ptr(),
        o_custkey.data_ptr(),
        c_custkey.data_ptr(),
        counts.data_ptr(),
        hist.data_ptr(),
        c_count.data_ptr(),
        custdist.data_ptr(),
        groups.data_ptr(),
        n,
        width,
        customers,
        customer_keys,
        p1,
        m1,
        len1,
        p2,
        m2,
        len2,
        max(1, min(HIST_BLOCKS, (customers + 255) // 256)),
        torch.cuda.current_stream(device).cuda_stream,
    )
    rows, overflow = groups.tolist()  # the one sync: the result's size
    if overflow:
        return _slow_path(c_custkey, counts, customer_keys)
    return {"c_count": c_count[:rows], "custdist": custdist[:rows]}

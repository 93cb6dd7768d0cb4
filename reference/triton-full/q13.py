"""TPC-H Q13 in Triton (scope: full): LIKE '%w1%w2%' on 32-bit words of o_comment, fused with the count.

SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%:word1%:word2%' GROUP BY c_custkey)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC

The comment matrix (uint8 [orders, 79]) is ~1.2 GB at SF10, the whole floor. Byte loads shifted once per
pattern character would read it ~15 times through L1, so the scan reads it as aligned 32-bit words:
each row's 21 words, plus the same tile one and two words on, and builds from the three the 8 bytes
that start at each of the 4 byte offsets in a word (funnel shifts). A word of at most 8 bytes is then
two 32-bit compares per position. Per row, the first start of word1 and the last start of word2 are a
min and a max over the tile's columns; LIKE '%w1%w2%' holds when first1 + len(w1) <= last2.

The same kernel adds each counted order to its customer's count (o_custkey indexes the dense 1..N
customer keys directly). A second kernel histograms the customers' counts: one-hot tiles in registers
for counts below HOT (all of them in TPC-H data), atomics for the rest. A last one-program kernel sums
the partial histograms and sorts the non-empty bins by (custdist, c_count) descending with tl.sort.
One sync at the end reads the number of groups (and whether a count overflowed the bins).
"""

import torch
import triton
import triton.language as tl

ROWS = 64  # orders per tile of the scan
PROGRAMS = 1056  # 8 per H200 multiprocessor; each program strides over TILES tiles
CPU_ROWS, CPU_PROGRAMS = 4096, 4  # Triton's CPU interpreter pays per program: few, large tiles
BLOCK = 128  # customers per tile of the histogram: a [BLOCK, HOT] one-hot stays in registers
HPROGRAMS = 528  # histogram programs: 4 per H200 multiprocessor
HOT = 64  # counts binned in registers; larger ones go through atomics
BINS = 256  # counts the result kernel handles; a larger count takes the slow path below
MAX_WORD = 8  # pattern bytes two 32-bit compares cover


@triton.jit
def _words(words, w, nfull, tail):
    """The little-endian 32-bit words at word index w; the partial last word comes from `tail`."""
    v = tl.load(words + w, mask=w < nfull, other=0)
    v = tl.where(w == nfull, tail, v)
    return v.to(tl.uint32, bitcast=True)


@triton.jit
def _word_hit(lo, hi, plo, phi, mlo, mhi, L: tl.constexpr):
    """The word (first 4 bytes plo, the rest phi) starts here; masks are constant for each length."""
    if L >= 8:
        return (lo == plo) & (hi == phi)
    elif L > 4:
        return (lo == plo) & ((hi & ((1 << (8 * (L - 4))) - 1)) == phi)
    else:
        return (lo & mlo) == plo


@triton.jit
def _scan_chunk(
    words,
    nfull,
    tail,
    w0,
    off,
    inside,
    p1lo,
    p1hi,
    m1lo,
    m1hi,
    p2lo,
    p2hi,
    m2lo,
    m2hi,
    L1: tl.constexpr,
    L2: tl.constexpr,
    WIDTH: tl.constexpr,
    J0: tl.constexpr,
    JW: tl.constexpr,
):
    """First start of word1 and last start of word2 per row, over byte positions 4*[J0, J0+JW) + 0..3."""
    j = J0 + tl.arange(0, JW)
    w = w0[:, None] + j[None, :]
    # Whole rows are read: the floor counts every byte of the column.
    a = _words(words, w, nfull, tail)
    b = _words(words, w + 1, nfull, tail)
    c = _words(words, w + 2, nfull, tail)
    first = tl.full([w0.shape[0], JW], 127, tl.int32)
    last = tl.full([w0.shape[0], JW], -1, tl.int32)
    for s in tl.static_range(4):
        if s == 0:
            lo = a
            hi = b
        else:
            lo = (a >> (8 * s)) | (b << (32 - 8 * s))
            hi = (b >> (8 * s)) | (c << (32 - 8 * s))
        col = (4 * j[None, :] + s) - off[:, None]
        # One unsigned compare checks 0 <= col <= WIDTH - L.
        ucol = col.to(tl.uint32, bitcast=True)
        # No `inside` test here: rows past the table are masked where they are counted.
        hit1 = _word_hit(lo, hi, p1lo, p1hi, m1lo, m1hi, L1) & (ucol <= WIDTH - L1)
        hit2 = _word_hit(lo, hi, p2lo, p2hi, m2lo, m2hi, L2) & (ucol <= WIDTH - L2)
        first = tl.minimum(first, tl.where(hit1, col, 127))
        last = tl.maximum(last, tl.where(hit2, col, -1))
    return tl.min(first, axis=1), tl.max(last, axis=1)


@triton.jit
def _q13_orders(
    comment,
    o_custkey,
    counts,
    n,
    customer_keys,
    nbytes,
    p1lo,
    p1hi,
    m1lo,
    m1hi,
    p2lo,
    p2hi,
    m2lo,
    m2hi,
    L1: tl.constexpr,
    L2: tl.constexpr,
    WIDTH: tl.constexpr,
    TILES: tl.constexpr,
    ROWS: tl.constexpr,
):
    pid = tl.program_id(0)
    words = comment.to(tl.pointer_type(tl.int32))
    nfull = nbytes // 4
    # The matrix's last 1-3 bytes, when its size is not a multiple of 4, as one zero-padded word.
    t0 = tl.load(comment + nfull * 4, mask=nfull * 4 < nbytes, other=0).to(tl.int32)
    t1 = tl.load(comment + nfull * 4 + 1, mask=nfull * 4 + 1 < nbytes, other=0).to(tl.int32)
    t2 = tl.load(comment + nfull * 4 + 2, mask=nfull * 4 + 2 < nbytes, other=0).to(tl.int32)
    tail = t0 | (t1 << 8) | (t2 << 16)
    p1lo = p1lo.to(tl.uint32, bitcast=True)
    p1hi = p1hi.to(tl.uint32, bitcast=True)
    m1lo = m1lo.to(tl.uint32, bitcast=True)
    m1hi = m1hi.to(tl.uint32, bitcast=True)
    p2lo = p2lo.to(tl.uint32, bitcast=True)
    p2hi = p2hi.to(tl.uint32, bitcast=True)
    m2lo = m2lo.to(tl.uint32, bitcast=True)
    m2hi = m2hi.to(tl.uint32, bitcast=True)
    for tile in range(0, TILES):
        rows = (pid + tile * tl.num_programs(0)).to(tl.int64) * ROWS + tl.arange(0, ROWS)
        inside = rows < n
        start = rows * WIDTH  # int64: 60M... byte offsets pass 2**31 beyond SF27
        w0 = start // 4
        off = (start % 4).to(tl.int32)
        # Row bytes sit at word offsets 0..(WIDTH + 2) // 4: chunks of 16 and 8 words cover 79-byte rows.
        f_a, l_a = _scan_chunk(
            words,
            nfull,
            tail,
            w0,
            off,
            inside,
            p1lo,
            p1hi,
            m1lo,
            m1hi,
            p2lo,
            p2hi,
            m2lo,
            m2hi,
            L1,
            L2,
            WIDTH,
            0,
            16,
        )
        f_b, l_b = _scan_chunk(
            words,
            nfull,
            tail,
            w0,
            off,
            inside,
            p1lo,
            p1hi,
            m1lo,
            m1hi,
            p2lo,
            p2hi,
            m2lo,
            m2hi,
            L1,
            L2,
            WIDTH,
            16,
            8,
        )
        first = tl.minimum(f_a, f_b)
        last = tl.maximum(l_a, l_b)
        excluded = first + L1 <= last
        key = tl.load(o_custkey + rows, mask=inside, other=0)
        counted = inside & (excluded == 0) & (key >= 0) & (key < customer_keys)
        tl.atomic_add(counts + key, 1, mask=counted, sem="relaxed")


@triton.jit
def _q13_histogram(
    c_custkey,
    counts,
    hist,
    n,
    customer_keys,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
    HOT: tl.constexpr,
    BINS: tl.constexpr,
):
    pid = tl.program_id(0)
    bins = tl.arange(0, HOT)
    hot = tl.zeros([BLOCK, HOT], dtype=tl.int32)
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        key = tl.load(c_custkey + offs, mask=inside, other=0)
        count = tl.load(counts + key, mask=inside & (key >= 0) & (key < customer_keys), other=0)
        hot += ((count[:, None] == bins[None, :]) & inside[:, None]).to(tl.int32)
        # Counts past the register bins (none in TPC-H data) go straight to the global histogram;
        # counts past its bins to its flag slot BINS.
        tl.atomic_add(hist + tl.minimum(count, BINS), 1, mask=inside & (count >= HOT), sem="relaxed")
    tl.atomic_add(hist + bins, tl.sum(hot, axis=0), sem="relaxed")


@triton.jit
def _q13_result(hist, c_count, custdist, groups, BINS: tl.constexpr):
    b = tl.arange(0, BINS)
    dist = tl.load(hist + b).to(tl.int64)
    # custdist DESC, c_count DESC: one descending sort of custdist * 2**32 + c_count.
    packed = tl.sort(tl.where(dist > 0, dist * 4294967296 + b, -1), descending=True)
    tl.store(c_count + b, packed & 4294967295)
    tl.store(custdist + b, packed >> 32)
    # Groups, and whether a count overflowed the bins (bin BINS is its flag).
    tl.store(groups, tl.sum((dist > 0).to(tl.int32), axis=0))
    tl.store(groups + 1, tl.load(hist + BINS))


def _pattern(word: str) -> tuple[int, int, int, int]:
    """(first 4 bytes, next 4 bytes, their masks) as little-endian signed 32-bit words."""
    data = word.encode()
    values = []
    for part in (data[:4], data[4:8]):
        value = int.from_bytes(part, "little")
        mask = (1 << (8 * len(part))) - 1
        values += [value, mask]
    signed = [v - (1 << 32) if v >= 1 << 31 else v for v in values]
    return signed[0], signed[2], signed[1], signed[3]


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
    if not (1 <= len(word1.encode()) <= MAX_WORD and 1 <= len(word2.encode()) <= MAX_WORD):
        raise ValueError("Q13's words have 1 to 8 bytes")
    if not comment.is_contiguous() or comment.data_ptr() % 4:
        comment = comment.contiguous().clone()  # aligned rows for the 32-bit loads (never the case here)
    n, width = comment.shape
    # Customer keys are dense 1..N.
    customer_keys = customer.rows + 1
    counts = torch.zeros(customer_keys, dtype=torch.int32, device=device)
    hist = torch.zeros(BINS + 1, dtype=torch.int32, device=device)
    p1lo, p1hi, m1lo, m1hi = _pattern(word1)
    p2lo, p2hi, m2lo, m2hi = _pattern(word2)
    rows_per_tile, most = (ROWS, PROGRAMS) if device.type == "cuda" else (CPU_ROWS, CPU_PROGRAMS)
    programs = max(1, min(most, triton.cdiv(n, rows_per_tile)))
    _q13_orders[(programs,)](
        comment,
        o_custkey,
        counts,
        n,
        customer_keys,
        n * width,
        p1lo,
        p1hi,
        m1lo,
        m1hi,
        p2lo,
        p2hi,
        m2lo,
        m2hi,
        L1=len(word1.encode()),
        L2=len(word2.encode()),
        WIDTH=width,
        TILES=triton.cdiv(triton.cdiv(n, rows_per_tile), programs),
        ROWS=rows_per_tile,
    )
    customers = c_custkey.numel()
    hblock, most = (BLOCK, HPROGRAMS) if device.type == "cuda" else (1024, 2)
    hprograms = max(1, min(most, triton.cdiv(customers, hblock)))
    _q13_histogram[(hprograms,)](
        c_custkey,
        counts,
        hist,
        customers,
        customer_keys,
        TILES=triton.cdiv(triton.cdiv(customers, hblock), hprograms),
        BLOCK=hblock,
        HOT=HOT,
        BINS=BINS,
    )
    c_count = torch.empty(BINS, dtype=torch.int64, device=device)
    custdist = torch.empty(BINS, dtype=torch.int64, device=device)
    groups = torch.empty(2, dtype=torch.int32, device=device)
    _q13_result[(1,)](hist, c_count, custdist, groups, BINS=BINS)
    rows, overflow = groups.tolist()  # the one sync: the result's size
    if overflow:
        return _slow_path(c_custkey, counts, customer_keys)
    return {"c_count": c_count[:rows], "custdist": custdist[:rows]}

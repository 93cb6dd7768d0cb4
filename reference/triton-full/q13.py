"""TPC-H Q13 in Triton (scope: full): LIKE '%w1%w2%' (aligned-word prefilter, exact check of ~2%) + count.

SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%:word1%:word2%' GROUP BY c_custkey)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC

The comment matrix (uint8 [orders, 79]) is ~1.2 GB at SF10, the whole floor. Scanning every byte offset
of every row (funnel shifts of 32-bit words, two compares per position: ~3700 SASS instructions a row)
made the scan integer-bound, so almost every row is now decided with a few operations per 32-bit word:

1. Prefilter (words of 7 or 8 bytes, all the spec's): an occurrence of a word of L >= 7 bytes holds a
   whole aligned 32-bit word of the matrix, equal to one of the word's 4 substrings w[k:k+4], k = 0..3,
   and that aligned word is one of the row's first (WIDTH - 1) // 4 + 1 = 20 words (from word 79r // 4).
   Each row's 20 words are read as 5 [ROWS, 4] tiles (one load per word, no shifts, no second load) and
   matched against the 8 substrings of the two words as a min of XORs (0 only on a match): 8 XORs and
   4 three-input mins per word, ~3 integer ops a byte (~460 SASS instructions a row, all in). A row
   without a candidate of both words is not excluded (LIKE needs both) and is counted at once; the
   other ~2% (both words, in either order) are "maybe" rows. Candidates straddling into a neighbouring
   row only add maybe rows, never drop one; so do the matrix's last rows (short of whole words).
2. Exact check of the maybe rows: each program appends its maybe rows to its own slice of a row list
   (cumsum slots, no atomics) and, after a barrier, checks them EXACT_ROWS at a time: each row's words,
   plus the same tile one and two words on, give the 8 bytes starting at every byte offset (funnel
   shifts), so a word of at most 8 bytes is two 32-bit compares per position; the first start of word1
   and the last start of word2 are a min and a max over the tile's columns, and LIKE '%w1%w2%' holds
   when first1 + len(w1) <= last2. Words shorter than 7 bytes skip the prefilter: every row is checked
   here (correct, as slow as before).

Counted orders add 1 to their customer's count (o_custkey indexes the dense 1..N customer keys directly).
A second kernel histograms the customers' counts: one-hot tiles in registers for counts below HOT (all
of them in TPC-H data), atomics for the rest. A last one-program kernel sums the partial histograms and
sorts the non-empty bins by (custdist, c_count) descending with tl.sort.
Three launches (+ two memsets); one sync at the end reads the number of groups (and whether a count
overflowed the bins).
"""

import torch
import triton
import triton.language as tl

ROWS = 128  # orders per tile of the prefilter
EXACT_ROWS = 32  # maybe rows per tile of the exact check
PROGRAMS = 1056  # 8 per H200 multiprocessor; each program strides over TILES tiles
CPU_ROWS, CPU_EXACT_ROWS, CPU_PROGRAMS = 4096, 4096, 4  # the CPU interpreter pays per program and tile
BLOCK = 128  # customers per tile of the histogram: a [BLOCK, HOT] one-hot stays in registers
HPROGRAMS = 528  # histogram programs: 4 per H200 multiprocessor
HOT = 64  # counts binned in registers; larger ones go through atomics
BINS = 256  # counts the result kernel handles; a larger count takes the slow path below
MAX_WORD = 8  # pattern bytes two 32-bit compares cover
MIN_PREFILTER = 7  # a word this long covers a whole aligned 32-bit word wherever it starts


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
        hit1 = _word_hit(lo, hi, p1lo, p1hi, m1lo, m1hi, L1) & (ucol <= WIDTH - L1)
        hit2 = _word_hit(lo, hi, p2lo, p2hi, m2lo, m2hi, L2) & (ucol <= WIDTH - L2)
        first = tl.minimum(first, tl.where(hit1, col, 127))
        last = tl.maximum(last, tl.where(hit2, col, -1))
    return tl.min(first, axis=1), tl.max(last, axis=1)


@triton.jit
def _excluded(
    words,
    nfull,
    tail,
    rows,
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
):
    """Exact LIKE '%w1%w2%' per row (int64 row indices)."""
    start = rows * WIDTH  # int64: 60M... byte offsets pass 2**31 beyond SF27
    w0 = start // 4
    off = (start % 4).to(tl.int32)
    # Row bytes sit at word offsets 0..(WIDTH + 2) // 4: chunks of 16 and 8 words cover 79-byte rows.
    f_a, l_a = _scan_chunk(
        words, nfull, tail, w0, off, p1lo, p1hi, m1lo, m1hi, p2lo, p2hi, m2lo, m2hi, L1, L2, WIDTH, 0, 16
    )
    f_b, l_b = _scan_chunk(
        words, nfull, tail, w0, off, p1lo, p1hi, m1lo, m1hi, p2lo, p2hi, m2lo, m2hi, L1, L2, WIDTH, 16, 8
    )
    return tl.minimum(f_a, f_b) + L1 <= tl.maximum(l_a, l_b)


@triton.jit
def _nearest(v, qa, qb, qc, qd):
    """0 where the word v is one of the four substrings: a min of XORs (no compare-and-select chains)."""
    return tl.minimum(tl.minimum(v ^ qa, v ^ qb), tl.minimum(v ^ qc, v ^ qd))


@triton.jit
def _count(o_custkey, counts, rows, counted, customer_keys):
    """Adds each counted order to its customer's count."""
    key = tl.load(o_custkey + rows, mask=counted, other=0)
    counted = counted & (key >= 0) & (key < customer_keys)
    tl.atomic_add(counts + key, 1, mask=counted, sem="relaxed")


@triton.jit
def _q13_orders(
    comment,
    o_custkey,
    counts,
    maybe_rows,
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
    q1a,
    q1b,
    q1c,
    q1d,
    q2a,
    q2b,
    q2c,
    q2d,
    L1: tl.constexpr,
    L2: tl.constexpr,
    WIDTH: tl.constexpr,
    CHUNKS: tl.constexpr,
    PREFILTER: tl.constexpr,
    TILES: tl.constexpr,
    ROWS: tl.constexpr,
    EXACT_ROWS: tl.constexpr,
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
    q1a = q1a.to(tl.uint32, bitcast=True)
    q1b = q1b.to(tl.uint32, bitcast=True)
    q1c = q1c.to(tl.uint32, bitcast=True)
    q1d = q1d.to(tl.uint32, bitcast=True)
    q2a = q2a.to(tl.uint32, bitcast=True)
    q2b = q2b.to(tl.uint32, bitcast=True)
    q2c = q2c.to(tl.uint32, bitcast=True)
    q2d = q2d.to(tl.uint32, bitcast=True)
    # This program's slice of the maybe-row list: at most all of its rows.
    mine = maybe_rows + pid.to(tl.int64) * (TILES * ROWS)
    nmaybe = tl.full([], 0, tl.int32)
    quad = tl.arange(0, 4)
    for tile in range(0, TILES):
        rows0 = (pid + tile * tl.num_programs(0)).to(tl.int64) * ROWS
        rows = rows0 + tl.arange(0, ROWS)
        inside = rows < n
        if PREFILTER:
            # Row words as int32 offsets from the tile's first word.
            wt = rows0 * WIDTH // 4
            local = ((rows0 * WIDTH % 4).to(tl.int32) + tl.arange(0, ROWS) * WIDTH) // 4
            # Only the matrix's last rows lack whole words up to 4 * CHUNKS: they are maybe rows.
            whole = local + 4 * CHUNKS <= tl.minimum(nfull - wt, 2**30).to(tl.int32)
            ptr = (words + wt) + (local[:, None] + quad[None, :])
            for k in tl.static_range(CHUNKS):
                v = tl.load(ptr + 4 * k, mask=whole[:, None], other=0).to(tl.uint32, bitcast=True)
                if k == 0:
                    near1 = _nearest(v, q1a, q1b, q1c, q1d)
                    near2 = _nearest(v, q2a, q2b, q2c, q2d)
                else:
                    near1 = tl.minimum(near1, _nearest(v, q1a, q1b, q1c, q1d))
                    near2 = tl.minimum(near2, _nearest(v, q2a, q2b, q2c, q2d))
            # Per row, columns with a word1 candidate (low 4 bits) and with a word2 candidate (above).
            flags = tl.sum(tl.where(near1 == 0, 1, 0) + tl.where(near2 == 0, 16, 0), axis=1)
            maybe = inside & ((((flags & 15) != 0) & (flags >= 16)) | (whole == 0))
        else:
            maybe = inside
        _count(o_custkey, counts, rows, inside & (maybe == 0), customer_keys)
        m = maybe.to(tl.int32)
        tl.store(mine + (nmaybe + tl.cumsum(m, 0) - m), rows.to(tl.int32), mask=maybe)
        nmaybe += tl.sum(m, 0)
    # The list was written by all of the program's threads.
    tl.debug_barrier()
    done = tl.full([], 0, tl.int32)
    while done < nmaybe:
        idx = done + tl.arange(0, EXACT_ROWS)
        valid = idx < nmaybe
        rows = tl.load(mine + idx, mask=valid, other=0, cache_modifier=".cg").to(tl.int64)
        excluded = _excluded(
            words, nfull, tail, rows, p1lo, p1hi, m1lo, m1hi, p2lo, p2hi, m2lo, m2hi, L1, L2, WIDTH
        )
        _count(o_custkey, counts, rows, valid & (excluded == 0), customer_keys)
        done += EXACT_ROWS


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


def _quads(word: str) -> list[int]:
    """The word's 4-byte substrings at offsets 0..3 as little-endian signed 32-bit words (0 if shorter)."""
    data = word.encode()
    values = [int.from_bytes(data[k : k + 4], "little") if k + 4 <= len(data) else 0 for k in range(4)]
    return [v - (1 << 32) if v >= 1 << 31 else v for v in values]


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
    len1, len2 = len(word1.encode()), len(word2.encode())
    if not (1 <= len1 <= MAX_WORD and 1 <= len2 <= MAX_WORD):
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
    rows_per_tile, exact_rows, most = (
        (ROWS, EXACT_ROWS, PROGRAMS) if device.type == "cuda" else (CPU_ROWS, CPU_EXACT_ROWS, CPU_PROGRAMS)
    )
    programs = max(1, min(most, triton.cdiv(n, rows_per_tile)))
    tiles = triton.cdiv(triton.cdiv(n, rows_per_tile), programs)
    # Each program's list of rows the prefilter leaves open (row indices fit int32 below SF1400).
    maybe_rows = torch.empty(programs * tiles * rows_per_tile, dtype=torch.int32, device=device)
    # An aligned word fully inside a row starts at one of the row's first (width - 1) // 4 + 1 words.
    chunks = triton.cdiv((width - 1) // 4 + 1, 4)
    _q13_orders[(programs,)](
        comment,
        o_custkey,
        counts,
        maybe_rows,
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
        *_quads(word1),
        *_quads(word2),
        L1=len1,
        L2=len2,
        WIDTH=width,
        CHUNKS=chunks,
        PREFILTER=min(len1, len2) >= MIN_PREFILTER,
        TILES=tiles,
        ROWS=rows_per_tile,
        EXACT_ROWS=exact_rows,
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

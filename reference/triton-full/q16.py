"""TPC-H Q16 in Triton (scope: full): COUNT(DISTINCT) by a hash set of (group, supplier) pairs.

SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey AND p_brand <> ':brand' AND p_type NOT LIKE ':type%'
  AND p_size IN (:size1, ..., :size8)
  AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size

A group is a dense code (brand, type, slot of the size among the sorted listed sizes), so code order is
(brand, type, size) order: 25 x 150 x 8 = 30000 codes. Six kernels, one sync at the end:
1. flags: per part key its group code (-1 when the part fails), per supplier key whether its comment
   matches (LIKE on aligned 32-bit words of s_comment, three compares per position for words of up to
   12 bytes), and the hash table's and counters' initial values;
2. partsupp pass: the surviving (group, suppkey) pairs (~1.2M of 8M rows at SF10), each program
   compacting its own run of rows into its own region (a shared counter serialised the tile atomics);
3. inserts into an open-addressing table (linear probing, atomic CAS; a plain load first, so a lane
   only CASes a slot it saw empty), one program per tile of a region so the probe rounds of different
   tiles overlap: each pair that lands new adds 1 to its group's count;
4.-6. ORDER BY without a sort: a group's row is (groups with a larger count) + (groups with its count
   and a smaller code). Per tile of 128 codes: the rank among equal counts by pairwise compares, and a
   count histogram; one program scans the tile histograms; then each code writes its row.
More pairs than the table holds, probe chains past PROBES, or counts past BINS (none up to SF10) take a
PyTorch path.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024
PROGRAMS = 264  # 2 per H200 multiprocessor
SLOTS = 8  # sizes in the IN list
PROBES = 64  # linear-probing rounds before a pair is reported as not placed
TG = 128  # group codes per tile of the ordering kernels
BINS = 128  # supplier counts the ordering handles (a group has ~40 rows at SF10)
EMPTY = tl.constexpr(-1)  # a free slot of the hash table


@triton.jit
def _comment_hits(
    s_comment,
    rows,
    inside,
    nbytes,
    p_lo,
    p_mid,
    p_hi,
    m_lo,
    m_mid,
    m_hi,
    L: tl.constexpr,
    WIDTH: tl.constexpr,
    JW: tl.constexpr,
    FIRST: tl.constexpr,
):
    """Per row, the first (FIRST) or last start of a word of up to 12 bytes; 127 / -1 when absent."""
    words = s_comment.to(tl.pointer_type(tl.int32))
    nfull = nbytes // 4
    start = rows.to(tl.int64) * WIDTH
    w0 = start // 4
    off = (start % 4).to(tl.int32)
    j = tl.arange(0, JW)
    w = w0[:, None] + j[None, :]
    ok = inside[:, None]
    # The matrix's last 1-3 bytes, when its size is not a multiple of 4, as one zero-padded word.
    t0 = tl.load(s_comment + nfull * 4, mask=nfull * 4 < nbytes, other=0).to(tl.int32)
    t1 = tl.load(s_comment + nfull * 4 + 1, mask=nfull * 4 + 1 < nbytes, other=0).to(tl.int32)
    t2 = tl.load(s_comment + nfull * 4 + 2, mask=nfull * 4 + 2 < nbytes, other=0).to(tl.int32)
    tail = t0 | (t1 << 8) | (t2 << 16)
    # Whole rows are read (mask `inside`): the floor counts every byte of the column.
    a = tl.where(w == nfull, tail, tl.load(words + w, mask=ok & (w < nfull), other=0)).to(
        tl.uint32, bitcast=True
    )
    b = tl.where(w + 1 == nfull, tail, tl.load(words + w + 1, mask=ok & (w + 1 < nfull), other=0)).to(
        tl.uint32, bitcast=True
    )
    c = tl.where(w + 2 == nfull, tail, tl.load(words + w + 2, mask=ok & (w + 2 < nfull), other=0)).to(
        tl.uint32, bitcast=True
    )
    d = tl.where(w + 3 == nfull, tail, tl.load(words + w + 3, mask=ok & (w + 3 < nfull), other=0)).to(
        tl.uint32, bitcast=True
    )
    best = tl.full([JW], 127 if FIRST else -1, tl.int32)[None, :] + tl.zeros_like(w).to(tl.int32)
    for s in tl.static_range(4):
        if s == 0:
            lo = a
            mid = b
            hi = c
        else:
            lo = (a >> (8 * s)) | (b << (32 - 8 * s))
            mid = (b >> (8 * s)) | (c << (32 - 8 * s))
            hi = (c >> (8 * s)) | (d << (32 - 8 * s))
        col = (4 * j[None, :] + s) - off[:, None]
        hit = ((lo & m_lo) == p_lo) & ((mid & m_mid) == p_mid) & ((hi & m_hi) == p_hi)
        hit = hit & (col >= 0) & (col <= WIDTH - L) & ok
        if FIRST:
            best = tl.minimum(best, tl.where(hit, col, 127))
        else:
            best = tl.maximum(best, tl.where(hit, col, -1))
    if FIRST:
        return tl.min(best, axis=1)
    else:
        return tl.max(best, axis=1)


@triton.jit
def _q16_flags(
    p_partkey,
    p_brand,
    p_type,
    p_size,
    s_suppkey,
    s_comment,
    type_ok,
    sizes,
    part_group,
    complains,
    table,
    counts,
    status,
    parts,
    suppliers,
    supplier_keys,
    brand,
    types,
    table_slots,
    groups,
    c_lo,
    c_mid,
    c_hi,
    cm_lo,
    cm_mid,
    cm_hi,
    k_lo,
    k_mid,
    k_hi,
    km_lo,
    km_mid,
    km_hi,
    PART_TILES: tl.constexpr,
    SUPP_TILES: tl.constexpr,
    TABLE_TILES: tl.constexpr,
    GROUP_TILES: tl.constexpr,
    BLOCK: tl.constexpr,
    SROWS: tl.constexpr,
    SLOTS: tl.constexpr,
    L1: tl.constexpr,
    L2: tl.constexpr,
    WIDTH: tl.constexpr,
    JW: tl.constexpr,
):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    listed = tl.load(sizes + tl.arange(0, SLOTS))
    for tile in range(0, PART_TILES):
        offs = (pid + tile * step) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < parts
        key = tl.load(p_partkey + offs, mask=inside, other=0)
        pb = tl.load(p_brand + offs, mask=inside, other=0)
        pt = tl.load(p_type + offs, mask=inside, other=0)
        ps = tl.load(p_size + offs, mask=inside, other=0)
        match = ps[:, None] == listed[None, :]
        slot = tl.max(tl.where(match, tl.arange(0, SLOTS)[None, :], -1), axis=1)
        ok = (pb != brand) & (tl.load(type_ok + pt, mask=inside, other=0) != 0) & (slot >= 0)
        group = (pb.to(tl.int64) * types + pt) * SLOTS + slot
        tl.store(part_group + key, tl.where(ok, group, -1), mask=inside)
    for tile in range(0, SUPP_TILES):
        rows = (pid + tile * step) * SROWS + tl.arange(0, SROWS)
        inside = rows < suppliers
        key = tl.load(s_suppkey + rows, mask=inside, other=0)
        first = _comment_hits(
            s_comment,
            rows,
            inside,
            suppliers * WIDTH,
            c_lo,
            c_mid,
            c_hi,
            cm_lo,
            cm_mid,
            cm_hi,
            L1,
            WIDTH,
            JW,
            True,
        )
        last = _comment_hits(
            s_comment,
            rows,
            inside,
            suppliers * WIDTH,
            k_lo,
            k_mid,
            k_hi,
            km_lo,
            km_mid,
            km_hi,
            L2,
            WIDTH,
            JW,
            False,
        )
        bad = (first + L1 <= last).to(tl.int8)
        tl.store(complains + key, bad, mask=inside & (key >= 0) & (key < supplier_keys))
    for tile in range(0, TABLE_TILES):
        offs = (pid + tile * step) * BLOCK + tl.arange(0, BLOCK)
        tl.store(table + offs, tl.full([BLOCK], -1, tl.int64), mask=offs < table_slots)
    for tile in range(0, GROUP_TILES):
        offs = (pid + tile * step) * BLOCK + tl.arange(0, BLOCK)
        tl.store(counts + offs, tl.zeros([BLOCK], tl.int32), mask=offs < groups)
    if pid == 0:
        tl.store(status + tl.arange(0, 4), tl.zeros([4], tl.int32))


@triton.jit
def _q16_pairs(
    ps_partkey,
    ps_suppkey,
    part_group,
    complains,
    pairs,
    region_count,
    status,
    n,
    supplier_keys,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # Each program compacts its own run of rows into its own region of `pairs` (no shared counter:
    # one atomic per tile on a single address serialises thousands of tiles).
    pid = tl.program_id(0)
    region = pid.to(tl.int64) * (TILES * BLOCK)
    found = tl.zeros([], dtype=tl.int32)
    for tile in range(0, TILES):
        offs = region + tile * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the floor counts every byte.
        pk = tl.load(ps_partkey + offs, mask=inside, other=0)
        sk = tl.load(ps_suppkey + offs, mask=inside, other=0)
        group = tl.load(part_group + pk, mask=inside, other=-1)
        valid = inside & (group >= 0) & (sk >= 0) & (sk < supplier_keys)
        ok = valid & (tl.load(complains + sk, mask=valid, other=1) == 0)
        rank = tl.cumsum(ok.to(tl.int32), axis=0)
        tl.store(pairs + region + found + rank - 1, group * supplier_keys + sk, mask=ok)
        found += tl.max(rank, axis=0)
    tl.store(region_count + pid, found)
    tl.atomic_add(status, found, sem="relaxed")


@triton.jit
def _q16_insert(
    pairs,
    region_count,
    status,
    table,
    counts,
    supplier_keys,
    capacity,
    REGION: tl.constexpr,
    BLOCK: tl.constexpr,
    LOG2: tl.constexpr,
    PROBES: tl.constexpr,
):
    # Program (region, tile): one tile of a region's pairs; most programs find nothing and return.
    region = tl.program_id(0)
    start = tl.program_id(1) * BLOCK
    count = tl.load(region_count + region)
    if (start < count) & (tl.load(status) <= capacity):
        lane = tl.arange(0, BLOCK)
        active = start + lane < count
        pair = tl.load(pairs + region.to(tl.int64) * REGION + start + lane, mask=active, other=0)
        h = ((pair * -7046029254386353131) >> (64 - LOG2)) & ((1 << LOG2) - 1)
        h = tl.where(active, h, lane)
        for _ in range(0, PROBES):
            if tl.max(active.to(tl.int32), axis=0) > 0:
                seen = tl.load(table + h, mask=active, other=EMPTY)
                want = active & (seen == EMPTY)
                # Lanes not inserting compare with -2, never in the table: atomic_cas has no mask.
                # int64 compare values: the CAS is as wide as they are.
                expect = tl.where(want, tl.full([BLOCK], EMPTY, tl.int64), tl.full([BLOCK], -2, tl.int64))
                prev = tl.atomic_cas(table + h, expect, pair, sem="relaxed")
                placed = want & (prev == EMPTY)
                tl.atomic_add(counts + pair // supplier_keys, 1, mask=placed, sem="relaxed")
                same = active & ((seen == pair) | (want & (prev == pair)))
                active = active & (placed == 0) & (same == 0)
                h = tl.where(active, (h + 1) & ((1 << LOG2) - 1), h)
        # A pair still unplaced after PROBES rounds: the slow path answers.
        tl.atomic_max(status + 1, tl.max(active.to(tl.int32), axis=0))


@triton.jit
def _q16_tiles(counts, local, tile_hist, status, groups, TG: tl.constexpr, BINS: tl.constexpr):
    t = tl.program_id(0)
    g = t * TG + tl.arange(0, TG)
    inside = g < groups
    cnt = tl.load(counts + g, mask=inside, other=0)
    tl.atomic_max(status + 2, tl.max((cnt >= BINS).to(tl.int32), axis=0))
    cnt = tl.minimum(cnt, BINS - 1)
    # Rank among this tile's codes with the same count: the smaller codes come first.
    i = tl.arange(0, TG)
    same = (cnt[None, :] == cnt[:, None]) & (i[None, :] < i[:, None])
    tl.store(local + g, tl.sum(same.to(tl.int32), axis=1), mask=inside)
    b = tl.arange(0, BINS)
    hist = tl.sum(((cnt[:, None] == b[None, :]) & inside[:, None]).to(tl.int32), axis=0)
    tl.store(tile_hist + t * BINS + b, hist)


@triton.jit
def _q16_scan(tile_hist, base, status, tiles, TB: tl.constexpr, BINS: tl.constexpr):
    t = tl.arange(0, TB)
    b = tl.arange(0, BINS)
    h = tl.load(tile_hist + t[:, None] * BINS + b[None, :], mask=t[:, None] < tiles, other=0)
    total = tl.sum(h, axis=0)
    # Rows before count c: every group with a larger count (supplier_cnt DESC), count 0 excluded.
    larger = tl.sum(total, axis=0) - tl.cumsum(total, axis=0)
    before = larger[None, :] + tl.cumsum(h, axis=0) - h
    tl.store(base + t[:, None] * BINS + b[None, :], before, mask=t[:, None] < tiles)
    tl.store(status + 3, tl.sum(tl.where(b > 0, total, 0), axis=0))


@triton.jit
def _q16_write(
    counts,
    local,
    base,
    out_brand,
    out_type,
    out_size,
    out_count,
    sizes,
    groups,
    types,
    TG: tl.constexpr,
    BINS: tl.constexpr,
    SLOTS: tl.constexpr,
):
    t = tl.program_id(0)
    g = t * TG + tl.arange(0, TG)
    inside = g < groups
    cnt = tl.load(counts + g, mask=inside, other=0)
    keep = inside & (cnt > 0) & (cnt < BINS)
    row = tl.load(base + t * BINS + cnt, mask=keep, other=0) + tl.load(local + g, mask=keep, other=0)
    tl.store(out_brand + row, g // (types * SLOTS), mask=keep)
    tl.store(out_type + row, g // SLOTS % types, mask=keep)
    tl.store(out_size + row, tl.load(sizes + g % SLOTS, mask=keep, other=0), mask=keep)
    tl.store(out_count + row, cnt.to(tl.int64), mask=keep)


def _pattern(word: str) -> list[int]:
    """(bytes 0-3, 4-7, 8-11) of a word and their masks, as little-endian signed 32-bit words."""
    data = word.encode()
    values, masks = [], []
    for part in (data[:4], data[4:8], data[8:12]):
        values.append(int.from_bytes(part, "little"))
        masks.append((1 << (8 * len(part))) - 1)
    return [v - (1 << 32) if v >= 1 << 31 else v for v in values + masks]


def _slow_path(tables, part_group, complains, sizes, types, supplier_keys):
    """More pairs than the table holds, a probe chain past PROBES, or a count past BINS: PyTorch."""
    partsupp = tables["partsupp"]
    group = part_group[partsupp["ps_partkey"]]
    sk = partsupp["ps_suppkey"]
    rows = ((group >= 0) & (complains[sk] == 0)).nonzero().squeeze(1)
    pairs = torch.unique(group[rows] * supplier_keys + sk[rows])
    groups, cnt = torch.unique_consecutive(pairs // supplier_keys, return_counts=True)
    cnt, order = torch.sort(cnt, stable=True, descending=True)
    groups = groups[order]
    return {
        "p_brand": groups // (types * SLOTS),
        "p_type": groups // SLOTS % types,
        "p_size": sizes[groups % SLOTS],
        "supplier_cnt": cnt,
    }


def run_query(
    tables,
    brand: str = "Brand#45",
    type: str = "MEDIUM POLISHED",
    size1: int = 49,
    size2: int = 14,
    size3: int = 23,
    size4: int = 45,
    size5: int = 19,
    size6: int = 3,
    size7: int = 36,
    size8: int = 9,
):
    partsupp, part, supplier = tables["partsupp"], tables["part"], tables["supplier"]
    s_comment = supplier["s_comment"]
    device = part["p_size"].device
    cuda = device.type == "cuda"
    listed = sorted({size1, size2, size3, size4, size5, size6, size7, size8})
    # Fewer than 8 distinct sizes: pad with a size no part has (sizes are 1..50).
    sizes = torch.tensor(listed + [-1] * (SLOTS - len(listed)), dtype=torch.int64, device=device)
    type_names = part.dictionary("p_type")
    type_ok = torch.tensor([not t.startswith(type) for t in type_names], dtype=torch.int8, device=device)
    brands = part.dictionary("p_brand")
    brand_code = brands.index(brand) if brand in brands else -1
    types = len(type_names)
    groups = len(brands) * types * SLOTS
    if not s_comment.is_contiguous() or s_comment.data_ptr() % 4:
        s_comment = s_comment.contiguous().clone()  # aligned rows for the 32-bit loads (never the case here)
    parts, suppliers, n = part["p_partkey"].numel(), s_comment.shape[0], partsupp["ps_partkey"].numel()
    width = s_comment.shape[1]
    # Part and supplier keys are dense 1..N: arrays indexed by key.
    part_keys, supplier_keys = part.rows + 1, supplier.rows + 1
    part_group = torch.empty(part_keys, dtype=torch.int64, device=device)
    part_group[:1] = -1
    complains = torch.zeros(supplier_keys, dtype=torch.int8, device=device)
    log2 = max(10, (max(n // 2, 1) - 1).bit_length())
    capacity = (1 << log2) * 3 // 4  # load factor at most 3/4
    iblock, programs = (256, PROGRAMS) if cuda else (1024, 4)
    table = torch.empty(1 << log2, dtype=torch.int64, device=device)
    counts = torch.empty(groups, dtype=torch.int32, device=device)
    status = torch.empty(4, dtype=torch.int32, device=device)
    srows = 64 if cuda else 1024
    c = _pattern("Customer")
    k = _pattern("Complaints")
    fprograms = max(1, min(programs, triton.cdiv(max(parts, table.numel()), BLOCK)))
    _q16_flags[(fprograms,)](
        part["p_partkey"],
        part["p_brand"],
        part["p_type"],
        part["p_size"],
        supplier["s_suppkey"],
        s_comment,
        type_ok,
        sizes,
        part_group,
        complains,
        table,
        counts,
        status,
        parts,
        suppliers,
        supplier_keys,
        brand_code,
        types,
        table.numel(),
        groups,
        *c,
        *k,
        PART_TILES=triton.cdiv(triton.cdiv(parts, BLOCK), fprograms),
        SUPP_TILES=triton.cdiv(triton.cdiv(suppliers, srows), fprograms),
        TABLE_TILES=triton.cdiv(triton.cdiv(table.numel(), BLOCK), fprograms),
        GROUP_TILES=triton.cdiv(triton.cdiv(groups, BLOCK), fprograms),
        BLOCK=BLOCK,
        SROWS=srows,
        SLOTS=SLOTS,
        L1=len("Customer"),
        L2=len("Complaints"),
        WIDTH=width,
        JW=triton.next_power_of_2((width + 3) // 4 + 1),
    )
    pprograms = max(1, min(programs, triton.cdiv(n, BLOCK)))
    ptiles = triton.cdiv(triton.cdiv(n, BLOCK), pprograms)
    region = ptiles * BLOCK
    pairs = torch.empty(pprograms * region, dtype=torch.int64, device=device)
    region_count = torch.empty(pprograms, dtype=torch.int32, device=device)
    _q16_pairs[(pprograms,)](
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        part_group,
        complains,
        pairs,
        region_count,
        status,
        n,
        supplier_keys,
        TILES=ptiles,
        BLOCK=BLOCK,
    )
    _q16_insert[(pprograms, triton.cdiv(region, iblock))](
        pairs,
        region_count,
        status,
        table,
        counts,
        supplier_keys,
        capacity,
        REGION=region,
        BLOCK=iblock,
        LOG2=log2,
        PROBES=PROBES,
    )
    tiles = triton.cdiv(groups, TG)
    local = torch.empty(groups, dtype=torch.int32, device=device)
    tile_hist = torch.empty(tiles * BINS, dtype=torch.int32, device=device)
    base = torch.empty(tiles * BINS, dtype=torch.int32, device=device)
    _q16_tiles[(tiles,)](counts, local, tile_hist, status, groups, TG=TG, BINS=BINS)
    _q16_scan[(1,)](tile_hist, base, status, tiles, TB=triton.next_power_of_2(tiles), BINS=BINS, num_warps=16)
    out = [torch.empty(groups, dtype=torch.int64, device=device) for _ in range(4)]
    _q16_write[(tiles,)](counts, local, base, *out, sizes, groups, types, TG=TG, BINS=BINS, SLOTS=SLOTS)
    found, unplaced, too_many, rows = status.tolist()  # the one sync: the result's size
    if found > capacity or unplaced or too_many:
        return _slow_path(tables, part_group, complains, sizes, types, supplier_keys)
    p_brand, p_type, p_size, supplier_cnt = (t[:rows] for t in out)
    return {"p_brand": p_brand, "p_type": p_type, "p_size": p_size, "supplier_cnt": supplier_cnt}

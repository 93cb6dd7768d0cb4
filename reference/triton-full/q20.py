"""TPC-H Q20 in Triton (scope: full): key flags, a per-part table of candidate suppliers, one lineitem pass.

SELECT s_name, s_address FROM supplier, nation
WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp
                    WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE ':color%')
                      AND ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem
                                         WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
                                           AND l_shipdate in [:date, :date + 1 year)))
  AND s_nationkey = n_nationkey AND n_name = ':nation'
ORDER BY s_name

As in the TorchPlan, the nation filter is pushed into the IN subquery: candidate partsupp rows are those
of a ':color%' part and a supplier of the nation (~3.5K of 8M at SF10). Part keys are dense 1..P and a
part has 4 partsupp rows (spec 4.2.5), so a candidate's (partkey, suppkey) pair gets one of 4 slots at
its part key: the correlated SUM is then a slot lookup for each lineitem row that can reach one.

1. `_q20_keys`, one launch for both key tables: a flag per part key (the LIKE prefix compared on the
   p_name bytes, the prefix passed as int64 words: no host-to-device copy), a flagged part's 4 slots
   emptied; a flag per supplier key (its nation's name, the 25 nation rows read by each tile).
2. `_q20_partsupp`: each candidate row takes a slot at its part key (an atomic counter per part).
3. `_q20_lines`: one pass over lineitem (whole columns read); a row in the year of a flagged part and
   supplier finds its slot and adds (1 << 32) + quantity (count and sum in one int64 atomic).
4. `_q20_slots`: per flagged part, a slot qualifies when it has lines and 2 * availqty > sum (exact:
   quantities are whole numbers); its supplier is marked.
5. `_q20_select`: marked suppliers appended (one atomic per tile), each with its s_name packed into
   big-endian int64 words, so that comparing words compares bytes.
The host reads the count (the one synchronization: it sizes the result); then `_q20_rank` counts, for
each answer row, the rows before it in s_name order (tiles of pairs, no loop), and `_q20_place` puts
each row at its rank.
"""

import torch
import triton
import triton.language as tl

from evaluator.tpch.encoding import add_months, parse_date

BLOCK = 1024
PROGRAMS = 1 << 20  # programs of the partsupp and lineitem passes (each strides over TILES blocks)
SLOT_PROGRAMS = 1 << 20  # programs of _q20_slots
PART_ROWS = 256  # part rows per tile of _q20_keys (x 16 prefix bytes)
LINE_BLOCK = 1024  # rows per block of the partsupp and lineitem passes
LINE_WARPS = 8  # H200, SF10: lineitem pass 463 us with 8 warps, 590 with 4; larger blocks were slower
SELECT_ROWS = 128  # supplier rows per tile of _q20_select (x 32 name bytes)
SLOTS = 4  # partsupp rows per part (spec 4.2.5)
PART_BLOCK = 256  # part keys per tile in _q20_slots (x SLOTS)
RANK_BLOCK = 64  # answer rows per side of a _q20_rank tile
PREFIX_WORDS = 8  # the LIKE prefix as up to 8 int64 words: 64 bytes, wider than p_name (55)
COUNT_SHIFT = 32


@triton.jit
def _part_flags(
    tile,
    p_partkey,
    p_name,
    part_ok,
    slot_supp,
    slot_qty,
    slot_count,
    n,
    width,
    length,
    w0,
    w1,
    w2,
    w3,
    w4,
    w5,
    w6,
    w7,
    BLOCK: tl.constexpr,
    PREFIX_COLS: tl.constexpr,
    SLOTS: tl.constexpr,
):
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    key = tl.load(p_partkey + offs, mask=inside, other=0)
    cols = tl.arange(0, PREFIX_COLS)
    # The prefix's byte at each column, from its little-endian words.
    word = tl.where(
        cols < 8,
        w0,
        tl.where(
            cols < 16,
            w1,
            tl.where(
                cols < 24,
                w2,
                tl.where(
                    cols < 32,
                    w3,
                    tl.where(cols < 40, w4, tl.where(cols < 48, w5, tl.where(cols < 56, w6, w7))),
                ),
            ),
        ),
    ).to(tl.int64)
    want = ((word >> ((cols % 8) * 8).to(tl.int64)) & 0xFF).to(tl.int32)
    used = cols < length
    # Only the prefix's bytes are loaded (masked lanes issue no access): loading whole rows, coalesced,
    # was slower on the H200 (183-382 us against 109 us at SF10).
    text = tl.load(
        p_name + offs.to(tl.int64)[:, None] * width + cols[None, :],
        mask=inside[:, None] & used[None, :] & (cols[None, :] < width),
        other=0,
    )
    differ = tl.sum((used[None, :] & (text.to(tl.int32) != want[None, :])).to(tl.int32), axis=1)
    ok = inside & (differ == 0) & (length <= width)
    tl.store(part_ok + key, ok.to(tl.int8), mask=inside)
    tl.store(slot_count + key, tl.zeros([BLOCK], dtype=tl.int32), mask=ok)
    s = tl.arange(0, SLOTS)
    slot = key[:, None] * SLOTS + s[None, :]
    tl.store(slot_supp + slot, tl.full([BLOCK, SLOTS], -1, dtype=tl.int64), mask=ok[:, None])
    tl.store(slot_qty + slot, tl.zeros([BLOCK, SLOTS], dtype=tl.int64), mask=ok[:, None])


@triton.jit
def _supplier_flags(
    tile,
    s_suppkey,
    s_nationkey,
    n_nationkey,
    n_name,
    supp_ok,
    marked,
    count,
    n,
    nations,
    nation,
    BLOCK: tl.constexpr,
    NATION_BLOCK: tl.constexpr,
):
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    key = tl.load(s_suppkey + offs, mask=inside, other=0)
    nk = tl.load(s_nationkey + offs, mask=inside, other=-1)
    j = tl.arange(0, NATION_BLOCK)
    nat_key = tl.load(n_nationkey + j, mask=j < nations, other=-2)
    nat_ok = (tl.load(n_name + j, mask=j < nations, other=-2) == nation) & (j < nations)
    hit = (nk[:, None] == nat_key[None, :]) & nat_ok[None, :]
    ok = inside & (tl.max(hit.to(tl.int32), axis=1) > 0)
    tl.store(supp_ok + key, ok.to(tl.int8), mask=inside)
    tl.store(marked + key, tl.zeros([BLOCK], dtype=tl.int8), mask=inside)
    tl.store(
        count + tl.arange(0, 1), tl.zeros([1], dtype=tl.int32), mask=(tl.arange(0, 1) == 0) & (tile == 0)
    )


@triton.jit(do_not_specialize=["length", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "nation"])
def _q20_keys(
    p_partkey,
    p_name,
    part_ok,
    slot_supp,
    slot_qty,
    slot_count,
    parts,
    width,
    length,
    w0,
    w1,
    w2,
    w3,
    w4,
    w5,
    w6,
    w7,
    s_suppkey,
    s_nationkey,
    n_nationkey,
    n_name,
    supp_ok,
    marked,
    count,
    suppliers,
    nations,
    nation,
    part_tiles,
    PART_ROWS: tl.constexpr,
    PREFIX_COLS: tl.constexpr,
    SLOTS: tl.constexpr,
    BLOCK: tl.constexpr,
    NATION_BLOCK: tl.constexpr,
):
    # One launch for both key tables: the first part_tiles programs flag parts, the rest suppliers.
    pid = tl.program_id(0)
    if pid < part_tiles:
        _part_flags(
            pid,
            p_partkey,
            p_name,
            part_ok,
            slot_supp,
            slot_qty,
            slot_count,
            parts,
            width,
            length,
            w0,
            w1,
            w2,
            w3,
            w4,
            w5,
            w6,
            w7,
            PART_ROWS,
            PREFIX_COLS,
            SLOTS,
        )
    else:
        _supplier_flags(
            pid - part_tiles,
            s_suppkey,
            s_nationkey,
            n_nationkey,
            n_name,
            supp_ok,
            marked,
            count,
            suppliers,
            nations,
            nation,
            BLOCK,
            NATION_BLOCK,
        )


@triton.jit
def _q20_partsupp(
    ps_partkey,
    ps_suppkey,
    ps_availqty,
    part_ok,
    supp_ok,
    slot_supp,
    slot_avail,
    slot_count,
    n,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
    SLOTS: tl.constexpr,
):
    pid = tl.program_id(0)
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        pk = tl.load(ps_partkey + offs, mask=inside, other=0)
        sk = tl.load(ps_suppkey + offs, mask=inside, other=0)
        avail = tl.load(ps_availqty + offs, mask=inside, other=0)
        cand = inside & (tl.load(part_ok + pk, mask=inside, other=0) != 0)
        cand = cand & (tl.load(supp_ok + sk, mask=cand, other=0) != 0)
        j = tl.atomic_add(slot_count + pk, tl.full([BLOCK], 1, dtype=tl.int32), mask=cand, sem="relaxed")
        cand = cand & (j < SLOTS)
        slot = pk * SLOTS + j
        tl.store(slot_supp + slot, sk, mask=cand)
        tl.store(slot_avail + slot, avail, mask=cand)


@triton.jit(do_not_specialize=["date_lo", "date_hi"])
def _q20_lines(
    l_partkey,
    l_suppkey,
    l_quantity,
    l_shipdate,
    part_ok,
    supp_ok,
    slot_supp,
    slot_qty,
    n,
    date_lo,
    date_hi,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
    SLOTS: tl.constexpr,
    COUNT_SHIFT: tl.constexpr,
):
    pid = tl.program_id(0)
    # A constant trip count (one compile per table size): Triton's interpreter cannot loop to a
    # run-time bound.
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the harness's bandwidth floor counts all their bytes.
        d = tl.load(l_shipdate + offs, mask=inside, other=0)
        pk = tl.load(l_partkey + offs, mask=inside, other=0)
        sk = tl.load(l_suppkey + offs, mask=inside, other=0)
        q = tl.load(l_quantity + offs, mask=inside, other=0.0)
        keep = inside & (d >= date_lo) & (d < date_hi)
        # The flags are 1 byte per key (2 MB and 100 KB at SF10): the gathers stay in L2.
        keep = keep & (tl.load(part_ok + pk, mask=keep, other=0) != 0)
        keep = keep & (tl.load(supp_ok + sk, mask=keep, other=0) != 0)
        add = (1 << COUNT_SHIFT) + q.to(tl.int64)
        for s in tl.static_range(SLOTS):
            here = keep & (tl.load(slot_supp + pk * SLOTS + s, mask=keep, other=-1) == sk)
            tl.atomic_add(slot_qty + pk * SLOTS + s, add, mask=here, sem="relaxed")


@triton.jit
def _q20_slots(
    part_ok,
    slot_supp,
    slot_avail,
    slot_qty,
    marked,
    parts,
    TILES: tl.constexpr,
    PART_BLOCK: tl.constexpr,
    SLOTS: tl.constexpr,
    COUNT_SHIFT: tl.constexpr,
):
    pid = tl.program_id(0)
    s = tl.arange(0, SLOTS)
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * PART_BLOCK + tl.arange(0, PART_BLOCK)
        key = (offs + 1).to(tl.int64)  # keys 1..parts; slot 0 of part_ok is never written
        inside = offs < parts
        ok = inside & (tl.load(part_ok + key, mask=inside, other=0) != 0)
        slot = key[:, None] * SLOTS + s[None, :]
        supp = tl.load(slot_supp + slot, mask=ok[:, None], other=-1)
        used = ok[:, None] & (supp >= 0)
        avail = tl.load(slot_avail + slot, mask=used, other=0)
        total = tl.load(slot_qty + slot, mask=used, other=0)
        lines = total >> COUNT_SHIFT
        qsum = total & ((1 << COUNT_SHIFT) - 1)
        # availqty > 0.5 * sum(quantity) is 2 * availqty > sum; a pair with no lines has a NULL sum.
        qualifies = used & (lines > 0) & (2 * avail > qsum)
        tl.store(marked + supp, tl.full([PART_BLOCK, SLOTS], 1, dtype=tl.int8), mask=qualifies)


@triton.jit
def _q20_select(
    s_suppkey,
    s_name,
    marked,
    count,
    out_row,
    words,
    rank,
    n,
    width,
    BLOCK: tl.constexpr,
    NAME_COLS: tl.constexpr,
    WORDS: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    key = tl.load(s_suppkey + offs, mask=inside, other=0)
    # Only suppliers of the nation were marked (the candidates were filtered by it).
    sel = inside & (tl.load(marked + key, mask=inside, other=0) != 0)
    flag = sel.to(tl.int32)
    place = tl.cumsum(flag, axis=0) - flag
    at = tl.atomic_add(count, tl.sum(flag, axis=0)) + place
    tl.store(out_row + at, offs.to(tl.int64), mask=sel)
    tl.store(rank + at, tl.zeros([BLOCK], dtype=tl.int32), mask=sel)
    cols = tl.arange(0, NAME_COLS)
    text = tl.load(
        s_name + offs.to(tl.int64)[:, None] * width + cols[None, :],
        mask=sel[:, None] & (cols[None, :] < width),
        other=0,
    ).to(tl.int64)
    # Big-endian words of ASCII bytes (< 128: the words stay positive): word order is byte order.
    shifted = text << ((7 - cols % 8) * 8).to(tl.int64)[None, :]
    for w in tl.static_range(WORDS):
        value = tl.sum(tl.where((cols // 8 == w)[None, :], shifted, 0), axis=1)
        tl.store(words + at.to(tl.int64) * WORDS + w, value, mask=sel)


@triton.jit(do_not_specialize=["m"])  # m depends on the data: no compile per value
def _q20_rank(words, rank, m, RANK_BLOCK: tl.constexpr, WORDS: tl.constexpr):
    i = tl.program_id(0) * RANK_BLOCK + tl.arange(0, RANK_BLOCK)
    j = tl.program_id(1) * RANK_BLOCK + tl.arange(0, RANK_BLOCK)
    in_i = i < m
    in_j = j < m
    # Ties (equal names) broken by position, so the ranks are a permutation.
    before = j[None, :] < i[:, None]
    for r in tl.static_range(WORDS):
        w = WORDS - 1 - r
        a = tl.load(words + i.to(tl.int64) * WORDS + w, mask=in_i, other=0)
        b = tl.load(words + j.to(tl.int64) * WORDS + w, mask=in_j, other=0)
        before = (b[None, :] < a[:, None]) | ((b[None, :] == a[:, None]) & before)
    before = before & in_j[None, :]
    tl.atomic_add(rank + i, tl.sum(before.to(tl.int32), axis=1), mask=in_i, sem="relaxed")


@triton.jit(do_not_specialize=["m"])
def _q20_place(out_row, rank, result, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < m
    r = tl.load(rank + offs, mask=inside, other=0)
    tl.store(result + r, tl.load(out_row + offs, mask=inside, other=0), mask=inside)


def _prefix_words(prefix: bytes) -> list[int]:
    """The prefix as PREFIX_WORDS little-endian int64 words (byte i at bits 8 * (i % 8) of word i // 8)."""
    padded = prefix[: 8 * PREFIX_WORDS].ljust(8 * PREFIX_WORDS, b"\0")
    return [int.from_bytes(padded[8 * k : 8 * k + 8], "little", signed=True) for k in range(PREFIX_WORDS)]


def run_query(tables, color="forest", date="1994-01-01", nation="CANADA"):
    supplier, nation_table, part = tables["supplier"], tables["nation"], tables["part"]
    partsupp, lineitem = tables["partsupp"], tables["lineitem"]
    device = lineitem["l_partkey"].device
    parts = part["p_partkey"].numel()
    suppliers = supplier["s_suppkey"].numel()

    prefix = color.encode()
    p_name = part["p_name"]
    width = p_name.shape[1]
    # A prefix longer than 64 bytes is longer than p_name too: no part matches (length > width).
    prefix_cols = 16 if len(prefix) <= 16 else 64  # two shapes only: no compile per color length
    part_ok = torch.empty(parts + 1, dtype=torch.int8, device=device)
    slot_supp = torch.empty((parts + 1) * SLOTS, dtype=torch.int64, device=device)
    slot_avail = torch.empty((parts + 1) * SLOTS, dtype=torch.int64, device=device)
    slot_qty = torch.empty((parts + 1) * SLOTS, dtype=torch.int64, device=device)
    slot_count = torch.empty(parts + 1, dtype=torch.int32, device=device)
    names = nation_table.dictionary("n_name")
    nation_code = names.index(nation) if nation in names else -3  # -2 pads the nation tile
    nations = nation_table["n_nationkey"].numel()
    supp_ok = torch.empty(suppliers + 1, dtype=torch.int8, device=device)
    marked = torch.empty(suppliers + 1, dtype=torch.int8, device=device)
    count = torch.empty(1, dtype=torch.int32, device=device)
    part_tiles = triton.cdiv(parts, PART_ROWS)
    _q20_keys[(part_tiles + triton.cdiv(suppliers, BLOCK),)](
        part["p_partkey"],
        p_name,
        part_ok,
        slot_supp,
        slot_qty,
        slot_count,
        parts,
        width,
        len(prefix),
        *_prefix_words(prefix),
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        nation_table["n_nationkey"],
        nation_table["n_name"],
        supp_ok,
        marked,
        count,
        suppliers,
        nations,
        nation_code,
        part_tiles,
        PART_ROWS=PART_ROWS,
        PREFIX_COLS=prefix_cols,
        SLOTS=SLOTS,
        BLOCK=BLOCK,
        NATION_BLOCK=triton.next_power_of_2(nations),
    )

    rows = partsupp["ps_partkey"].numel()
    programs = max(1, min(PROGRAMS, triton.cdiv(rows, LINE_BLOCK)))
    _q20_partsupp[(programs,)](
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_availqty"],
        part_ok,
        supp_ok,
        slot_supp,
        slot_avail,
        slot_count,
        rows,
        TILES=triton.cdiv(triton.cdiv(rows, LINE_BLOCK), programs),
        BLOCK=LINE_BLOCK,
        SLOTS=SLOTS,
        num_warps=LINE_WARPS,
    )

    n = lineitem["l_partkey"].numel()
    programs = max(1, min(PROGRAMS, triton.cdiv(n, LINE_BLOCK)))
    _q20_lines[(programs,)](
        lineitem["l_partkey"],
        lineitem["l_suppkey"],
        lineitem["l_quantity"],
        lineitem["l_shipdate"],
        part_ok,
        supp_ok,
        slot_supp,
        slot_qty,
        n,
        parse_date(date),
        add_months(date, 12),
        TILES=triton.cdiv(triton.cdiv(n, LINE_BLOCK), programs),
        BLOCK=LINE_BLOCK,
        SLOTS=SLOTS,
        COUNT_SHIFT=COUNT_SHIFT,
        num_warps=LINE_WARPS,
    )

    programs = max(1, min(SLOT_PROGRAMS, triton.cdiv(parts, PART_BLOCK)))
    _q20_slots[(programs,)](
        part_ok,
        slot_supp,
        slot_avail,
        slot_qty,
        marked,
        parts,
        TILES=triton.cdiv(triton.cdiv(parts, PART_BLOCK), programs),
        PART_BLOCK=PART_BLOCK,
        SLOTS=SLOTS,
        COUNT_SHIFT=COUNT_SHIFT,
    )

    s_name = supplier["s_name"]
    name_cols = triton.next_power_of_2(max(8, s_name.shape[1]))
    words_per_name = name_cols // 8
    out_row = torch.empty(suppliers, dtype=torch.int64, device=device)
    words = torch.empty(suppliers * words_per_name, dtype=torch.int64, device=device)
    rank = torch.empty(suppliers, dtype=torch.int32, device=device)
    _q20_select[(triton.cdiv(suppliers, SELECT_ROWS),)](
        supplier["s_suppkey"],
        s_name,
        marked,
        count,
        out_row,
        words,
        rank,
        suppliers,
        s_name.shape[1],
        BLOCK=SELECT_ROWS,
        NAME_COLS=name_cols,
        WORDS=words_per_name,
    )
    m = int(count.item())  # the one synchronization: the result's size
    result = torch.empty(m, dtype=torch.int64, device=device)
    if m > 0:
        tiles = triton.cdiv(m, RANK_BLOCK)
        _q20_rank[(tiles, tiles)](words, rank, m, RANK_BLOCK=RANK_BLOCK, WORDS=words_per_name)
        _q20_place[(triton.cdiv(m, BLOCK),)](out_row, rank, result, m, BLOCK=BLOCK)
    return {"s_name": result, "s_address": result}

"""TPC-H Q21 in Triton (scope: full): per-order supplier states by atomic exchange, one pass over lineitem.

l1 counts when its order is 'F', its supplier is of :nation, it is late, the order has another supplier
(EXISTS l2) and no other late supplier (NOT EXISTS l3). Per order key, two words hold the last supplier
seen among all lines and among the late lines, and two flags whether a different one was ever seen: a
line exchanges its supplier into the word, and an old value neither 0 (none yet) nor its own means two
suppliers. Among any sequence of exchanges holding two distinct values, two adjacent ones differ, so the
flag is exact whatever the order the lines run in. l1 is late itself, so NOT EXISTS l3 is "the late
lines have one supplier".

1. `_q21_dims` (suppliers and orders in one launch): a flag per supplier key of :nation, its row (for
   s_name) and a zeroed count; per order key the word for all lines (0 for 'F' orders, -2 for others:
   the 'F' test rides on it), and for 'F' orders the late word and both flags.
2. `_q21_lines`: the exchanges; the candidate l1 rows (late, 'F', supplier of :nation, about 1% of
   lineitem) are compacted into the program's own slab of a buffer, so no global counter is needed.
3. `_q21_wait`: once every order's flags are final, each candidate that waited adds 1 to its supplier.
4. The suppliers with a count (a few thousand at SF10, one sync to find them) are ranked by numwait
   DESC, s_name (bytes compared in registers, pairs over a 2-D grid) and the first 100 scattered in
   order.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024
PROGRAMS = 264  # 2 per H200 multiprocessor; each strides over TILES blocks of lineitem
RANK_BLOCK = 64
LIMIT = 100


@triton.jit
def _q21_dims(
    s_suppkey,
    s_nationkey,
    n_nationkey,
    n_name,
    nations,
    nation,
    supplier_ok,
    supplier_row,
    numwait,
    suppliers,
    supp_programs,
    o_orderkey,
    o_orderstatus,
    status,
    last_all,
    last_late,
    multi_all,
    multi_late,
    orders,
    NATIONS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    if pid < supp_programs:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        inside = offs < suppliers
        key = tl.load(s_suppkey + offs, mask=inside, other=0)
        nkey = tl.load(s_nationkey + offs, mask=inside, other=-1)
        n = tl.arange(0, NATIONS)
        keys = tl.load(n_nationkey + n, mask=n < nations, other=-2)
        wanted = tl.load(n_name + n, mask=n < nations, other=-1) == nation
        ok = tl.sum((nkey[:, None] == keys[None, :]) & wanted[None, :], axis=1) > 0
        tl.store(supplier_ok + key, ok.to(tl.int8), mask=inside)
        tl.store(supplier_row + key, offs, mask=inside)
        tl.store(numwait + key, tl.zeros([BLOCK], dtype=tl.int32), mask=inside)
        # Key 0 is no supplier's: zeroed so that the count array can be scanned whole.
        tl.store(numwait + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=offs == 0)
    else:
        offs = (pid - supp_programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < orders
        key = tl.load(o_orderkey + offs, mask=inside, other=0)
        failed = tl.load(o_orderstatus + offs, mask=inside, other=-1) == status
        tl.store(last_all + key, tl.where(failed, 0, -2), mask=inside)
        keep = inside & failed
        tl.store(last_late + key, tl.zeros([BLOCK], dtype=tl.int32), mask=keep)
        tl.store(multi_all + key, tl.zeros([BLOCK], dtype=tl.int8), mask=keep)
        tl.store(multi_late + key, tl.zeros([BLOCK], dtype=tl.int8), mask=keep)


@triton.jit
def _q21_lines(
    l_orderkey,
    l_suppkey,
    l_commitdate,
    l_receiptdate,
    supplier_ok,
    last_all,
    last_late,
    multi_all,
    multi_late,
    cand_key,
    cand_supp,
    counts,
    n,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    slab = pid * (TILES * BLOCK)
    count = pid * 0  # an int32 scalar carried through the loop
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the bandwidth floor counts all their bytes.
        key = tl.load(l_orderkey + offs, mask=inside, other=0)
        supp = tl.load(l_suppkey + offs, mask=inside, other=0).to(tl.int32)
        late = tl.load(l_receiptdate + offs, mask=inside, other=0) > tl.load(
            l_commitdate + offs, mask=inside, other=0
        )
        state = tl.load(last_all + key, mask=inside, other=-2)
        act = inside & (state != -2)  # an 'F' order
        old = tl.atomic_xchg(last_all + key, supp, mask=act, sem="relaxed")
        tl.store(multi_all + key, tl.full([BLOCK], 1, tl.int8), mask=act & (old != 0) & (old != supp))
        act_late = act & late
        old = tl.atomic_xchg(last_late + key, supp, mask=act_late, sem="relaxed")
        tl.store(multi_late + key, tl.full([BLOCK], 1, tl.int8), mask=act_late & (old != 0) & (old != supp))
        cand = act_late & (tl.load(supplier_ok + supp, mask=act_late, other=0) != 0)
        at = slab + count + tl.cumsum(cand.to(tl.int32), axis=0) - 1
        tl.store(cand_key + at, key, mask=cand)
        tl.store(cand_supp + at, supp, mask=cand)
        count += tl.sum(cand.to(tl.int32), axis=0)
    tl.store(counts + pid, count)


@triton.jit
def _q21_wait(
    cand_key, cand_supp, counts, multi_all, multi_late, numwait, TILES: tl.constexpr, BLOCK: tl.constexpr
):
    pid = tl.program_id(0)
    slab = pid * (TILES * BLOCK)
    count = tl.load(counts + pid)
    for tile in range(0, TILES):
        if tile * BLOCK < count:  # the slab's candidates fill its first tiles only
            offs = tile * BLOCK + tl.arange(0, BLOCK)
            inside = offs < count
            key = tl.load(cand_key + slab + offs, mask=inside, other=0)
            supp = tl.load(cand_supp + slab + offs, mask=inside, other=0)
            other = tl.load(multi_all + key, mask=inside, other=0) != 0
            other_late = tl.load(multi_late + key, mask=inside, other=1) != 0
            tl.atomic_add(
                numwait + supp,
                tl.full([BLOCK], 1, tl.int32),
                mask=inside & other & ~other_late,
                sem="relaxed",
            )


@triton.jit(do_not_specialize=["k"])
def _q21_rank(keys, numwait, supplier_row, s_name, rank, k, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    in_i, in_j = i < k, j < k
    key_i = tl.load(keys + i, mask=in_i, other=0)
    key_j = tl.load(keys + j, mask=in_j, other=0)
    wait_i = tl.load(numwait + key_i, mask=in_i, other=0)
    wait_j = tl.load(numwait + key_j, mask=in_j, other=0)
    name_i = s_name + tl.load(supplier_row + key_i, mask=in_i, other=0).to(tl.int64) * WIDTH
    name_j = s_name + tl.load(supplier_row + key_j, mask=in_j, other=0).to(tl.int64) * WIDTH
    # s_name of j before s_name of i: the first differing byte decides.
    before = tl.zeros([BLOCK, BLOCK], dtype=tl.int1)
    decided = tl.zeros([BLOCK, BLOCK], dtype=tl.int1)
    for c in tl.static_range(WIDTH):
        a = tl.load(name_i + c, mask=in_i, other=0)
        b = tl.load(name_j + c, mask=in_j, other=0)
        before = before | (~decided & (b[None, :] < a[:, None]))
        decided = decided | (b[None, :] != a[:, None])
    # Equal names (never in TPC-H) fall back to the key, so every position is taken once.
    before = before | (~decided & (key_j[None, :] < key_i[:, None]))
    ahead = (wait_j[None, :] > wait_i[:, None]) | ((wait_j[None, :] == wait_i[:, None]) & before)
    ahead = ahead & in_j[None, :]
    tl.atomic_add(rank + i, tl.sum(ahead.to(tl.int32), axis=1), mask=in_i, sem="relaxed")


@triton.jit(do_not_specialize=["k"])
def _q21_place(
    keys, numwait, supplier_row, rank, out_row, out_wait, k, LIMIT: tl.constexpr, BLOCK: tl.constexpr
):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = i < k
    r = tl.load(rank + i, mask=inside, other=LIMIT)
    keep = inside & (r < LIMIT)
    key = tl.load(keys + i, mask=inside, other=0)
    tl.store(out_row + r, tl.load(supplier_row + key, mask=keep, other=0).to(tl.int64), mask=keep)
    tl.store(out_wait + r, tl.load(numwait + key, mask=keep, other=0).to(tl.int64), mask=keep)


def _code(dictionary, value):
    return dictionary.index(value) if value in dictionary else -1


def run_query(tables, nation="SAUDI ARABIA"):
    supplier, orders, lineitem, nations_t = (
        tables["supplier"],
        tables["orders"],
        tables["lineitem"],
        tables["nation"],
    )
    device = lineitem["l_orderkey"].device
    suppliers, orders_n = supplier["s_suppkey"].numel(), orders["o_orderkey"].numel()
    nations = nations_t["n_nationkey"].numel()
    # Keys are dense from 1, except dbgen's sparse order keys: at most 4 x the order count. A slot is
    # read only where it was written (each lineitem key is a key of its table).
    supplier_ok = torch.empty(suppliers + 1, dtype=torch.int8, device=device)
    supplier_row = torch.empty(suppliers + 1, dtype=torch.int32, device=device)
    numwait = torch.empty(suppliers + 1, dtype=torch.int32, device=device)
    order_keys = 4 * orders_n + 1
    last_all = torch.empty(order_keys, dtype=torch.int32, device=device)
    last_late = torch.empty(order_keys, dtype=torch.int32, device=device)
    multi_all = torch.empty(order_keys, dtype=torch.int8, device=device)
    multi_late = torch.empty(order_keys, dtype=torch.int8, device=device)
    supp_programs = triton.cdiv(suppliers, BLOCK)
    _q21_dims[(supp_programs + triton.cdiv(orders_n, BLOCK),)](
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        nations_t["n_nationkey"],
        nations_t["n_name"],
        nations,
        _code(nations_t.dictionary("n_name"), nation),
        supplier_ok,
        supplier_row,
        numwait,
        suppliers,
        supp_programs,
        orders["o_orderkey"],
        orders["o_orderstatus"],
        _code(orders.dictionary("o_orderstatus"), "F"),
        last_all,
        last_late,
        multi_all,
        multi_late,
        orders_n,
        NATIONS=triton.next_power_of_2(nations),
        BLOCK=BLOCK,
    )

    n = lineitem["l_orderkey"].numel()
    programs = max(1, min(PROGRAMS, triton.cdiv(n, BLOCK)))
    tiles = triton.cdiv(triton.cdiv(n, BLOCK), programs)
    # Each program's slab holds all its rows, so it never overflows; only ~1% of it is written.
    cand_key = torch.empty(programs * tiles * BLOCK, dtype=torch.int64, device=device)
    cand_supp = torch.empty(programs * tiles * BLOCK, dtype=torch.int32, device=device)
    counts = torch.empty(programs, dtype=torch.int32, device=device)
    _q21_lines[(programs,)](
        lineitem["l_orderkey"],
        lineitem["l_suppkey"],
        lineitem["l_commitdate"],
        lineitem["l_receiptdate"],
        supplier_ok,
        last_all,
        last_late,
        multi_all,
        multi_late,
        cand_key,
        cand_supp,
        counts,
        n,
        TILES=tiles,
        BLOCK=BLOCK,
    )
    _q21_wait[(programs,)](
        cand_key, cand_supp, counts, multi_all, multi_late, numwait, TILES=tiles, BLOCK=BLOCK
    )

    keys = torch.nonzero(numwait).squeeze(1)  # the one sync: how many suppliers have a count
    k = keys.numel()
    rank = torch.zeros(k, dtype=torch.int32, device=device)
    out_row = torch.empty(min(k, LIMIT), dtype=torch.int64, device=device)
    out_wait = torch.empty(min(k, LIMIT), dtype=torch.int64, device=device)
    if k:
        blocks = triton.cdiv(k, RANK_BLOCK)
        _q21_rank[(blocks, blocks)](
            keys,
            numwait,
            supplier_row,
            supplier["s_name"],
            rank,
            k,
            WIDTH=supplier["s_name"].shape[1],
            BLOCK=RANK_BLOCK,
        )
        _q21_place[(triton.cdiv(k, BLOCK),)](
            keys, numwait, supplier_row, rank, out_row, out_wait, k, LIMIT=LIMIT, BLOCK=BLOCK
        )
    return {"s_name": out_row, "numwait": out_wait}

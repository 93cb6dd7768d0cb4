"""TPC-H Q18 in Triton (scope: full): per-order quantity summed in registers, the few large orders ranked.

The outer GROUP BY is by order (o_orderkey is the orders' key) and its sum(l_quantity) is the per-order
sum the IN subquery tests, so one sum per order serves both. Quantities are whole numbers: the sums are
exact in int32, and so is the HAVING test. Lineitem comes in dbgen's row order: the lines of one order are
adjacent (docs/data-format.md), which `_q18_lines` relies on.

1. `_q18_lines`: persistent programs stride over lineitem tiles. In a tile an order starts where a row's
   key differs from the row before it (that key loaded at offset -1); the tile owns the orders that start
   in it. An inclusive prefix sum of quantity over the tile (tl.cumsum) and one of the start flags (the
   order's index in the tile) give each start its prefix before it, stored in a per-program scratch row at
   its index; the prefix after the tile's last order (plus the rows of that order in the tiles after,
   read from there) takes the slot after. After a CTA barrier each start reads the next slot: its order's
   total is the difference. No atomics on sums and no zeroed sum array: only an order whose total is
   > :quantity (a few hundred at SF10) sets its key's bit in a zeroed bit map and stores its total at its
   key. (Every tile of one layout: see `zero` in the kernel.)
2. `_q18_orders` (customers and orders in one launch): the customer row per c_custkey (c_name is returned
   as that row); per order, its key's bit set appends the order (key, customer, date, price) to a short
   list (one atomic on the count per tile that has any; whole columns read).
3. The host reads the count (the one sync). `_q18_top`: each survivor counts the survivors ahead of it in
   ORDER BY o_totalprice DESC, o_orderdate (ties by list position, so positions are distinct) in blocks
   of 64, stopping once every survivor of its block has 100 ahead; the first 100 are written in order with
   their customer's row and their total.

Launches: torch.zeros (bit map and count) + 3 Triton. Syncs: 1. On the CPU (Triton's interpreter pays per
tile) the tiles are 16384 rows and the rank blocks 512.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024
PROGRAMS = 528  # 4 per H200 multiprocessor; each strides over TILES blocks of a table
CPU_BLOCK = 16384  # Triton's CPU interpreter pays per tile: there it gets few, large ones
HALO = 8  # rows after a tile read with it: dbgen's orders have at most 7 lines (any count stays correct)
RANK_BLOCK = 64
CPU_RANK_BLOCK = 512
LIMIT = 100


@triton.jit
def _q18_lines(
    l_orderkey,
    l_quantity,
    n,
    quantity,
    zero,
    marks,
    order_sum,
    scratch,
    TILES: tl.constexpr,
    HALO: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    # `^ zero` (a run-time 0) hides the rows' contiguity from Triton: every tensor of the tile then takes
    # one layout, a row per thread at a time, and the scattered scratch stores need no layout conversion
    # (a shared-memory round trip each). The loads lose nothing: masked at n, they are scalar anyway.
    lane = tl.arange(0, BLOCK) ^ zero
    halo = tl.arange(0, HALO)
    for tile in range(0, TILES):
        first = (pid + tile * tl.num_programs(0)) * BLOCK
        offs = first + lane
        inside = offs < n
        # Keys compared as int32 (dbgen's order keys are below 2^31 up to SF ~350).
        key = tl.load(l_orderkey + offs, mask=inside, other=0).to(tl.int32)
        before = tl.load(l_orderkey + offs - 1, mask=inside & (offs > 0), other=-1).to(tl.int32)
        qty = tl.load(l_quantity + offs, mask=inside, other=0.0).to(tl.int32)
        start = inside & (key != before)
        index = tl.cumsum(start.to(tl.int32), axis=0)  # the row's order among the tile's (0: owned before)
        upto = tl.cumsum(qty, axis=0)  # quantity of the tile's rows up to and including this one
        # The tile's last order may go on after it: its rows there, HALO at a time, added to its total.
        last = tl.load(l_orderkey + first + BLOCK - 1, mask=first + BLOCK - 1 < n, other=-2).to(tl.int32)
        after = first + BLOCK + halo
        same = tl.load(l_orderkey + after, mask=after < n, other=-1).to(tl.int32) == last
        extra = tl.sum(tl.load(l_quantity + after, mask=same, other=0.0).to(tl.int32), axis=0)
        more = tl.sum(same.to(tl.int32), axis=0) == HALO
        while more:
            after += HALO
            same = tl.load(l_orderkey + after, mask=after < n, other=-1).to(tl.int32) == last
            extra += tl.sum(tl.load(l_quantity + after, mask=same, other=0.0).to(tl.int32), axis=0)
            more = tl.sum(same.to(tl.int32), axis=0) == HALO
        # Slot i - 1: the prefix before the tile's i-th order; slot i: after it (before the next one, or
        # the tile's total plus the continuation). Two scratch rows by tile parity: one barrier a tile.
        row = scratch + pid * (2 * BLOCK + 2) + (tile % 2) * (BLOCK + 1)
        tl.store(row + index - 1, upto - qty, mask=start)
        tl.store(row + index, upto + extra, mask=lane == BLOCK - 1)
        tl.debug_barrier()
        total = tl.load(row + index, mask=start, other=0) - (upto - qty)
        keep = start & (total > quantity)
        tl.atomic_or(marks + 1 + (key >> 5), 1 << (key & 31), mask=keep, sem="relaxed")
        tl.store(order_sum + key, total, mask=keep)


@triton.jit
def _q18_orders(
    c_custkey,
    customer_row,
    customers,
    cust_programs,
    o_orderkey,
    o_custkey,
    o_orderdate,
    o_totalprice,
    orders,
    marks,
    list_key,
    list_cust,
    list_date,
    list_price,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    lane = tl.arange(0, BLOCK)
    if pid < cust_programs:
        offs = pid * BLOCK + lane
        inside = offs < customers
        key = tl.load(c_custkey + offs, mask=inside, other=0)
        tl.store(customer_row + key, offs, mask=inside)
    else:
        programs = tl.num_programs(0) - cust_programs
        for tile in range(0, TILES):
            offs = (pid - cust_programs + tile * programs) * BLOCK + lane
            inside = offs < orders
            # Whole columns are read (mask `inside`): the bandwidth floor counts all their bytes.
            key = tl.load(o_orderkey + offs, mask=inside, other=0).to(tl.int32)
            cust = tl.load(o_custkey + offs, mask=inside, other=0).to(tl.int32)
            d = tl.load(o_orderdate + offs, mask=inside, other=0)
            p = tl.load(o_totalprice + offs, mask=inside, other=0.0)
            word = tl.load(marks + 1 + (key >> 5), mask=inside, other=0)
            keep = inside & (((word >> (key & 31)) & 1) != 0)
            kept = tl.sum(keep.to(tl.int32), axis=0)
            if kept > 0:  # a few hundred tiles at SF10: the scattered stores stay off the common path
                at = tl.atomic_add(marks, kept, sem="relaxed") + tl.cumsum(keep.to(tl.int32), axis=0) - 1
                tl.store(list_key + at, key, mask=keep)
                tl.store(list_cust + at, cust, mask=keep)
                tl.store(list_date + at, d, mask=keep)
                tl.store(list_price + at, p, mask=keep)


@triton.jit(do_not_specialize=["k"])
def _q18_top(
    list_key,
    list_cust,
    list_date,
    list_price,
    order_sum,
    customer_row,
    out_customer,
    out_custkey,
    out_orderkey,
    out_date,
    out_price,
    out_sum,
    k,
    LIMIT: tl.constexpr,
    BLOCK: tl.constexpr,
):
    lane = tl.arange(0, BLOCK)
    i = tl.program_id(0) * BLOCK + lane
    in_i = i < k
    p_i = tl.load(list_price + i, mask=in_i, other=0.0)
    d_i = tl.load(list_date + i, mask=in_i, other=0)
    ahead = tl.where(in_i, 0, LIMIT)
    j0 = 0
    while (j0 < k) & (tl.min(ahead, axis=0) < LIMIT):
        j = j0 + lane
        in_j = j < k
        p_j = tl.load(list_price + j, mask=in_j, other=0.0)
        d_j = tl.load(list_date + j, mask=in_j, other=0)
        # j ahead of i in ORDER BY o_totalprice DESC, o_orderdate; ties by list position.
        first = (p_j[None, :] > p_i[:, None]) | (
            (p_j[None, :] == p_i[:, None])
            & ((d_j[None, :] < d_i[:, None]) | ((d_j[None, :] == d_i[:, None]) & (j[None, :] < i[:, None])))
        )
        ahead += tl.sum((first & in_j[None, :]).to(tl.int32), axis=1)
        j0 += BLOCK
    keep = in_i & (ahead < LIMIT)
    key = tl.load(list_key + i, mask=keep, other=0)
    cust = tl.load(list_cust + i, mask=keep, other=0)
    tl.store(out_customer + ahead, tl.load(customer_row + cust, mask=keep, other=0).to(tl.int64), mask=keep)
    tl.store(out_custkey + ahead, cust.to(tl.int64), mask=keep)
    tl.store(out_orderkey + ahead, key.to(tl.int64), mask=keep)
    tl.store(out_date + ahead, d_i, mask=keep)
    tl.store(out_price + ahead, p_i, mask=keep)
    tl.store(out_sum + ahead, tl.load(order_sum + key, mask=keep, other=0).to(tl.float64), mask=keep)


def run_query(tables, quantity=300):
    customer, orders, lineitem = tables["customer"], tables["orders"], tables["lineitem"]
    device = lineitem["l_orderkey"].device
    customers, orders_n = customer["c_custkey"].numel(), orders["o_orderkey"].numel()
    n = lineitem["l_orderkey"].numel()
    block = BLOCK if device.type == "cuda" else CPU_BLOCK
    # dbgen's sparse order keys are at most 4 x the order count. marks[0] counts the survivors, then a bit
    # per order key; a total is stored (and read) only at a marked key.
    marks = torch.zeros(2 + 4 * orders_n // 32, dtype=torch.int32, device=device)
    order_sum = torch.empty(4 * orders_n + 1, dtype=torch.int32, device=device)
    programs = max(1, min(PROGRAMS, triton.cdiv(n, block)))
    scratch = torch.empty(programs * (2 * block + 2), dtype=torch.int32, device=device)
    _q18_lines[(programs,)](
        lineitem["l_orderkey"],
        lineitem["l_quantity"],
        n,
        quantity,
        0,
        marks,
        order_sum,
        scratch,
        TILES=triton.cdiv(triton.cdiv(n, block), programs),
        HALO=HALO,
        BLOCK=block,
    )
    # Customer keys are dense from 1: a slot is read only where it was written.
    customer_row = torch.empty(customers + 1, dtype=torch.int32, device=device)
    # Room for every order: the list never overflows, and only its first few slots are written.
    list_key = torch.empty(orders_n, dtype=torch.int32, device=device)
    list_cust = torch.empty(orders_n, dtype=torch.int32, device=device)
    list_date = torch.empty(orders_n, dtype=torch.int32, device=device)
    list_price = torch.empty(orders_n, dtype=torch.float64, device=device)
    cust_programs = triton.cdiv(customers, block)
    programs = max(1, min(PROGRAMS, triton.cdiv(orders_n, block)))
    _q18_orders[(cust_programs + programs,)](
        customer["c_custkey"],
        customer_row,
        customers,
        cust_programs,
        orders["o_orderkey"],
        orders["o_custkey"],
        orders["o_orderdate"],
        orders["o_totalprice"],
        orders_n,
        marks,
        list_key,
        list_cust,
        list_date,
        list_price,
        TILES=triton.cdiv(triton.cdiv(orders_n, block), programs),
        BLOCK=block,
    )
    k = int(marks[0].item())  # the one sync: how many orders passed
    out = min(k, LIMIT)
    out_customer = torch.empty(out, dtype=torch.int64, device=device)
    out_custkey = torch.empty(out, dtype=torch.int64, device=device)
    out_orderkey = torch.empty(out, dtype=torch.int64, device=device)
    out_date = torch.empty(out, dtype=torch.int32, device=device)
    out_price = torch.empty(out, dtype=torch.float64, device=device)
    out_sum = torch.empty(out, dtype=torch.float64, device=device)
    if k:
        rank_block = RANK_BLOCK if device.type == "cuda" else CPU_RANK_BLOCK
        _q18_top[(triton.cdiv(k, rank_block),)](
            list_key,
            list_cust,
            list_date,
            list_price,
            order_sum,
            customer_row,
            out_customer,
            out_custkey,
            out_orderkey,
            out_date,
            out_price,
            out_sum,
            k,
            LIMIT=LIMIT,
            BLOCK=rank_block,
        )
    return {
        "c_name": out_customer,
        "c_custkey": out_custkey,
        "o_orderkey": out_orderkey,
        "o_orderdate": out_date,
        "o_totalprice": out_price,
        "sum(l_quantity)": out_sum,
    }

"""TPC-H Q9 in Triton (scope: full): key-indexed dimension arrays, one pass over lineitem, one total.

1. `_q09_dims`, one launch over three tables (each program takes a block of one of them):
   - part: LIKE '%color%' on the p_name byte matrix by shift-and (bitap): one state word per row, one
     look-up in a 256-entry mask table per byte, the bytes read 4 at a time; a flag per part key;
   - supplier: its nation's n_name code per supplier key (the 25 nation rows matched in registers);
   - orders: extract(year FROM o_orderdate) per order key (int16), by civil-from-days arithmetic.
2. `_q09_supply`: ps_supplycost of the matching parts' partsupp rows, at slot 4 x partkey + i, where i
   (0..3) is the supplier's place among the part's four: dbgen puts part p's i-th supplier at
   (p + i x (S/4 + (p-1)/S)) mod S + 1, S the supplier count, so the composite (partkey, suppkey) join
   needs no search, only that formula on both sides.
3. `_q09_lines`: per lineitem row of a matching part, the amount, added (float64 atomics) to its group
   in the program's own row of partial sums: nation code x year, numbered so ascending ids are the
   ORDER BY (nation, o_year DESC). A program zeroes its own row first, so nothing needs a memset.
4. `_q09_total`: one program sums the rows of partials; the host reads the 2 x GROUPS values once (the
   only sync) and keeps the groups with rows.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024
PROGRAMS = 264  # 2 per H200 multiprocessor; each strides over TILES blocks of lineitem
FIRST_YEAR = 1988  # TPC-H order dates lie in 1992..1998; 16 years leave room on both sides
YEARS = 16


@triton.jit
def _year(days):
    # H. Hinnant's civil_from_days, in int32: z >= 0 for any date after year 0, so / and % are floors.
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    return yoe + era * 400 + (mp >= 10).to(tl.int32)


@triton.jit
def _supplier_slot(part, supp, suppliers):
    # Which of part's four suppliers supp is (0..3), or -1. int32: keys stay far below 2**31.
    step = suppliers // 4 + (part - 1) // suppliers
    first = part % suppliers
    slot = tl.full(part.shape, -1, tl.int32)
    for i in tl.static_range(4):
        x = first + i * step
        x = tl.where(x >= suppliers, x - suppliers, x)
        x = tl.where(x >= suppliers, x - suppliers, x)
        x = tl.where(x >= suppliers, x - suppliers, x)
        x = tl.where(x >= suppliers, x % suppliers, x)  # only when S / 4 + (p-1) / S exceeds S
        slot = tl.where(x + 1 == supp, i, slot)
    return slot


@triton.jit
def _bitap(state, found, byte, masks, hit, live):
    # One shift-and step on the rows where `live`: bit k of state = the last k + 1 bytes match the
    # pattern's first k + 1.
    step = ((state << 1) | 1) & tl.load(masks + byte, mask=live, other=0)
    state = tl.where(live, step, state)
    return state, found | (state & hit)


@triton.jit
def _q09_dims(
    p_partkey,
    p_name,
    shift,
    masks,
    hit,
    part_ok,
    parts,
    part_programs,
    s_suppkey,
    s_nationkey,
    n_nationkey,
    n_name,
    nations,
    supp_name,
    suppliers,
    supp_programs,
    o_orderkey,
    o_orderdate,
    order_year,
    orders,
    WIDTH: tl.constexpr,
    NWORDS: tl.constexpr,
    NATIONS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    if pid < part_programs:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        inside = offs < parts
        key = tl.load(p_partkey + offs, mask=inside, other=0)
        base = offs.to(tl.int64) * WIDTH
        rows = p_name + base
        # A row's bytes in order: up to 3 single bytes to a 4-byte boundary, NWORDS int32 words, then
        # the rest single: a row per lane reads 4 bytes a load where it can (the rows' stride of 55
        # makes each warp load touch ~14 cache lines, whatever its width).
        lead = (-(base + shift)) & 3
        state = tl.zeros([BLOCK], dtype=tl.int32)
        found = tl.zeros([BLOCK], dtype=tl.int32)
        for j in tl.static_range(3):
            live = inside & (j < lead)
            byte = tl.load(rows + j, mask=live, other=0).to(tl.int32)
            state, found = _bitap(state, found, byte, masks, hit, live)
        words = (rows + lead).to(tl.pointer_type(tl.int32))
        for w in tl.static_range(NWORDS):
            word = tl.load(words + w, mask=inside, other=0)
            for b in tl.static_range(4):
                state, found = _bitap(state, found, (word >> (8 * b)) & 255, masks, hit, inside)
        for t in tl.static_range(WIDTH - 4 * NWORDS):
            at = lead + 4 * NWORDS + t
            live = inside & (at < WIDTH)
            byte = tl.load(rows + at, mask=live, other=0).to(tl.int32)
            state, found = _bitap(state, found, byte, masks, hit, live)
        tl.store(part_ok + key, (found != 0).to(tl.int8), mask=inside)
    elif pid < part_programs + supp_programs:
        offs = (pid - part_programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < suppliers
        key = tl.load(s_suppkey + offs, mask=inside, other=0)
        nation = tl.load(s_nationkey + offs, mask=inside, other=-1)
        n = tl.arange(0, NATIONS)
        nkey = tl.load(n_nationkey + n, mask=n < nations, other=-2)
        nname = tl.load(n_name + n, mask=n < nations, other=0)
        same = nation[:, None] == nkey[None, :]
        name = tl.sum(tl.where(same, nname[None, :] + 1, 0), axis=1) - 1  # -1: no such nation
        tl.store(supp_name + key, name, mask=inside)
    else:
        offs = (pid - part_programs - supp_programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < orders
        key = tl.load(o_orderkey + offs, mask=inside, other=0)
        days = tl.load(o_orderdate + offs, mask=inside, other=0)
        tl.store(order_year + key, _year(days).to(tl.int16), mask=inside)


@triton.jit
def _q09_supply(ps_partkey, ps_suppkey, ps_supplycost, part_ok, cost, n, suppliers, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    part = tl.load(ps_partkey + offs, mask=inside, other=1)
    supp = tl.load(ps_suppkey + offs, mask=inside, other=0)
    c = tl.load(ps_supplycost + offs, mask=inside, other=0.0)
    ok = tl.load(part_ok + part, mask=inside, other=0) != 0
    slot = _supplier_slot(part.to(tl.int32), supp.to(tl.int32), suppliers)
    keep = inside & ok & (slot >= 0)
    tl.store(cost + part * 4 + slot, c, mask=keep)


@triton.jit
def _q09_lines(
    l_partkey,
    l_suppkey,
    l_orderkey,
    l_extendedprice,
    l_discount,
    l_quantity,
    part_ok,
    cost,
    supp_name,
    order_year,
    partials,
    present,
    n,
    suppliers,
    FIRST_YEAR: tl.constexpr,
    YEARS: tl.constexpr,
    GROUPS: tl.constexpr,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    g = tl.arange(0, GROUPS)
    tl.store(partials + pid * GROUPS + g, tl.zeros([GROUPS], dtype=tl.float64))
    tl.store(present + pid * GROUPS + g, tl.zeros([GROUPS], dtype=tl.int32))
    tl.debug_barrier()  # the zeros land before this program's atomics
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the bandwidth floor counts all their bytes.
        part = tl.load(l_partkey + offs, mask=inside, other=1)
        supp = tl.load(l_suppkey + offs, mask=inside, other=0)
        order = tl.load(l_orderkey + offs, mask=inside, other=0)
        price = tl.load(l_extendedprice + offs, mask=inside, other=0.0)
        disc = tl.load(l_discount + offs, mask=inside, other=0.0)
        qty = tl.load(l_quantity + offs, mask=inside, other=0.0)
        ok = inside & (tl.load(part_ok + part, mask=inside, other=0) != 0)
        slot = _supplier_slot(part.to(tl.int32), supp.to(tl.int32), suppliers)
        ok = ok & (slot >= 0)
        c = tl.load(cost + part * 4 + slot, mask=ok, other=0.0)
        name = tl.load(supp_name + supp, mask=ok, other=-1)
        year = tl.load(order_year + order, mask=ok, other=0).to(tl.int32) - FIRST_YEAR
        keep = ok & (name >= 0) & (year >= 0) & (year < YEARS)
        group = name * YEARS + (YEARS - 1 - year)
        amount = price * (1 - disc) - c * qty
        tl.atomic_add(partials + pid * GROUPS + group, amount, mask=keep, sem="relaxed")
        tl.store(present + pid * GROUPS + group, tl.full([BLOCK], 1, tl.int32), mask=keep)


@triton.jit
def _q09_total(
    partials, present, out, programs, GROUPS: tl.constexpr, CHUNKS: tl.constexpr, ROWS: tl.constexpr
):
    g = tl.arange(0, GROUPS)
    r = tl.arange(0, ROWS)
    total = tl.zeros([GROUPS], dtype=tl.float64)
    rows = tl.zeros([GROUPS], dtype=tl.int32)
    for chunk in range(0, CHUNKS):
        program = chunk * ROWS + r
        at = program[:, None] * GROUPS + g[None, :]
        inside = (program < programs)[:, None]
        total += tl.sum(tl.load(partials + at, mask=inside, other=0.0), axis=0)
        rows += tl.sum(tl.load(present + at, mask=inside, other=0), axis=0)
    tl.store(out + g, total)
    tl.store(out + GROUPS + g, rows.to(tl.float64))


def run_query(tables, color="green"):
    part, supplier, lineitem = tables["part"], tables["supplier"], tables["lineitem"]
    partsupp, orders, nation = tables["partsupp"], tables["orders"], tables["nation"]
    device = lineitem["l_partkey"].device
    # Shift-and masks: bit k of masks[b] says the pattern's k-th byte is b.
    pattern = color.encode()
    masks = [0] * 256
    for k, byte in enumerate(pattern):
        masks[byte] |= 1 << k
    masks = torch.tensor(masks, dtype=torch.int32, device=device)
    hit = 1 << (len(pattern) - 1)

    parts, suppliers, orders_n = (
        part["p_partkey"].numel(),
        supplier["s_suppkey"].numel(),
        orders["o_orderkey"].numel(),
    )
    nations = nation["n_nationkey"].numel()
    names = len(nation.dictionary("n_name"))
    # Keys are dense from 1, except dbgen's sparse order keys: at most 4 x the order count. Every slot a
    # later kernel reads is written first (each lineitem key is a key of its table).
    part_ok = torch.empty(parts + 1, dtype=torch.int8, device=device)
    supp_name = torch.empty(suppliers + 1, dtype=torch.int32, device=device)
    order_year = torch.empty(4 * orders_n + 1, dtype=torch.int16, device=device)
    part_programs, supp_programs = triton.cdiv(parts, BLOCK), triton.cdiv(suppliers, BLOCK)
    width = part["p_name"].shape[1]
    grid = part_programs + supp_programs + triton.cdiv(orders_n, BLOCK)
    _q09_dims[(grid,)](
        part["p_partkey"],
        part["p_name"],
        part["p_name"].data_ptr() % 4,
        masks,
        hit,
        part_ok,
        parts,
        part_programs,
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        nation["n_nationkey"],
        nation["n_name"],
        nations,
        supp_name,
        suppliers,
        supp_programs,
        orders["o_orderkey"],
        orders["o_orderdate"],
        order_year,
        orders_n,
        WIDTH=width,
        NWORDS=max(0, (width - 3) // 4),
        NATIONS=triton.next_power_of_2(nations),
        BLOCK=BLOCK,
    )

    cost = torch.empty(4 * (parts + 1), dtype=torch.float64, device=device)
    supply = partsupp["ps_partkey"].numel()
    _q09_supply[(triton.cdiv(supply, BLOCK),)](
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_supplycost"],
        part_ok,
        cost,
        supply,
        suppliers,
        BLOCK=BLOCK,
    )

    groups = triton.next_power_of_2(names) * YEARS
    n = lineitem["l_partkey"].numel()
    programs = max(1, min(PROGRAMS, triton.cdiv(n, BLOCK)))
    partials = torch.empty(programs * groups, dtype=torch.float64, device=device)
    present = torch.empty(programs * groups, dtype=torch.int32, device=device)
    _q09_lines[(programs,)](
        lineitem["l_partkey"],
        lineitem["l_suppkey"],
        lineitem["l_orderkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        lineitem["l_quantity"],
        part_ok,
        cost,
        supp_name,
        order_year,
        partials,
        present,
        n,
        suppliers,
        FIRST_YEAR=FIRST_YEAR,
        YEARS=YEARS,
        GROUPS=groups,
        TILES=triton.cdiv(triton.cdiv(n, BLOCK), programs),
        BLOCK=BLOCK,
    )
    out = torch.empty(2 * groups, dtype=torch.float64, device=device)
    rows = 16
    _q09_total[(1,)](
        partials, present, out, programs, GROUPS=groups, CHUNKS=triton.cdiv(programs, rows), ROWS=rows
    )

    out = out.cpu()  # the one sync: the result's size
    sums, counts = out[:groups], out[groups:]
    ids = torch.nonzero(counts > 0).squeeze(1)
    return {
        "nation": ids // YEARS,
        "o_year": FIRST_YEAR + YEARS - 1 - ids % YEARS,
        "sum_profit": sums[ids].clone(),
    }

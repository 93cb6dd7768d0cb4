"""TPC-H Q9 in Triton (scope: full): key-indexed dimension arrays, one pass over lineitem, exact sums.

1. `_q09_dims`, one launch (8 warps) over three tables and the partial sums (each program takes a
   block of one):
   - part: LIKE '%color%' on the p_name byte matrix by shift-and (bitap), one row per thread (v2's 8
     rows a thread spilled ~10 KB of registers a thread to local memory): one state word per row, one
     look-up in a 256-entry mask table per byte, the bytes read 4 at a time; an int8 flag per part
     key, and a matching part's four supply records zeroed;
   - supplier: its nation's n_name code per supplier key (the 25 nation rows scanned);
   - orders: extract(year FROM o_orderdate) per order key (int16), by civil-from-days arithmetic;
   - the ROWS x GROUPS partial sums and row flags zeroed.
2. `_q09_supply`: (a) per partsupp row of a matching part a record (suppkey << 32 | ps_supplycost in
   cents) at slot 4 x partkey + i, where i (0..3) is the supplier's place among the part's four: dbgen
   puts part p's i-th supplier at (p + i x (S/4 + (p-1)/S)) mod S + 1, S the supplier count;
   (b) further programs pack the part flags into a bitmap (250 KB at SF10, held in L1 through the
   lineitem pass; the 2 MB of int8 flags missed L1 on most of the 60M look-ups).
3. `_q09_lines`, one program per block of lineitem (8 warps): the bitmap bit of every row (the
   columns are streamed with .cg loads, past L1); for a matching part its four records (one 32-byte
   sector), the supplier's name, the order's year; the amount in exact int64 units of 1/10000 (cents x
   hundredths - cost cents x quantity x 100), added by an integer atomic to its group in partial row
   pid % ROWS: nation code x year, numbered so ascending ids are the ORDER BY (nation, o_year DESC).
   No division on a line: the (partkey, suppkey) join compares suppkey with the four records' keys.
4. `_q09_total`: programs over group blocks sum the ROWS partial rows; the host reads the 2 x GROUPS
   values once (the only sync) and keeps the groups with rows.
Four launches, no memset (+1 small copy of the mask table), one sync.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024
PART_BLOCK = 256  # p_name rows per program: one a thread (8 warps)
CPU_BLOCK = 16384
ROWS = 64  # partial rows of the group sums; a lineitem program adds into row pid % ROWS
GROUP_BLOCK = 32  # groups per `_q09_total` program
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
def _supplier_slot(part, supp, suppliers, WRAP: tl.constexpr):
    # Which of part's four suppliers supp is (0..3), or -1. int32: keys stay far below 2**31.
    step = suppliers // 4 + (part - 1) // suppliers
    first = part % suppliers
    slot = tl.full(part.shape, -1, tl.int32)
    for i in tl.static_range(4):
        x = first + i * step
        if WRAP:  # S / 4 + (p-1) / S may exceed S (a tiny supplier table): a true remainder
            x = x % suppliers
        else:  # x < 4 S: three subtractions
            x = tl.where(x >= suppliers, x - suppliers, x)
            x = tl.where(x >= suppliers, x - suppliers, x)
            x = tl.where(x >= suppliers, x - suppliers, x)
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
def _q09_like(
    p_partkey,
    p_name,
    shift,
    masks,
    hit,
    part_ok,
    records,
    parts,
    pid,
    WIDTH: tl.constexpr,
    NWORDS: tl.constexpr,
    BLOCK: tl.constexpr,
):
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
    match = found != 0
    tl.store(part_ok + key, match.to(tl.int8), mask=inside)
    for i in tl.static_range(4):  # a matching part's supply records: `_q09_supply` fills them
        tl.store(records + key * 4 + i, tl.zeros([BLOCK], dtype=tl.int64), mask=inside & match)


@triton.jit
def _q09_names(
    s_suppkey,
    s_nationkey,
    n_nationkey,
    n_name,
    nations,
    supp_name,
    suppliers,
    pid,
    NATIONS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < suppliers
    key = tl.load(s_suppkey + offs, mask=inside, other=0)
    nation = tl.load(s_nationkey + offs, mask=inside, other=-1)
    name = tl.full([BLOCK], -1, tl.int32)  # -1: no such nation
    for j in tl.static_range(NATIONS):  # the 25 nation rows, one at a time
        nkey = tl.load(n_nationkey + j, mask=j < nations, other=-2)
        name = tl.where(nation == nkey, tl.load(n_name + j, mask=j < nations, other=-1), name)
    tl.store(supp_name + key, name, mask=inside)


@triton.jit
def _q09_dims(
    p_partkey,
    p_name,
    shift,
    masks,
    hit,
    part_ok,
    records,
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
    order_programs,
    partials,
    present,
    zeros,
    WIDTH: tl.constexpr,
    NWORDS: tl.constexpr,
    NATIONS: tl.constexpr,
    PART_BLOCK: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    if pid < part_programs:
        _q09_like(
            p_partkey, p_name, shift, masks, hit, part_ok, records, parts, pid, WIDTH, NWORDS, PART_BLOCK
        )
    elif pid < part_programs + supp_programs:
        _q09_names(
            s_suppkey,
            s_nationkey,
            n_nationkey,
            n_name,
            nations,
            supp_name,
            suppliers,
            pid - part_programs,
            NATIONS,
            PART_BLOCK,
        )
    elif pid < part_programs + supp_programs + order_programs:
        offs = (pid - part_programs - supp_programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < orders
        key = tl.load(o_orderkey + offs, mask=inside, other=0)
        days = tl.load(o_orderdate + offs, mask=inside, other=0)
        tl.store(order_year + key, _year(days).to(tl.int16), mask=inside)
    else:
        offs = (pid - part_programs - supp_programs - order_programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < zeros
        tl.store(partials + offs, tl.zeros([BLOCK], dtype=tl.int64), mask=inside)
        tl.store(present + offs, tl.zeros([BLOCK], dtype=tl.int32), mask=inside)


@triton.jit
def _q09_supply(
    ps_partkey,
    ps_suppkey,
    ps_supplycost,
    part_ok,
    records,
    n,
    suppliers,
    supply_programs,
    bits,
    keys,
    words,
    WRAP: tl.constexpr,
    PACK: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    if pid < supply_programs:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        part = tl.load(ps_partkey + offs, mask=inside, other=1)
        supp = tl.load(ps_suppkey + offs, mask=inside, other=0)
        c = tl.load(ps_supplycost + offs, mask=inside, other=0.0)
        ok = tl.load(part_ok + part, mask=inside, other=0) != 0
        slot = _supplier_slot(part.to(tl.int32), supp.to(tl.int32), suppliers, WRAP)
        keep = inside & ok & (slot >= 0)
        cents = (c * 100.0 + 0.5).to(tl.int64)  # the decimal's nearest double x 100, rounded: exact
        tl.store(records + part * 4 + slot, (supp << 32) | cents, mask=keep)
    else:
        # Bit k & 31 of word k >> 5 = part key k matches (key 0 is no part).
        w = (pid - supply_programs) * PACK + tl.arange(0, PACK)
        word = tl.zeros([PACK], dtype=tl.int32)
        for b in tl.static_range(32):
            key = w * 32 + b
            flag = tl.load(part_ok + key, mask=(key > 0) & (key < keys), other=0).to(tl.int32)
            word = word | (flag << b)
        tl.store(bits + w, word, mask=w < words)


@triton.jit
def _q09_lines(
    l_partkey,
    l_suppkey,
    l_orderkey,
    l_extendedprice,
    l_discount,
    l_quantity,
    bits,
    records,
    supp_name,
    order_year,
    partials,
    present,
    n,
    rows,
    FIRST_YEAR: tl.constexpr,
    YEARS: tl.constexpr,
    GROUPS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    # Whole columns are read (mask `inside`): the bandwidth floor counts all their bytes. .cg: past L1,
    # which keeps the part bitmap.
    part = tl.load(l_partkey + offs, mask=inside, other=0, cache_modifier=".cg")
    supp = tl.load(l_suppkey + offs, mask=inside, other=0, cache_modifier=".cg")
    order = tl.load(l_orderkey + offs, mask=inside, other=0, cache_modifier=".cg")
    price = tl.load(l_extendedprice + offs, mask=inside, other=0.0, cache_modifier=".cg")
    disc = tl.load(l_discount + offs, mask=inside, other=0.0, cache_modifier=".cg")
    qty = tl.load(l_quantity + offs, mask=inside, other=0.0, cache_modifier=".cg")
    word = tl.load(bits + (part >> 5), mask=inside, other=0)
    ok = inside & (((word >> (part & 31).to(tl.int32)) & 1) != 0)
    # The part's four records (one 32-byte sector): the one whose suppkey is the line's gives the cost.
    cents = tl.zeros([BLOCK], dtype=tl.int64)
    joined = tl.zeros([BLOCK], dtype=tl.int1)
    for i in tl.static_range(4):
        record = tl.load(records + part * 4 + i, mask=ok, other=0)
        same = (record >> 32) == supp  # other=0: suppkey 0 is no line's
        cents = tl.where(same, record & 0x7FFFFFFF, cents)  # cents < 2**31
        joined = joined | same
    name = tl.load(supp_name + supp, mask=ok, other=-1)
    year = tl.load(order_year + order, mask=ok, other=0).to(tl.int32) - FIRST_YEAR
    keep = ok & joined & (name >= 0) & (year >= 0) & (year < YEARS)
    group = name * YEARS + (YEARS - 1 - year)
    # Units of 1/10000: price cents x (100 - discount hundredths) - cost cents x quantity x 100.
    price_cents = (price * 100.0 + 0.5).to(tl.int64)  # each decimal's nearest double, rounded back
    hundredths = (disc * 100.0 + 0.5).to(tl.int64)
    amount = price_cents * (100 - hundredths) - cents * (qty + 0.5).to(tl.int64) * 100
    at = (pid % rows) * GROUPS + group
    tl.atomic_add(partials + at, amount, mask=keep, sem="relaxed")
    tl.store(present + at, tl.full([BLOCK], 1, tl.int32), mask=keep)


@triton.jit
def _q09_total(
    partials,
    present,
    out,
    rows,
    GROUPS: tl.constexpr,
    GROUP_BLOCK: tl.constexpr,
    CHUNKS: tl.constexpr,
    CHUNK: tl.constexpr,
):
    g = tl.program_id(0) * GROUP_BLOCK + tl.arange(0, GROUP_BLOCK)
    r = tl.arange(0, CHUNK)
    total = tl.zeros([GROUP_BLOCK], dtype=tl.int64)
    count = tl.zeros([GROUP_BLOCK], dtype=tl.int32)
    for chunk in range(0, CHUNKS):
        row = chunk * CHUNK + r
        at = row[:, None] * GROUPS + g[None, :]
        inside = (row < rows)[:, None]
        total += tl.sum(tl.load(partials + at, mask=inside, other=0), axis=0)
        count += tl.sum(tl.load(present + at, mask=inside, other=0), axis=0)
    tl.store(out + g, total.to(tl.float64) / 10000.0)
    tl.store(out + GROUPS + g, count.to(tl.float64))


def run_query(tables, color="green"):
    part, supplier, lineitem = tables["part"], tables["supplier"], tables["lineitem"]
    partsupp, orders, nation = tables["partsupp"], tables["orders"], tables["nation"]
    device = lineitem["l_partkey"].device
    # Triton's CPU interpreter pays per operation and program, not per row: fewer, larger programs there
    # (the same code).
    cuda = device.type == "cuda"
    block, part_block = (BLOCK, PART_BLOCK) if cuda else (CPU_BLOCK, CPU_BLOCK)
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
    groups = triton.next_power_of_2(names) * YEARS
    n = lineitem["l_partkey"].numel()
    line_programs = triton.cdiv(n, block)
    rows = max(1, min(ROWS, line_programs))
    # Keys are dense from 1, except dbgen's sparse order keys: at most 4 x the order count. Every slot a
    # later kernel reads is written first (each lineitem key is a key of its table; a matching part's
    # four records are zeroed, then filled).
    part_ok = torch.empty(parts + 1, dtype=torch.int8, device=device)
    records = torch.empty(4 * (parts + 1), dtype=torch.int64, device=device)
    supp_name = torch.empty(suppliers + 1, dtype=torch.int32, device=device)
    order_year = torch.empty(4 * orders_n + 1, dtype=torch.int16, device=device)
    partials = torch.empty(rows * groups, dtype=torch.int64, device=device)
    present = torch.empty(rows * groups, dtype=torch.int32, device=device)
    part_programs, supp_programs = triton.cdiv(parts, part_block), triton.cdiv(suppliers, part_block)
    order_programs = triton.cdiv(orders_n, block)
    width = part["p_name"].shape[1]
    grid = part_programs + supp_programs + order_programs + triton.cdiv(rows * groups, block)
    _q09_dims[(grid,)](
        part["p_partkey"],
        part["p_name"],
        part["p_name"].data_ptr() % 4,
        masks,
        hit,
        part_ok,
        records,
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
        order_programs,
        partials,
        present,
        rows * groups,
        WIDTH=width,
        NWORDS=max(0, (width - 3) // 4),
        NATIONS=triton.next_power_of_2(nations),
        PART_BLOCK=part_block,
        BLOCK=block,
        num_warps=8,
    )

    words = (parts + 1 + 31) // 32
    bits = torch.empty(words, dtype=torch.int32, device=device)
    supply = partsupp["ps_partkey"].numel()
    supply_programs = triton.cdiv(supply, block)
    # dbgen's slot i is (p + i x step) mod S with step = S / 4 + (p - 1) / S: below S, three subtractions
    # reduce it; a true remainder only when step can pass S (keys at most `parts`).
    wrap = suppliers > 0 and suppliers // 4 + max(parts - 1, 0) // suppliers > suppliers
    _q09_supply[(supply_programs + triton.cdiv(words, part_block),)](
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        partsupp["ps_supplycost"],
        part_ok,
        records,
        supply,
        max(suppliers, 1),
        supply_programs,
        bits,
        parts + 1,
        words,
        WRAP=wrap,
        PACK=part_block,  # bitmap words a program: one a thread
        BLOCK=block,
    )

    if line_programs > 0:
        _q09_lines[(line_programs,)](
            lineitem["l_partkey"],
            lineitem["l_suppkey"],
            lineitem["l_orderkey"],
            lineitem["l_extendedprice"],
            lineitem["l_discount"],
            lineitem["l_quantity"],
            bits,
            records,
            supp_name,
            order_year,
            partials,
            present,
            n,
            rows,
            FIRST_YEAR=FIRST_YEAR,
            YEARS=YEARS,
            GROUPS=groups,
            BLOCK=block,
            num_warps=8,  # 4 rows a thread: 80 registers, 3 programs (24 warps) an SM
        )
    out = torch.empty(2 * groups, dtype=torch.float64, device=device)
    chunk, group_block = 16, min(GROUP_BLOCK, groups)
    _q09_total[(groups // group_block,)](
        partials,
        present,
        out,
        rows,
        GROUPS=groups,
        GROUP_BLOCK=group_block,
        CHUNKS=triton.cdiv(rows, chunk),
        CHUNK=chunk,
    )

    out = out.cpu()  # the one sync: the result's size
    sums, counts = out[:groups], out[groups:]
    ids = torch.nonzero(counts > 0).squeeze(1)
    return {
        "nation": ids // YEARS,
        "o_year": FIRST_YEAR + YEARS - 1 - ids % YEARS,
        "sum_profit": sums[ids].clone(),
    }

"""TPC-H Q8 in Triton (scope: full): per-key flags, a year slot per order, one pass over lineitem.

Every dimension collapses to a small direct-address table before lineitem is read (keys are dense,
except dbgen's sparse order keys, which stay under 4 x the order count):

1. `_q08_dims` (one launch, every program does three strided loops): a flag per customer key (its
   nation lies in :region), per part key (p_type = :type) and per supplier key (its nation is
   :nation). Nation and region are 25 and 5 rows: each program reads them into registers and looks a
   tile's nation keys up with one [tile, 32] comparison, so no launch is spent on them.
2. `_q08_orders`: per order key, its year slot (0: filtered out, 1: 1995, 2: 1996) for orders in the
   two years whose customer is flagged.
3. `_q08_lines`: one strided pass over lineitem; rows of flagged parts (1 type in 150) gather their
   order's slot and supplier's flag; per program, the two years' totals, :nation's totals and row
   counts (no atomics on four hot addresses).
4. `_q08_final`: sums the programs' partials and writes the years with rows, in order, with their
   share, and how many there are: the one host sync reads that count to size the result.
"""

import torch
import triton
import triton.language as tl

from evaluator.tpch.encoding import date_to_days

BLOCK = 1024
DIM_BLOCK = 256  # rows per tile in the dimension pass: each is compared with 32 nations at once
PROGRAMS = 528  # 4 per H200 multiprocessor: one wave at up to 128 registers a thread
CPU_PROGRAMS = 8  # Triton's interpreter runs programs one after another: few, long ones are faster
NATION_BLOCK = 32  # nation has 25 rows
REGION_BLOCK = 8  # region has 5


@triton.jit
def _q08_dims(
    c_custkey,
    c_nationkey,
    n_customers,
    customer_ok,
    p_partkey,
    p_type,
    n_parts,
    part_ok,
    part_type,
    s_suppkey,
    s_nationkey,
    n_suppliers,
    supplier_ok,
    n_nationkey,
    n_name,
    n_regionkey,
    nations,
    r_regionkey,
    r_name,
    regions,
    nation,
    region,
    CUSTOMER_TILES: tl.constexpr,
    PART_TILES: tl.constexpr,
    SUPPLIER_TILES: tl.constexpr,
    NATION_BLOCK: tl.constexpr,
    REGION_BLOCK: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    r = tl.arange(0, REGION_BLOCK)
    r_keys = tl.load(r_regionkey + r, mask=r < regions, other=-1)
    r_names = tl.load(r_name + r, mask=r < regions, other=-1)
    # The key of the region named :region (names are unique), -1 when none is.
    target = tl.max(tl.where((r < regions) & (r_names == region), r_keys, -1), axis=0)
    k = tl.arange(0, NATION_BLOCK)
    k_inside = k < nations
    n_keys = tl.load(n_nationkey + k, mask=k_inside, other=-1)
    in_region = k_inside & (tl.load(n_regionkey + k, mask=k_inside, other=-1) == target) & (target >= 0)
    is_nation = k_inside & (tl.load(n_name + k, mask=k_inside, other=-1) == nation)

    for tile in range(0, CUSTOMER_TILES):
        offs = (pid + tile * programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n_customers
        key = tl.load(c_custkey + offs, mask=inside, other=0)
        nk = tl.load(c_nationkey + offs, mask=inside, other=-2)
        ok = tl.max(((nk[:, None] == n_keys[None, :]) & in_region[None, :]).to(tl.int8), axis=1)
        tl.store(customer_ok + key, ok, mask=inside)
    for tile in range(0, PART_TILES):
        offs = (pid + tile * programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n_parts
        key = tl.load(p_partkey + offs, mask=inside, other=0)
        t = tl.load(p_type + offs, mask=inside, other=-1)
        tl.store(part_ok + key, (t == part_type).to(tl.int8), mask=inside)
    for tile in range(0, SUPPLIER_TILES):
        offs = (pid + tile * programs) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n_suppliers
        key = tl.load(s_suppkey + offs, mask=inside, other=0)
        nk = tl.load(s_nationkey + offs, mask=inside, other=-2)
        ok = tl.max(((nk[:, None] == n_keys[None, :]) & is_nation[None, :]).to(tl.int8), axis=1)
        tl.store(supplier_ok + key, ok, mask=inside)


@triton.jit
def _q08_orders(
    o_orderkey,
    o_custkey,
    o_orderdate,
    customer_ok,
    order_slot,
    n,
    date_1995,
    date_1996,
    date_hi,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        key = tl.load(o_orderkey + offs, mask=inside, other=0)
        cust = tl.load(o_custkey + offs, mask=inside, other=0)
        od = tl.load(o_orderdate + offs, mask=inside, other=0)
        in_years = (od >= date_1995) & (od <= date_hi)
        ok = in_years & (tl.load(customer_ok + cust, mask=inside & in_years, other=0) != 0)
        slot = tl.where(ok, 1 + (od >= date_1996).to(tl.int8), 0).to(tl.int8)
        # Every l_orderkey is an order's key: slots no order writes are never read.
        tl.store(order_slot + key, slot, mask=inside)


@triton.jit
def _q08_lines(
    l_partkey,
    l_suppkey,
    l_orderkey,
    l_extendedprice,
    l_discount,
    part_ok,
    order_slot,
    supplier_ok,
    partials,
    counts,
    n,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    total_1 = tl.zeros([BLOCK], dtype=tl.float64)
    total_2 = tl.zeros([BLOCK], dtype=tl.float64)
    nation_1 = tl.zeros([BLOCK], dtype=tl.float64)
    nation_2 = tl.zeros([BLOCK], dtype=tl.float64)
    rows_1 = tl.zeros([BLOCK], dtype=tl.int64)
    rows_2 = tl.zeros([BLOCK], dtype=tl.int64)
    # A constant trip count (one compile per table size): Triton's interpreter cannot loop to a
    # run-time bound.
    for tile in range(0, TILES):
        offs = (pid + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        # Whole columns are read (mask `inside`): the harness's bandwidth floor counts all their bytes.
        pk = tl.load(l_partkey + offs, mask=inside, other=0)
        sk = tl.load(l_suppkey + offs, mask=inside, other=0)
        ok_ = tl.load(l_orderkey + offs, mask=inside, other=0)
        p = tl.load(l_extendedprice + offs, mask=inside, other=0.0)
        disc = tl.load(l_discount + offs, mask=inside, other=0.0)
        part = inside & (tl.load(part_ok + pk, mask=inside, other=0) != 0)
        slot = tl.load(order_slot + ok_, mask=part, other=0)
        from_nation = tl.load(supplier_ok + sk, mask=part & (slot > 0), other=0) != 0
        volume = p * (1 - disc)
        in_1 = part & (slot == 1)
        in_2 = part & (slot == 2)
        total_1 += tl.where(in_1, volume, 0.0)
        total_2 += tl.where(in_2, volume, 0.0)
        nation_1 += tl.where(in_1 & from_nation, volume, 0.0)
        nation_2 += tl.where(in_2 & from_nation, volume, 0.0)
        rows_1 += in_1.to(tl.int64)
        rows_2 += in_2.to(tl.int64)
    tl.store(partials + pid * 4, tl.sum(total_1, axis=0))
    tl.store(partials + pid * 4 + 1, tl.sum(total_2, axis=0))
    tl.store(partials + pid * 4 + 2, tl.sum(nation_1, axis=0))
    tl.store(partials + pid * 4 + 3, tl.sum(nation_2, axis=0))
    tl.store(counts + pid * 2, tl.sum(rows_1, axis=0))
    tl.store(counts + pid * 2 + 1, tl.sum(rows_2, axis=0))


@triton.jit
def _q08_final(partials, counts, programs, out_year, out_share, found, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    inside = offs < programs
    total_1 = tl.sum(tl.load(partials + offs * 4, mask=inside, other=0.0), axis=0)
    total_2 = tl.sum(tl.load(partials + offs * 4 + 1, mask=inside, other=0.0), axis=0)
    nation_1 = tl.sum(tl.load(partials + offs * 4 + 2, mask=inside, other=0.0), axis=0)
    nation_2 = tl.sum(tl.load(partials + offs * 4 + 3, mask=inside, other=0.0), axis=0)
    has_1 = tl.sum(tl.load(counts + offs * 2, mask=inside, other=0), axis=0) > 0
    has_2 = tl.sum(tl.load(counts + offs * 2 + 1, mask=inside, other=0), axis=0) > 0
    # A year exists only when some row reached it; 1996 follows 1995 when both do.
    tl.store(out_year, tl.where(has_1, 1995, 1996).to(tl.int64))
    tl.store(out_share, tl.where(has_1, nation_1 / total_1, nation_2 / total_2))
    tl.store(out_year + 1, tl.full([], 1996, tl.int64))
    tl.store(out_share + 1, nation_2 / total_2)
    tl.store(found, has_1.to(tl.int32) + has_2.to(tl.int32))


def _programs(n: int, device: torch.device, block: int = BLOCK) -> int:
    return max(1, min(PROGRAMS if device.type == "cuda" else CPU_PROGRAMS, triton.cdiv(n, block)))


def run_query(tables, nation="BRAZIL", region="AMERICA", type="ECONOMY ANODIZED STEEL"):
    part, supplier, lineitem, orders, customer, nation_t, region_t = (
        tables[t] for t in ("part", "supplier", "lineitem", "orders", "customer", "nation", "region")
    )
    device = lineitem["l_orderkey"].device

    def code(table, column, value):
        names = table.dictionary(column)
        return names.index(value) if value in names else -1

    n_customers, n_parts, n_suppliers = customer.rows, part.rows, supplier.rows
    n_orders, lines = orders.rows, lineitem.rows
    # Customer, part and supplier keys are dense 1..N: every slot a later pass reads is written.
    customer_ok = torch.empty(n_customers + 1, dtype=torch.int8, device=device)
    part_ok = torch.empty(n_parts + 1, dtype=torch.int8, device=device)
    supplier_ok = torch.empty(n_suppliers + 1, dtype=torch.int8, device=device)
    programs = _programs(max(n_customers, n_parts), device, DIM_BLOCK)
    per_program = DIM_BLOCK * programs
    _q08_dims[(programs,)](
        customer["c_custkey"],
        customer["c_nationkey"],
        n_customers,
        customer_ok,
        part["p_partkey"],
        part["p_type"],
        n_parts,
        part_ok,
        code(part, "p_type", type),
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        n_suppliers,
        supplier_ok,
        nation_t["n_nationkey"],
        nation_t["n_name"],
        nation_t["n_regionkey"],
        nation_t.rows,
        region_t["r_regionkey"],
        region_t["r_name"],
        region_t.rows,
        code(nation_t, "n_name", nation),
        code(region_t, "r_name", region),
        CUSTOMER_TILES=triton.cdiv(n_customers, per_program),
        PART_TILES=triton.cdiv(n_parts, per_program),
        SUPPLIER_TILES=triton.cdiv(n_suppliers, per_program),
        NATION_BLOCK=NATION_BLOCK,
        REGION_BLOCK=REGION_BLOCK,
        BLOCK=DIM_BLOCK,
    )
    # dbgen's sparse order keys stay under 4 x the order count.
    order_slot = torch.empty(4 * n_orders + 1, dtype=torch.int8, device=device)
    programs = _programs(n_orders, device)
    _q08_orders[(programs,)](
        orders["o_orderkey"],
        orders["o_custkey"],
        orders["o_orderdate"],
        customer_ok,
        order_slot,
        n_orders,
        date_to_days(1995, 1, 1),
        date_to_days(1996, 1, 1),
        date_to_days(1996, 12, 31),
        TILES=triton.cdiv(n_orders, BLOCK * programs),
        BLOCK=BLOCK,
    )
    programs = _programs(lines, device)
    partials = torch.empty(programs * 4, dtype=torch.float64, device=device)
    counts = torch.empty(programs * 2, dtype=torch.int64, device=device)
    _q08_lines[(programs,)](
        lineitem["l_partkey"],
        lineitem["l_suppkey"],
        lineitem["l_orderkey"],
        lineitem["l_extendedprice"],
        lineitem["l_discount"],
        part_ok,
        order_slot,
        supplier_ok,
        partials,
        counts,
        lines,
        TILES=triton.cdiv(lines, BLOCK * programs),
        BLOCK=BLOCK,
    )
    out_year = torch.empty(2, dtype=torch.int64, device=device)
    out_share = torch.empty(2, dtype=torch.float64, device=device)
    found = torch.empty(1, dtype=torch.int32, device=device)
    _q08_final[(1,)](
        partials, counts, programs, out_year, out_share, found, BLOCK=triton.next_power_of_2(programs)
    )
    years = int(found.item())  # the one host sync: the result's size
    return {"o_year": out_year[:years], "mkt_share": out_share[:years]}

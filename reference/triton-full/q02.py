"""TPC-H Q2 in Triton (scope: full): key-indexed flags, a per-part minimum by atomics, one top-100 program.

SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = :size AND p_type LIKE '%:type'
  AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = ':region'
  AND ps_supplycost = (SELECT min(ps_supplycost) FROM partsupp, supplier, nation, region
                       WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
                         AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = ':region')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100

The correlated MIN only matters for parts that pass the part filter, and its rows are exactly the outer
query's rows of those parts. Six kernels, one sync:
1. flags: per part key its row when the part passes (-1 otherwise); per supplier key its row, nation-name
   code and whether its nation is in the region (the 25 nations and 5 regions compared in registers).
2. partsupp pass: atomic min of the cost per passing part (costs are >= 0, so the float64 bits order as
   int64 do).
3. partsupp pass: rows whose cost is their part's minimum (about 4.7K at SF10), each program compacting
   its own run of rows into its own region (a shared counter serialised thousands of tile atomics).
4. gather: the regions packed into one array of at most CAP rows, with each row's (acctbal DESC,
   n_name) key packed into one integer.
5. rank: each survivor counts the survivors with a smaller key (one program per 64 survivors); those
   ranked under 100 are the rows tied with the 100th or better (a one-program bisection over the keys
   took 160 us on the H200, 31 dependent block reductions).
6. one program ranks those (at most CAND) by comparing (key, s_name bytes, p_partkey) pairwise and writes
   the first 100 at their ranks.
A survivor count over CAP or a tie set over CAND (neither happens up to SF10) takes a PyTorch path.
"""

import torch
import triton
import triton.language as tl

LIMIT = 100
BLOCK = 1024
PROGRAMS = 264  # 2 per H200 multiprocessor
CAP = 8192  # survivors the top-100 program sorts
CAND = 128  # rows tied with the 100th or better that it ranks by name
CENTS = 1 << 23  # acctbal cents offset: the packed key holds -83886.08 .. 83886.07


@triton.jit
def _q02_flags(
    p_partkey,
    p_type,
    p_size,
    s_suppkey,
    s_nationkey,
    n_nationkey,
    n_name,
    n_regionkey,
    r_regionkey,
    r_name,
    type_ok,
    part_row,
    supp_info,
    mincost,
    parts,
    suppliers,
    nations,
    regions,
    size,
    region,
    TILES: tl.constexpr,
    SUPP_TILES: tl.constexpr,
    BLOCK: tl.constexpr,
    SBLOCK: tl.constexpr,
    NB: tl.constexpr,
    RB: tl.constexpr,
):
    # Nations in the region, recomputed by every program (25 x 5 compares).
    nb = tl.arange(0, NB)
    rb = tl.arange(0, RB)
    nkey = tl.load(n_nationkey + nb, mask=nb < nations, other=-1)
    nreg = tl.load(n_regionkey + nb, mask=nb < nations, other=-1)
    ncode = tl.load(n_name + nb, mask=nb < nations, other=0)
    rkey = tl.load(r_regionkey + rb, mask=rb < regions, other=-2)
    rname = tl.load(r_name + rb, mask=rb < regions, other=-1)
    in_region = tl.max(((nreg[:, None] == rkey[None, :]) & (rname[None, :] == region)).to(tl.int32), axis=1)
    for tile in range(0, TILES):
        offs = (tl.program_id(0) + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < parts
        key = tl.load(p_partkey + offs, mask=inside, other=0)
        ok = (tl.load(p_size + offs, mask=inside, other=0) == size) & (
            tl.load(type_ok + tl.load(p_type + offs, mask=inside, other=0), mask=inside, other=0) != 0
        )
        tl.store(part_row + key, tl.where(ok, offs, -1), mask=inside)
        tl.store(mincost + key, 0x7FFFFFFFFFFFFFFF, mask=inside & ok)
    for tile in range(0, SUPP_TILES):
        offs = (tl.program_id(0) + tile * tl.num_programs(0)) * SBLOCK + tl.arange(0, SBLOCK)
        inside = offs < suppliers
        key = tl.load(s_suppkey + offs, mask=inside, other=0)
        snat = tl.load(s_nationkey + offs, mask=inside, other=-3)
        match = snat[:, None] == nkey[None, :]
        ok = tl.max((match & (in_region[None, :] != 0)).to(tl.int32), axis=1)
        code = tl.sum(tl.where(match, ncode[None, :], 0), axis=1)
        # row << 6 | n_name code << 1 | in region
        tl.store(supp_info + key, (offs.to(tl.int64) << 6) | (code.to(tl.int64) << 1) | ok, mask=inside)


@triton.jit
def _q02_min(
    ps_partkey,
    ps_suppkey,
    ps_supplycost,
    part_row,
    supp_info,
    mincost,
    n,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    for tile in range(0, TILES):
        offs = (tl.program_id(0) + tile * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        pk = tl.load(ps_partkey + offs, mask=inside, other=0)
        sk = tl.load(ps_suppkey + offs, mask=inside, other=0)
        # Whole columns are read (mask `inside`): the floor counts every byte.
        cost = tl.load(ps_supplycost + offs, mask=inside, other=0.0).to(tl.int64, bitcast=True)
        ok = inside & (tl.load(part_row + pk, mask=inside, other=-1) >= 0)
        ok = ok & ((tl.load(supp_info + sk, mask=ok, other=0) & 1) != 0)
        tl.atomic_min(mincost + pk, cost, mask=ok, sem="relaxed")


@triton.jit
def _q02_rows(
    ps_partkey,
    ps_suppkey,
    ps_supplycost,
    part_row,
    supp_info,
    mincost,
    region_rows,
    region_count,
    n,
    TILES: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # Each program compacts its own run of rows into its own region (no shared counter: one atomic per
    # tile on a single address serialises thousands of tiles).
    pid = tl.program_id(0)
    region = pid * (TILES * BLOCK)
    found = tl.zeros([], dtype=tl.int32)
    for tile in range(0, TILES):
        offs = region + tile * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        pk = tl.load(ps_partkey + offs, mask=inside, other=0)
        sk = tl.load(ps_suppkey + offs, mask=inside, other=0)
        cost = tl.load(ps_supplycost + offs, mask=inside, other=0.0).to(tl.int64, bitcast=True)
        ok = inside & (tl.load(part_row + pk, mask=inside, other=-1) >= 0)
        ok = ok & ((tl.load(supp_info + sk, mask=ok, other=0) & 1) != 0)
        ok = ok & (tl.load(mincost + pk, mask=ok, other=0) == cost)
        rank = tl.cumsum(ok.to(tl.int32), axis=0)
        tl.store(region_rows + region + found + rank - 1, offs, mask=ok)
        found += tl.max(rank, axis=0)
    tl.store(region_count + pid, found)


@triton.jit
def _primary(supp_info, s_acctbal, sk, live, CENTS: tl.constexpr):
    """(acctbal DESC, n_name ASC) as one ascending integer; the supplier's row."""
    info = tl.load(supp_info + sk, mask=live, other=0)
    srow = info >> 6
    cents = tl.floor(tl.load(s_acctbal + srow, mask=live, other=0.0) * 100 + 0.5).to(tl.int64)
    return ((2 * CENTS - 1 - (cents + CENTS)) << 5) | ((info >> 1) & 31), info


@triton.jit
def _q02_gather(
    region_rows,
    region_count,
    programs,
    ps_suppkey,
    supp_info,
    s_acctbal,
    rows,
    prim,
    found,
    REGION: tl.constexpr,
    STEP: tl.constexpr,
    PB: tl.constexpr,
    CAP: tl.constexpr,
    CENTS: tl.constexpr,
):
    # Program p copies region p's survivors to rows[start_p:], start_p = the counts of regions before p.
    pid = tl.program_id(0)
    p = tl.arange(0, PB)
    counts = tl.load(region_count + p, mask=p < programs, other=0)
    start = tl.sum(tl.where(p < pid, counts, 0), axis=0)
    mine = tl.sum(tl.where(p == pid, counts, 0), axis=0)
    if pid == 0:
        tl.store(found, tl.sum(counts, axis=0))
    for chunk in range(0, REGION // STEP):
        if chunk * STEP < mine:
            k = chunk * STEP + tl.arange(0, STEP)
            live = (k < mine) & (start + k < CAP)
            row = tl.load(region_rows + pid * REGION + k, mask=live, other=0)
            key, _ = _primary(
                supp_info, s_acctbal, tl.load(ps_suppkey + row, mask=live, other=0), live, CENTS
            )
            tl.store(rows + start + k, row, mask=live)
            tl.store(prim + start + k, key, mask=live)


@triton.jit
def _q02_rank(prim, found, ranks, CAP: tl.constexpr, RB: tl.constexpr, CHUNK: tl.constexpr):
    # Rank of each survivor's primary key among all survivors (strictly smaller keys): those ranked under
    # 100 are the rows tied with the 100th or better.
    count = tl.minimum(tl.load(found), CAP)
    start = tl.program_id(0) * RB
    if start < count:
        i = start + tl.arange(0, RB)
        mine = tl.load(prim + i, mask=i < count, other=0)
        rank = tl.zeros([RB], dtype=tl.int32)
        for chunk in range(0, CAP // CHUNK):
            if chunk * CHUNK < count:
                j = chunk * CHUNK + tl.arange(0, CHUNK)
                other = tl.load(prim + j, mask=j < count, other=0x7FFFFFFFFFFFFFFF)
                rank += tl.sum((other[None, :] < mine[:, None]).to(tl.int32), axis=1)
        tl.store(ranks + i, rank, mask=i < count)


@triton.jit
def _q02_top(
    rows,
    prim,
    ranks,
    found,
    ps_partkey,
    ps_suppkey,
    part_row,
    supp_info,
    s_acctbal,
    s_name,
    p_mfgr,
    scratch,
    out_acctbal,
    out_supplier,
    out_nation,
    out_partkey,
    out_mfgr,
    status,
    CAP: tl.constexpr,
    CAND: tl.constexpr,
    LIMIT: tl.constexpr,
    NAME: tl.constexpr,
):
    count = tl.load(found)
    idx = tl.arange(0, CAP)
    chosen = (idx < count) & (tl.load(ranks + idx, mask=idx < count, other=LIMIT) < LIMIT)
    cands = tl.sum(chosen.to(tl.int32), axis=0)
    slot = tl.cumsum(chosen.to(tl.int32), axis=0) - 1
    tl.store(scratch + slot, idx, mask=chosen & (slot < CAND))
    tl.debug_barrier()
    c = tl.arange(0, CAND)
    ok = c < cands
    cidx = tl.load(scratch + c, mask=ok, other=0)
    cprim = tl.load(prim + cidx, mask=ok, other=0)
    crow = tl.load(rows + cidx, mask=ok, other=0)
    csk = tl.load(ps_suppkey + crow, mask=ok, other=0)
    cpk = tl.load(ps_partkey + crow, mask=ok, other=0)
    cinfo = tl.load(supp_info + csk, mask=ok, other=0)
    csrow = cinfo >> 6
    # before[i, j]: candidate j comes before candidate i in (primary, s_name, p_partkey, index) order.
    decided = cprim[:, None] != cprim[None, :]
    before = cprim[None, :] < cprim[:, None]
    for b in tl.static_range(NAME):
        ni = tl.load(s_name + csrow * NAME + b, mask=ok, other=0)
        differ = (ni[:, None] != ni[None, :]) & (decided == 0)
        before = before | (differ & (ni[None, :] < ni[:, None]))
        decided = decided | differ
    tie = (cpk[None, :] < cpk[:, None]) | ((cpk[None, :] == cpk[:, None]) & (c[None, :] < c[:, None]))
    before = before | ((decided == 0) & tie)
    rank = tl.sum((before & ok[None, :]).to(tl.int32), axis=1)
    keep = ok & (rank < LIMIT)
    prow = tl.load(part_row + cpk, mask=ok, other=0)
    tl.store(out_acctbal + rank, tl.load(s_acctbal + csrow, mask=keep, other=0.0), mask=keep)
    tl.store(out_supplier + rank, csrow, mask=keep)
    tl.store(out_nation + rank, (cinfo >> 1) & 31, mask=keep)
    tl.store(out_partkey + rank, cpk, mask=keep)
    tl.store(out_mfgr + rank, tl.load(p_mfgr + prow, mask=keep, other=0).to(tl.int64), mask=keep)
    tl.store(status, tl.minimum(count, LIMIT))
    tl.store(status + 1, ((count > CAP) | (cands > CAND)).to(tl.int32))


def _slow_path(tables, part_row, supp_info, mincost, type_ok, size, region):
    """More survivors than CAP or ties than CAND (not in TPC-H data up to SF10): PyTorch on the survivors."""
    partsupp, supplier, part = tables["partsupp"], tables["supplier"], tables["part"]
    pk, sk = partsupp["ps_partkey"], partsupp["ps_suppkey"]
    cost = partsupp["ps_supplycost"].view(torch.int64)
    ok = (part_row[pk] >= 0) & ((supp_info[sk] & 1) != 0)
    ok &= mincost[pk] == cost
    rows = ok.nonzero().squeeze(1)
    info = supp_info[sk[rows]]
    srow, code, partkey = info >> 6, (info >> 1) & 31, pk[rows]
    acct = supplier["s_acctbal"][srow]
    order = torch.arange(rows.numel(), device=rows.device)
    names = supplier["s_name"][srow].long()
    # Stable sorts from the last key to the first: p_partkey, s_name bytes, n_name, acctbal DESC.
    for values, descending in (
        [(partkey, False)]
        + [(names[:, b], False) for b in range(names.shape[1] - 1, -1, -1)]
        + [
            (code, False),
            (acct, True),
        ]
    ):
        order = order[torch.sort(values[order], stable=True, descending=descending).indices]
    top = order[:LIMIT]
    return {
        "s_acctbal": acct[top],
        "n_name": code[top],
        "p_partkey": partkey[top],
        "p_mfgr": part["p_mfgr"][part_row[partkey[top]]].long(),
        **{name: srow[top] for name in ("s_name", "s_address", "s_phone", "s_comment")},
    }


def run_query(tables, size: int = 15, type: str = "BRASS", region: str = "EUROPE"):
    part, supplier, partsupp = tables["part"], tables["supplier"], tables["partsupp"]
    nation, regions = tables["nation"], tables["region"]
    device = part["p_type"].device
    type_ok = torch.tensor(
        [t.endswith(type) for t in part.dictionary("p_type")], dtype=torch.int8, device=device
    )
    names = regions.dictionary("r_name")
    region_code = names.index(region) if region in names else -1
    parts, suppliers = part["p_partkey"].numel(), supplier["s_suppkey"].numel()
    # Part and supplier keys are dense 1..N: arrays indexed by key.
    part_row = torch.empty(part.rows + 1, dtype=torch.int32, device=device)
    supp_info = torch.zeros(supplier.rows + 1, dtype=torch.int64, device=device)
    mincost = torch.empty(part.rows + 1, dtype=torch.int64, device=device)
    part_row[:1] = -1
    wide = max(parts, suppliers)
    programs = max(1, min(PROGRAMS if device.type == "cuda" else 4, triton.cdiv(wide, BLOCK)))
    _q02_flags[(programs,)](
        part["p_partkey"],
        part["p_type"],
        part["p_size"],
        supplier["s_suppkey"],
        supplier["s_nationkey"],
        nation["n_nationkey"],
        nation["n_name"],
        nation["n_regionkey"],
        regions["r_regionkey"],
        regions["r_name"],
        type_ok,
        part_row,
        supp_info,
        mincost,
        parts,
        suppliers,
        nation["n_nationkey"].numel(),
        regions["r_regionkey"].numel(),
        size,
        region_code,
        TILES=triton.cdiv(triton.cdiv(parts, BLOCK), programs),
        BLOCK=BLOCK,
        SUPP_TILES=triton.cdiv(triton.cdiv(suppliers, 128), programs),
        SBLOCK=128,
        NB=max(32, triton.next_power_of_2(nation["n_nationkey"].numel())),
        RB=max(8, triton.next_power_of_2(regions["r_regionkey"].numel())),
    )
    n = partsupp["ps_partkey"].numel()
    programs = max(1, min(PROGRAMS if device.type == "cuda" else 4, triton.cdiv(n, BLOCK)))
    tiles = triton.cdiv(triton.cdiv(n, BLOCK), programs)
    columns = (partsupp["ps_partkey"], partsupp["ps_suppkey"], partsupp["ps_supplycost"])
    _q02_min[(programs,)](*columns, part_row, supp_info, mincost, n, TILES=tiles, BLOCK=BLOCK)
    region = tiles * BLOCK
    region_rows = torch.empty(programs * region, dtype=torch.int32, device=device)
    region_count = torch.empty(programs, dtype=torch.int32, device=device)
    _q02_rows[(programs,)](
        *columns, part_row, supp_info, mincost, region_rows, region_count, n, TILES=tiles, BLOCK=BLOCK
    )
    rows = torch.empty(CAP, dtype=torch.int32, device=device)
    prim = torch.empty(CAP, dtype=torch.int64, device=device)
    found = torch.empty(1, dtype=torch.int32, device=device)
    step = 128 if region % 128 == 0 else region
    _q02_gather[(programs,)](
        region_rows,
        region_count,
        programs,
        partsupp["ps_suppkey"],
        supp_info,
        supplier["s_acctbal"],
        rows,
        prim,
        found,
        REGION=region,
        STEP=step,
        PB=triton.next_power_of_2(programs),
        CAP=CAP,
        CENTS=CENTS,
    )
    ranks = torch.empty(CAP, dtype=torch.int32, device=device)
    rb, chunk = (64, 512) if device.type == "cuda" else (512, 1024)
    _q02_rank[(CAP // rb,)](prim, found, ranks, CAP=CAP, RB=rb, CHUNK=chunk)
    scratch = torch.empty(CAND, dtype=torch.int32, device=device)
    out = [torch.empty(LIMIT, dtype=dtype, device=device) for dtype in (torch.float64,) + (torch.int64,) * 4]
    status = torch.empty(2, dtype=torch.int32, device=device)
    _q02_top[(1,)](
        rows,
        prim,
        ranks,
        found,
        partsupp["ps_partkey"],
        partsupp["ps_suppkey"],
        part_row,
        supp_info,
        supplier["s_acctbal"],
        supplier["s_name"],
        part["p_mfgr"],
        scratch,
        *out,
        status,
        CAP=CAP,
        CAND=CAND,
        LIMIT=LIMIT,
        NAME=supplier["s_name"].shape[1],
        num_warps=8,
    )
    count, overflow = status.tolist()  # the one sync: the result's size
    if overflow:
        return _slow_path(tables, part_row, supp_info, mincost, type_ok, size, region_code)
    acctbal, supplier_row, n_name, p_partkey, p_mfgr = (t[:count] for t in out)
    return {
        "s_acctbal": acctbal,
        "s_name": supplier_row,
        "n_name": n_name,
        "p_partkey": p_partkey,
        "p_mfgr": p_mfgr,
        "s_address": supplier_row,
        "s_phone": supplier_row,
        "s_comment": supplier_row,
    }

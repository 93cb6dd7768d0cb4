"""Tensor algorithms the TorchPlans share (../shared/TPCH.md, "Operators -> tensor algorithms").

Every function is plain PyTorch on whatever device its inputs live on, keeps float64 where the data is
float64, and avoids host synchronisation unless an output size depends on the data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import torch

# --- joins -------------------------------------------------------------------------------------


def key_index(keys: torch.Tensor, size: int | None = None) -> torch.Tensor:
    """Direct-address table for a unique key column: `index[key] = row`, -1 where no row has the key.

    PK-FK joins are then a gather: `rows = key_index(pk)[fk]`. `size` is max key + 1 when known (the
    TPC-H keys are dense), else it is read from the data (one host sync).
    """
    if size is None:
        size = int(keys.max().item()) + 1 if keys.numel() else 1
    index = torch.full((size,), -1, dtype=torch.int64, device=keys.device)
    index[keys.long()] = torch.arange(keys.numel(), device=keys.device)
    return index


def lookup(index: torch.Tensor, foreign: torch.Tensor) -> torch.Tensor:
    """Rows of the key table for each foreign key (-1 where absent or out of range)."""
    foreign = foreign.long()
    inside = (foreign >= 0) & (foreign < index.numel())
    return torch.where(inside, index[foreign.clamp(0, index.numel() - 1)], -1)


def match_count(keys: torch.Tensor, *, of: torch.Tensor) -> torch.Tensor:
    """Per key, how many entries of `of` equal it, int64: COUNT over a LEFT JOIN on the key (0: none)."""
    return count_of(keys, key_counts(of))


def key_counts(keys: torch.Tensor) -> torch.Tensor:
    """How many times each key value 0..max occurs: counted once, read per row by `count_of`."""
    return torch.bincount(keys) if keys.numel() else keys.new_zeros(0).long()


def count_of(keys: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """`counts[keys]`, 0 for a key beyond the counted ones."""
    if counts.numel() == 0:
        return torch.zeros(keys.shape, dtype=torch.int64, device=keys.device)
    return torch.where(keys < counts.numel(), counts[keys.clamp(max=counts.numel() - 1)], 0)


def key_range(keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per key value k (dense 0..max), the least and greatest of `values` on rows with key k; a key
    without rows gets (max, min) of the dtype, so that least > greatest marks it empty."""
    size = int(keys.max().item()) + 1 if keys.numel() else 0
    return group_min(values, keys.long(), size), group_max(values, keys.long(), size)


def exists_other(
    keys: torch.Tensor, values: torch.Tensor, low: torch.Tensor, high: torch.Tensor
) -> torch.Tensor:
    """EXISTS a row with the same key and another value, given `key_range` of those rows (Q21)."""
    if low.numel() == 0:
        return torch.zeros(keys.shape, dtype=torch.bool, device=keys.device)
    inside = keys < low.numel()
    at = keys.long().clamp(max=low.numel() - 1)
    least, greatest = low[at], high[at]
    return inside & (least <= greatest) & ((least != values) | (greatest != values))


def lookup_composite(primary: Sequence[torch.Tensor], foreign: Sequence[torch.Tensor]) -> torch.Tensor:
    """`lookup` on a composite key (partsupp's (partkey, suppkey)): the row whose key columns equal each
    foreign row's, or -1. Keys are non-negative; packed exactly into one int64, sorted, binary-searched."""
    widths = [
        int(torch.maximum(p.max(), f.max()).item()) + 1 if p.numel() and f.numel() else 1
        for p, f in zip(primary, foreign, strict=True)
    ]
    keys, rows = torch.sort(pack(primary, widths))
    wanted = pack(foreign, widths)
    if keys.numel() == 0:
        return torch.full_like(wanted, -1)
    at = torch.searchsorted(keys, wanted).clamp(max=keys.numel() - 1)
    return torch.where(keys[at] == wanted, rows[at], -1)


def member(keys: torch.Tensor, universe: int | None = None, *, of: torch.Tensor) -> torch.Tensor:
    """Semi-join bitmap: `member(fk, of=pks)[i]` is True when `fk[i]` occurs in `pks` (EXISTS / IN)."""
    if universe is None:
        if keys.numel() == 0 or of.numel() == 0:  # nothing to find, or nowhere to find it
            return torch.zeros(keys.shape, dtype=torch.bool, device=keys.device)
        universe = int(torch.maximum(keys.max(), of.max()).item()) + 1
    bitmap = torch.zeros(universe, dtype=torch.bool, device=keys.device)
    bitmap[of.long()] = True
    return bitmap[keys.long()]


def pack(keys: Sequence[torch.Tensor], widths: Sequence[int]) -> torch.Tensor:
    """Pack non-negative integer keys into one int64 (exact, never a lossy hash).

    `widths[i]` is an exclusive upper bound of `keys[i]`; the product of the widths must fit in 63 bits.
    """
    packed = torch.zeros_like(keys[0], dtype=torch.int64)
    for key, width in zip(keys, widths, strict=True):
        packed = packed * width + key.long()
    return packed


# --- grouping ----------------------------------------------------------------------------------


def group(packed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Group ids for an exact packed key: (unique keys, ascending; id of each row)."""
    return torch.unique(packed, sorted=True, return_inverse=True)


def group_sum(values: torch.Tensor, ids: torch.Tensor, groups: int) -> torch.Tensor:
    """Per-group sums in the values' dtype.

    For a few groups, one masked reduction per group: float64 atomics piling onto a handful of addresses
    took 137 ms for a naive Q1 at SF10 on an H200 (../shared/TPCH.md). For many groups, a scatter-add.
    """
    if groups == 0:
        return values[:0]
    if groups <= 16:
        return torch.stack([torch.where(ids == g, values, 0).sum() for g in range(groups)])
    return torch.zeros(groups, dtype=values.dtype, device=values.device).index_add_(0, ids, values)


def group_count(ids: torch.Tensor, groups: int) -> torch.Tensor:
    """Rows per group, int64. Ids must lie in [0, groups).

    For a few groups, one comparison-and-count per group: CUDA's bincount piles its atomics onto those
    few bins (3.8 ms for Q1's 60 M ids at SF10 on an H200; with masked counts compiled Q1 went from 5.7
    to 1.7 ms). Out-of-range ids are ignored there, but not by bincount: keep them in range.
    """
    if groups <= 16:
        return torch.stack([(ids == g).sum() for g in range(groups)]) if groups else ids.new_zeros(0).long()
    return torch.bincount(ids, minlength=groups)


def group_count_distinct(values: torch.Tensor, ids: torch.Tensor, groups: int) -> torch.Tensor:
    """COUNT(DISTINCT values) per group, int64: the distinct (group, value) pairs, counted per group."""
    if values.numel() == 0:
        return ids.new_zeros(groups).long()
    if values.is_floating_point():
        values = torch.unique(values, return_inverse=True)[1]  # exact codes of the values
    low = values.min()
    pairs = torch.unique(pack([ids, values - low], [groups, int(values.max() - low) + 1]))
    return group_count(pairs // (int(values.max() - low) + 1), groups)


def group_min(values: torch.Tensor, ids: torch.Tensor, groups: int) -> torch.Tensor:
    """Per-group minimum; a group without rows holds the dtype's largest value."""
    init = torch.full((groups,), _limits(values.dtype).max, dtype=values.dtype, device=values.device)
    return init.scatter_reduce(0, ids, values, reduce="amin", include_self=True)


def group_max(values: torch.Tensor, ids: torch.Tensor, groups: int) -> torch.Tensor:
    """Per-group maximum; a group without rows holds the dtype's smallest value."""
    init = torch.full((groups,), _limits(values.dtype).min, dtype=values.dtype, device=values.device)
    return init.scatter_reduce(0, ids, values, reduce="amax", include_self=True)


def _limits(dtype: torch.dtype) -> torch.finfo | torch.iinfo:
    return torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)


# --- ordering ----------------------------------------------------------------------------------


def order(keys: Sequence[tuple[torch.Tensor, bool]], limit: int | None = None) -> torch.Tensor:
    """Row order for ORDER BY: `keys` as (column, descending) pairs, first key most significant.

    Stable sorts from the last key to the first; the result is a permutation (cut to `limit`).
    """
    n = keys[0][0].numel()
    perm = torch.arange(n, device=keys[0][0].device)
    for column, descending in reversed(keys):
        step = torch.sort(column[perm], stable=True, descending=descending).indices
        perm = perm[step]
    return perm[:limit] if limit is not None else perm


# --- dates -------------------------------------------------------------------------------------


def year(days: torch.Tensor) -> torch.Tensor:
    """EXTRACT(YEAR) of int32 days since 1970-01-01, by integer civil-date arithmetic on the device."""
    z = days.long() + 719468
    era = torch.div(z, 146097, rounding_mode="floor")
    day_of_era = z - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    return year_of_era + era * 400 + ((5 * day_of_year + 2) // 153 >= 10).long()


# --- strings -----------------------------------------------------------------------------------


def sql_like(pattern: str) -> Callable[[str], re.Match[str] | None]:
    """SQL LIKE as a host predicate for dictionary entries (a match, truthy, or None): '%' is any run of
    characters, '_' any one."""
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile(regex, re.DOTALL).fullmatch


def dictionary_mask(
    dictionary: Sequence[str], predicate: Callable[[str], object], device: torch.device | str
) -> torch.Tensor:
    """Evaluate a string predicate (its result's truth) once per dictionary entry on the host; index the
    result by codes."""
    return torch.tensor([bool(predicate(s)) for s in dictionary], dtype=torch.bool, device=device)


def dictionary_code(dictionary: Sequence[str], value: str) -> int:
    """The code of `value`, or -1 when the data never holds it (then `codes == -1` matches nothing)."""
    try:
        return list(dictionary).index(value)
    except ValueError:
        return -1


def text_equals(text: torch.Tensor, value: str) -> torch.Tensor:
    """`column = 'value'` on a zero-padded byte matrix."""
    pattern = _bytes(value, text)
    if pattern.numel() > text.shape[1]:
        return torch.zeros(text.shape[0], dtype=torch.bool, device=text.device)
    head = (text[:, : pattern.numel()] == pattern).all(dim=1)
    if pattern.numel() == text.shape[1]:
        return head
    return head & (text[:, pattern.numel()] == 0)


def text_in(text: torch.Tensor, values: Sequence[str]) -> torch.Tensor:
    """`column IN ('a', 'b', ...)` on a zero-padded byte matrix (or a SUBSTRING slice of one)."""
    found = torch.zeros(text.shape[0], dtype=torch.bool, device=text.device)
    for value in values:
        found |= text_equals(text, value)
    return found


def text_codes(text: torch.Tensor) -> torch.Tensor:
    """Dense int64 codes of the distinct rows of a byte matrix (equal strings, equal codes)."""
    return torch.unique(text, dim=0, return_inverse=True)[1]


def text_digits(text: torch.Tensor) -> torch.Tensor:
    """`CAST(column AS INTEGER)` of a byte matrix of decimal digits (int64); the padding is ignored."""
    digits = text.long() - ord("0")
    present = text != 0
    value = torch.zeros(text.shape[0], dtype=torch.int64, device=text.device)
    for i in range(text.shape[1]):  # a few columns: TPC-H's country codes are two digits
        value = torch.where(present[:, i], value * 10 + digits[:, i], value)
    return value


def text_prefix(text: torch.Tensor, prefix: str) -> torch.Tensor:
    """`column LIKE 'prefix%'`."""
    pattern = _bytes(prefix, text)
    if pattern.numel() > text.shape[1]:
        return torch.zeros(text.shape[0], dtype=torch.bool, device=text.device)
    return (text[:, : pattern.numel()] == pattern).all(dim=1)


def text_find(text: torch.Tensor, needle: str, *, last: bool = False) -> torch.Tensor:
    """Position of the first (or last) occurrence of `needle` in each row, -1 where it does not occur."""
    pattern = _bytes(needle, text)
    width, k = text.shape[1], pattern.numel()
    if k > width:
        return torch.full((text.shape[0],), -1, dtype=torch.int64, device=text.device)
    hits = torch.ones(text.shape[0], width - k + 1, dtype=torch.bool, device=text.device)
    for offset in range(k):  # shifted byte compares: k passes over the matrix, no Python loop per row
        hits &= text[:, offset : width - k + 1 + offset] == pattern[offset]
    positions = torch.arange(width - k + 1, device=text.device)
    if last:
        found = torch.where(hits, positions, -1).amax(dim=1)
    else:
        found = torch.where(hits, positions, width).amin(dim=1)
        found = torch.where(found == width, -1, found)
    return found


def text_contains(text: torch.Tensor, needle: str) -> torch.Tensor:
    """`column LIKE '%needle%'`."""
    return text_find(text, needle) >= 0


def text_contains_in_order(text: torch.Tensor, first: str, then: str) -> torch.Tensor:
    """`column LIKE '%first%then%'`: the first hit of `first` ends before the last hit of `then` starts."""
    start = text_find(text, first)
    end = text_find(text, then, last=True)
    return (start >= 0) & (end >= start + len(first.encode()))


def text_order_keys(text: torch.Tensor, *, descending: bool = False) -> list[tuple[torch.Tensor, bool]]:
    """ORDER BY a free-text column (byte order, as DuckDB's default collation): `ops.order` keys.

    Seven bytes per int64 word, big-endian, so each word is non-negative and words compare as the bytes
    do; zero padding sorts before any character, so a prefix sorts first.
    """
    rows, width = text.shape
    padded = torch.nn.functional.pad(text, (0, -width % 7)).view(rows, (width + 6) // 7, 7).long()
    weights = 256 ** torch.arange(6, -1, -1, dtype=torch.int64, device=text.device)
    words = (padded * weights).sum(dim=2)
    return [(words[:, i], descending) for i in range(words.shape[1])]


def _bytes(value: str, like: torch.Tensor) -> torch.Tensor:
    return torch.tensor(list(value.encode("ascii")), dtype=torch.uint8, device=like.device)

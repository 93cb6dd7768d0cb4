"""The fresh parameter sets and rolled tables that catch kernels caching results across calls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from evaluator.harness import fresh, session
from evaluator.harness.session import Outcome, Sides
from evaluator.harness.timed import RoundTrip
from evaluator.queries import QUERIES
from evaluator.timing import TimingPolicy
from evaluator.tpch.load import load_tables


def test_fresh_sets_are_none_of_the_evaluations_sets_and_run_out_with_the_space() -> None:
    q06 = QUERIES[6]
    used = q06.parameter_sets(4, seed=1)
    sets = fresh.fresh_sets(q06, used, seed=1)
    assert len(sets) == fresh.FRESH_SETS
    assert not any(s in used for s in sets) and len({str(s) for s in sets}) == len(sets)
    assert sets != fresh.fresh_sets(q06, used, seed=2)  # drawn with the evaluation's secret seed
    q18 = QUERIES[18]  # four quantities in all
    every = [{"quantity": q} for q in range(312, 316)]
    assert fresh.fresh_sets(q18, every, seed=1) == []


def test_rolled_tables_keep_shapes_and_keys_but_tear_rows_apart(sf001: Path) -> None:
    tables = load_tables(sf001, {"lineitem": ["l_orderkey", "l_quantity", "l_discount", "l_shipmode"]})
    rolled = tables.rolled(0.3)
    line, moved = tables["lineitem"], rolled["lineitem"]
    assert torch.equal(moved["l_orderkey"], line["l_orderkey"])
    assert moved["l_orderkey"].data_ptr() != line["l_orderkey"].data_ptr()
    for column in ("l_quantity", "l_discount", "l_shipmode"):
        assert moved[column].shape == line[column].shape and not torch.equal(moved[column], line[column])
        assert torch.equal(moved[column].sort(dim=0).values, line[column].sort(dim=0).values)

    # Each column by its own shift: rows are not just reordered whole (the multiset of rows changes).
    def rows(table):
        return Counter(zip(table["l_quantity"].tolist(), table["l_discount"].tolist(), strict=True))

    assert rows(moved) != rows(line)


def test_rotated_tables_are_valid_data_with_the_same_joins_under_other_keys(sf001: Path) -> None:
    columns = {
        "customer": ["c_custkey", "c_mktsegment", "c_name"],
        "orders": ["o_orderkey", "o_custkey", "o_orderdate", "o_comment"],
        "lineitem": ["l_orderkey", "l_linenumber", "l_shipdate", "l_quantity", "l_suppkey"],
    }
    tables = load_tables(sf001, columns)
    rotated = tables.rotated(0.7)
    for name, keys in (("customer", ["c_custkey"]), ("orders", ["o_orderkey"])):
        for column, values in rotated[name].items():
            assert values.data_ptr() != tables[name][column].data_ptr()
            assert torch.equal(values, tables[name][column]) == (column in keys), (name, column)
    line, order = rotated["lineitem"], rotated["orders"]
    keys = line["l_orderkey"]
    assert bool((keys[1:] >= keys[:-1]).all()) and not torch.equal(keys, tables["lineitem"]["l_orderkey"])
    assert set(keys.tolist()) == set(order["o_orderkey"].tolist())

    def rows(table, names):
        return Counter(zip(*(_values(table[c]) for c in names), strict=True))

    # Whole rows moved: each table holds the same rows (its primary key aside), and an order's lines
    # the same lines, numbered 1..n in their order.
    customers = ["c_mktsegment", "c_name"]
    assert rows(rotated["customer"], customers) == rows(tables["customer"], customers)
    assert rows(rotated["orders"], ["o_comment"]) == rows(tables["orders"], ["o_comment"])

    def joined(t):
        o, li = t["orders"], t["lineitem"]
        place = {k: i for i, k in enumerate(o["o_orderkey"].tolist())}
        at = torch.tensor([place[k] for k in li["l_orderkey"].tolist()])
        return Counter(
            zip(
                o["o_custkey"][at].tolist(),
                o["o_orderdate"][at].tolist(),
                *(li[c].tolist() for c in ("l_linenumber", "l_shipdate", "l_quantity", "l_suppkey")),
                strict=True,
            )
        )

    assert joined(rotated) == joined(tables)
    dates = dict(zip(order["o_orderkey"].tolist(), order["o_orderdate"].tolist(), strict=True))
    assert all(ship > dates[k] for k, ship in zip(keys.tolist(), line["l_shipdate"].tolist(), strict=True))
    starts = torch.ones_like(keys, dtype=torch.bool)
    starts[1:] = keys[1:] != keys[:-1]
    assert bool((line["l_linenumber"][starts] == 1).all())


def _values(column: torch.Tensor) -> list:
    """A column's values, a free-text matrix's as bytes per row (hashable)."""
    return column.tolist() if column.dim() == 1 else [bytes(row) for row in column.tolist()]


def test_every_torchplan_runs_on_rotated_tables_and_lineitem_alone_answers_the_same(sf001: Path) -> None:
    """Rotated tables are valid data: the baseline must run on them (a failure there is the harness's),
    and a query over lineitem alone sees the same rows, so gives the same answer."""
    for number, query in QUERIES.items():
        tables = load_tables(sf001, query.columns())
        params = query.parameter_sets(1, seed=number)[0]
        answer = query.plan().run_query(tables.rotated(0.6), **params)
        if set(query.columns()) == {"lineitem"}:
            expected = query.plan().run_query(tables, **params)
            assert all(torch.allclose(answer[c], expected[c], equal_nan=True) for c in expected), number


def test_a_kernel_is_judged_cached_only_when_fresh_calls_are_far_slower_than_the_baselines() -> None:
    timing = {"kernel": {"median_ms": 1.0}, "baseline": {"median_ms": 2.0}}
    honest = {"kernel": {"ms": [1.1, 1.3, 0.9]}, "baseline": {"ms": [2.0, 2.4, 2.1]}}
    cached = {"kernel": {"ms": [50.0, 52.0, 51.0]}, "baseline": {"ms": [2.0, 2.4, 2.1]}}
    slow_everywhere = {"kernel": {"ms": [2.5, 2.6, 2.4]}, "baseline": {"ms": [5.0, 5.2, 4.9]}}
    assert fresh.cached(timing, honest) is None
    assert "results are kept across calls" in fresh.cached(timing, cached)
    hiccups = {"kernel": {"ms": [15.0, 14.0, 16.0]}, "baseline": {"ms": [2.0, 2.4, 2.1]}}
    assert fresh.cached(timing, hiccups, device="cuda")  # 14 ms over on a GPU: look-ups
    assert fresh.cached(timing, hiccups, device="cpu") is None  # within a busy CPU's jitter
    assert fresh.cached(timing, cached, device="cpu")
    assert fresh.cached(timing, slow_everywhere) is None  # the baseline slowed as much: the parameters
    assert fresh.slowdown(timing, {"kernel": {"ms": []}}) is None
    # An honest Q6 core on a busy two-core CPU (Triton's interpreter): 2.3x on fresh sets, not look-ups.
    busy = {"kernel": {"median_ms": 132.0}, "baseline": {"median_ms": 40.0}}
    interpreter = {"kernel": {"ms": [302.0, 290.0, 310.0]}, "baseline": {"ms": [40.0, 41.0, 39.0]}}
    assert fresh.cached(busy, interpreter, device="cpu") is None
    assert fresh.cached(busy, interpreter, device="cuda")


def test_a_kernel_is_judged_to_precompute_only_when_its_first_calls_on_new_content_are_far_slower() -> None:
    timing = {"kernel": {"median_ms": 1.0}, "baseline": {"median_ms": 2.0}}
    honest = {"kernel": {"first_ms": [1.2, 1.1, 1.3]}, "baseline": {"first_ms": [2.1, 2.2, 2.0]}}
    cube = {"kernel": {"first_ms": [80.0, 81.0, 79.0]}, "baseline": {"first_ms": [2.1, 2.2, 2.0]}}
    both_slow = {"kernel": {"first_ms": [3.0, 3.1, 2.9]}, "baseline": {"first_ms": [6.0, 6.2, 6.1]}}
    assert fresh.precomputed(timing, honest) is None
    assert "work done once per table content" in fresh.precomputed(timing, cube)
    assert fresh.precomputed(timing, both_slow) is None  # new content costs the baseline as much
    assert fresh.first_slowdown(timing, cube) == pytest.approx(79.0 / 1.0)  # the baseline's 2.0 / 2.0: 1
    # Every first call is on content never seen, so a precomputation slows each; a slow spell of the host
    # slows one or two. An honest CUDA Q6 core on a lent H100 (session 23), rejected by 0.6.13's median:
    spells = {"kernel": {"first_ms": [6.37, 0.85, 2.05]}, "baseline": {"first_ms": [3.16, 1.22, 1.17]}}
    h100 = {"kernel": {"median_ms": 0.684}, "baseline": {"median_ms": 1.040}}
    assert fresh.precomputed(h100, spells) is None
    assert fresh.first_slowdown(h100, spells) == pytest.approx((0.85 / 0.684) / (1.17 / 1.040))


class FreshRemote:
    """A runner's handle for `session._fresh`: every command answered at once (the baseline's `arm` with
    the device's waits it is given, its runner's `drain`), the kernel's freezes and stop recorded."""

    def __init__(
        self, events: list[str], who: str, waits: list[dict] | None = None, freezer: bool | None = True
    ) -> None:
        self.events, self.who, self.waits, self.freezer = events, who, iter(waits or []), freezer
        self.cpu = 0.0

    def ask(self, command: dict, limit_s: float) -> tuple[dict, bytes]:
        self.events.append(f"{self.who} {command['op']}{' drain' if command.get('drain') else ''}")
        return (next(self.waits) if command.get("drain") else {}), b""

    def timed(self, command: dict, limit_s: float, reason: str | None = None) -> tuple[float, dict, bytes]:
        self.events.append(f"{self.who} timed {command['op']}")
        return 0.001, {"layout": [[]]}, b""

    def freeze(self, frozen: bool) -> bool | None:
        self.events.append(f"{self.who} {'freeze' if frozen else 'thaw'}")
        return self.freezer

    def cpu_s(self) -> float:
        # A runner that cannot be frozen keeps a thread spinning: a CPU second at each reading.
        self.cpu += 0.0 if self.freezer else 1.0
        return self.cpu

    def stop(self) -> None:
        self.events.append(f"{self.who} stop")


def _fresh_session(
    device: str, waits: list[dict], monkeypatch, freezer: bool | None = True
) -> tuple[Outcome, list[str], object]:
    monkeypatch.setattr(session, "_result_problem", lambda *args: None)  # every fresh answer right
    sides = Sides(
        query=QUERIES[6], folders=[Path("sf1")], device=device, params=[{}], baseline_mode="compiled",
        timing=TimingPolicy(), query_timeout_s=60, compile_limit_s=60, verify={"seed": 1, "share": 0.0},
        fresh=[{"p": 1}, {"p": 2}], rolls=[(0.3, 0.6), (0.2, 0.7)],
    )  # fmt: skip
    events: list[str] = []
    baseline, kernel = FreshRemote(events, "baseline", waits), FreshRemote(events, "kernel", freezer=freezer)
    outcome = Outcome(stats={"baseline": {"median_ms": 1.0}, "kernel": {"median_ms": 1.0}})
    answers = SimpleNamespace(fresh=lambda index: {})
    left = session._fresh(baseline, kernel, sides, answers, RoundTrip(), outcome)  # type: ignore[arg-type]
    return outcome, events, left


def test_the_kernel_is_frozen_and_the_device_drained_while_the_baselines_fresh_calls_run(monkeypatch) -> None:
    """The baseline's fresh calls are what the kernel's are compared with: slowed, they would hide a
    kernel's precomputation (`fresh.slowdown`)."""
    idle = {"busy_s": 0.0, "probes": 1, "idle": True}
    outcome, events, left = _fresh_session("cuda", [idle] * 6, monkeypatch)
    assert outcome.status == "passed" and left is not None
    baseline_part = [
        "kernel freeze",
        "baseline roll", "baseline rolled", "baseline roll",
        "baseline arm drain", "baseline timed rolled",  # the first call on content it has never seen
        "baseline rolled",
        "baseline arm drain", "baseline timed ping", "baseline timed batch",
        "baseline arm drain", "baseline timed ping", "baseline timed batch",
        "kernel thaw",
    ]  # fmt: skip
    kernel_part = ["kernel roll", "kernel rolled", "kernel roll", "kernel arm", "kernel timed rolled"]
    assert events[: len(baseline_part) + len(kernel_part)] == baseline_part + kernel_part
    assert events.count("kernel freeze") == events.count("kernel thaw") == 2  # one per fresh set
    assert not any(e.startswith("kernel") and e.endswith("drain") for e in events)
    assert outcome.stats["device_busy"]["fresh"]["samples"] == 6


def test_a_device_left_busy_through_the_baselines_fresh_calls_rejects_the_kernel(monkeypatch) -> None:
    idle, stuck = {"busy_s": 0.0, "probes": 1, "idle": True}, {"busy_s": 10.0, "probes": 700, "idle": False}
    outcome, events, left = _fresh_session("cuda", [idle, stuck], monkeypatch)
    assert outcome.status == "rejected" and left is None
    assert outcome.reason.startswith("on the fresh parameter sets: the device was still busy 10.0 s")
    assert events[-2:] == ["kernel thaw", "kernel stop"]  # thawed, then stopped
    assert outcome.stats["device_busy"]["fresh"]["max_ms"] == 10000.0


def test_a_device_busy_before_most_of_the_baselines_fresh_calls_rejects_the_kernel(monkeypatch) -> None:
    busy = {"busy_s": 0.004, "probes": 3, "idle": True}  # drained each time, 4 ms after the kernel answered
    outcome, _, _ = _fresh_session("cuda", [busy] * 6, monkeypatch)
    assert outcome.status == "rejected" and "still busy with the kernel's work before 6 of" in outcome.reason


def test_a_cpu_evaluations_fresh_calls_freeze_the_kernel_and_drain_nothing(monkeypatch) -> None:
    outcome, events, _ = _fresh_session("cpu", [], monkeypatch)
    assert outcome.status == "passed" and "device_busy" not in outcome.stats
    assert events.count("kernel freeze") == 2 and not any(e.endswith("drain") for e in events)


def test_a_kernel_that_cannot_be_frozen_and_spins_beside_the_baselines_fresh_calls_is_rejected(
    monkeypatch,
) -> None:
    outcome, events, _ = _fresh_session("cpu", [], monkeypatch, freezer=None)
    assert outcome.status == "rejected" and "of a CPU core busy while the baseline's calls" in outcome.reason
    assert events.count("kernel freeze") == 1  # once: a launcher that cannot freeze is not asked again

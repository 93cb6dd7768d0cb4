"""The worker's side of a run's lease: a thread that renews it while the evaluation runs.

The reclaim (`services.evaluation_reclaim_stale`) tells a dead worker from a slow one by the lease alone: a
query may take many minutes without a progress event, but the lease is renewed every quarter of
DKB_WORKER_LEASE_S throughout. A worker killed with SIGKILL takes this thread with it, so its lease runs out.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from django.conf import settings
from django.db import connection

from leaderboard import services
from leaderboard.models import EvaluationRun

log = logging.getLogger(__name__)


class Lease:
    """Renews the worker's lease on one attempt at a run until the block ends; `lost` once the run was
    reclaimed from under it (or failed, or finished elsewhere), which the worker checks between queries."""

    def __init__(self, *, run: EvaluationRun, attempt: int, interval_s: float | None = None) -> None:
        self.run = run
        self.attempt = attempt
        self.interval_s = interval_s if interval_s is not None else settings.DKB_WORKER_LEASE_S / 4
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"lease-run-{run.pk}", daemon=True)

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _renew(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                try:
                    renewed = services.evaluation_heartbeat(run=self.run, attempt=self.attempt)
                except Exception:
                    # A database that is briefly away costs one renewal; the lease spans four.
                    log.exception("run %s: lease not renewed", self.run.pk)
                    continue
                if not renewed:
                    log.warning("run %s: attempt %s lost its lease", self.run.pk, self.attempt)
                    self._lost.set()
                    return
        finally:
            connection.close()  # this thread's own connection

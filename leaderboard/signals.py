"""Cache invalidation: any saved or deleted row that public pages show starts a new cache generation once
its transaction commits, whoever changed it (a service, the admin's change form, a shell). Cached rankings
and charts are keyed by the generation (`services.cache_generation`), so none outlives its data."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save


def _results_changed_on_commit(sender: type, **kwargs: Any) -> None:
    from leaderboard.services import results_changed

    # After commit: a page rendered between the write and the commit would otherwise cache the old rows
    # under the new generation.
    transaction.on_commit(results_changed)


def connect() -> None:
    from leaderboard.models import EvaluationRun, Hardware, Kernel, LanguageModel, Query, Submission

    # Kernel: a set's page caches its kernels rendered (staff may edit those of a set not yet evaluated).
    for model in (Submission, EvaluationRun, Kernel, LanguageModel, Hardware, Query):
        for signal in (post_save, post_delete):
            signal.connect(
                _results_changed_on_commit,
                sender=model,
                dispatch_uid=f"leaderboard.results_changed.{signal_name(signal)}.{model.__name__}",
            )


def signal_name(signal: Any) -> str:
    return "saved" if signal is post_save else "deleted"

from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "DataKernelBench leaderboard"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        post_spawn.connect(announce_sandbox, dispatch_uid="leaderboard.announce_sandbox")

        from leaderboard import signals

        signals.connect()


def announce_sandbox(sender: Any, proc_name: str = "", **kwargs: Any) -> None:
    """Say on the worker's stdout, when it starts, how untrusted kernels will be isolated."""
    from django.conf import settings

    from leaderboard.tasks import PROCESS_SANDBOX_WARNING

    if settings.DKB_SANDBOX == "process":
        print(PROCESS_SANDBOX_WARNING, flush=True)
        return
    if settings.DKB_SANDBOX == "docker":
        print(f"worker {proc_name}: evaluating in Docker containers of the evaluator image", flush=True)
        return
    from sandbox import core

    problem = core.bubblewrap_available()
    if problem:
        print(
            f"WARNING: bubblewrap is not usable here ({problem}); this worker will refuse to evaluate. "
            "Install bubblewrap, or set DKB_SANDBOX=process to run kernels unisolated.",
            flush=True,
        )
    else:
        print(f"worker {proc_name}: evaluating in the bubblewrap sandbox", flush=True)

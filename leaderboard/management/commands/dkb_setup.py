"""Make this installation ready to evaluate: benchmark queries, this machine's hardware, the demo user.

Idempotent: run it after every deploy or harness upgrade; it updates rows in place and says what changed.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils.text import slugify
from django_q.models import Schedule

from evaluator.queries import QUERIES
from leaderboard import services
from leaderboard.models import Hardware, Query

DEMO_USER = "demo"


class Command(BaseCommand):
    help = "Load the benchmark queries, register this machine's hardware, create the demo user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-hardware", action="store_true", help="do not register this machine")

    @transaction.atomic
    def handle(self, *args: Any, no_hardware: bool = False, **options: Any) -> None:
        for query in QUERIES.values():
            _, created = Query.objects.update_or_create(
                number=query.number,
                defaults={"name": query.name, "sql": query.sql(), "torchplan_source": query.plan_source()},
            )
            self.stdout.write(f"query {query.slug}: {'loaded' if created else 'updated'}")
        if not no_hardware:
            self._hardware()
        user, created = get_user_model().objects.get_or_create(username=DEMO_USER)
        if created:
            # The demo user owns the example sets; nobody logs in as it.
            user.set_unusable_password()
            user.save()
        self.stdout.write(f"user {DEMO_USER}: {'created' if created else 'exists'}")
        # A worker killed mid-run leaves its run "running"; the workers queue such runs again. django-q2
        # runs a schedule without a cluster only in the cluster named like the site (Q_CLUSTER's name),
        # which no hardware worker is: each worker's queue gets a schedule of its own.
        queue = os.environ.get("Q_CLUSTER_NAME") or None
        every = settings.DKB_RECLAIM_EVERY_MIN
        Schedule.objects.update_or_create(
            func=services.RECLAIM_TASK,
            cluster=queue,
            defaults={
                "name": f"reclaim stale runs ({queue or settings.Q_CLUSTER['name']})",
                "schedule_type": Schedule.MINUTES,
                "minutes": every,
            },
        )
        self.stdout.write(
            f"schedule: runs of lost workers are queued again (or failed) every {every} minute(s)"
            + (f", by queue {queue}" if queue else "")
        )

    def _hardware(self) -> None:
        description = this_machine()
        device = description["device"]
        # DKB_HARDWARE_NAME tells two workers on one kind of machine apart (a second queue; routing tests).
        name = os.environ.get("DKB_HARDWARE_NAME") or description["name"]
        slug = slugify(f"{device}-{name}")[:90]
        hardware, created = Hardware.objects.update_or_create(
            slug=slug,
            defaults={
                "name": name,
                "device": device,
                "peak_bandwidth_gbs": description.get("peak_bandwidth_gbs"),
                "scale_factor": settings.DKB_SCALE_FACTOR,
                # A worker serving a hardware queue runs with Q_CLUSTER_NAME=<queue> (django-q2's own
                # variable); Q_CLUSTER's name is the site's, shared by all (tasks are signed with it).
                "queue": os.environ.get("Q_CLUSTER_NAME") or settings.Q_CLUSTER["name"],
            },
        )
        label = "CPU, Triton interpreter" if hardware.is_cpu else "GPU"
        self.stdout.write(
            f"hardware {hardware.slug}: {'created' if created else 'updated'} "
            f"({label}, SF{hardware.scale_factor:g}, queue {hardware.queue}, "
            f"{'active' if hardware.active else 'inactive'})"
        )


def this_machine() -> dict[str, Any]:
    """The evaluator's own description of the device DKB_DEVICE selects (CUDA when present on "auto")."""
    # torch is imported here only: the web process never needs it.
    import torch

    from evaluator.hardware import describe

    device = settings.DKB_DEVICE
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return describe(torch.device(device))

"""Calibrate the TorchPlan baselines of one hardware: the mode (eager or compiled) each query's kernels
are timed against there. Run it on that hardware, with nothing else running
(`evaluator.harness.baselines`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluator.harness import baselines
from leaderboard import services
from leaderboard.models import Hardware


class Command(BaseCommand):
    help = (
        "Calibrate each query's baseline mode on this machine for a hardware's scale factor; writes the "
        "record evaluations read (DKB_DATA_DIR/baselines/) and the rows query pages show."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--hardware", help="its slug; default: the active hardware on this worker's device"
        )
        parser.add_argument(
            "--queries", help="comma-separated query numbers, e.g. 1,6; default: every loaded query"
        )
        parser.add_argument(
            "--jobs", type=int, default=4, help="plans loading at once (compiled and timed one at a time)"
        )

    def handle(
        self, *args: Any, hardware: str | None, queries: str | None, jobs: int, **options: Any
    ) -> None:
        target = _hardware(hardware)
        numbers = _numbers(queries)
        self.stdout.write(
            f"calibrating {target} on {target.device} into {settings.DKB_DATA_DIR}; rule: {baselines.RULE}"
        )
        rows = services.baseline_calibrate(
            hardware=target, queries=numbers, jobs=jobs, echo=self.stdout.write
        )
        self.stdout.write(f"{len(rows)} calibration(s) stored for {target.slug}")
        if numbers and len(rows) < len(numbers):
            raise CommandError(f"{len(numbers) - len(rows)} query(ies) could not be calibrated (see above)")


def _hardware(slug: str | None) -> Hardware:
    if slug:
        try:
            return Hardware.objects.get(slug=slug)
        except Hardware.DoesNotExist:
            raise CommandError(f"no hardware {slug!r}") from None
    # The calibration times this machine, so by default it is filed under the hardware this machine is.
    from leaderboard.management.commands.dkb_setup import this_machine

    device = this_machine()["device"]
    candidates = list(Hardware.objects.active().filter(device=device))
    mine = [h for h in candidates if h.queue == settings.Q_CLUSTER["name"]]
    if len(mine) == 1:
        return mine[0]
    if len(candidates) == 1:
        return candidates[0]
    names = ", ".join(h.slug for h in candidates) or "none"
    raise CommandError(f"name the hardware with --hardware (active {device} hardware: {names})")


def _numbers(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--queries takes numbers such as 1,6, not {text!r}") from None

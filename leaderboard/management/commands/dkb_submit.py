"""Submit a kernel-set folder as a user, optionally evaluating it right here (used by `make run`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluator.errors import SubmissionError
from evaluator.kernelset import kernel_set_from_dir
from leaderboard import services
from leaderboard.models import EvaluationRun, Submission
from leaderboard.tasks import evaluation_execute


class Command(BaseCommand):
    help = "Submit a kernel-set folder (manifest.json + qNN.py) through the same service as uploads."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--user", default="demo", help="uploader's username (default: demo)")
        parser.add_argument(
            "--wait",
            action="store_true",
            help="evaluate in this process now instead of queueing for a worker",
        )
        parser.add_argument(
            "--again", action="store_true", help="submit even if this folder was submitted before"
        )
        parser.add_argument(
            "--private",
            action="store_true",
            help="keep the set private to the user (uploads are); by default it is published at once",
        )
        parser.add_argument(
            "--skip-existing",
            action="store_true",
            help="skip a folder submitted before (the default; for scripts)",
        )

    def handle(
        self, *args: Any, directory: Path, user: str, wait: bool, again: bool, private: bool, **options: Any
    ) -> None:
        try:
            uploader = get_user_model().objects.get(username=user)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {user!r}; run `manage.py dkb_setup` first") from None
        try:
            kernel_set = kernel_set_from_dir(directory)
        except SubmissionError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        digest = folder_sha256(directory)
        earlier = Submission.objects.filter(uploader=uploader, archive_sha256=digest).first()
        if earlier is not None and not again:
            # `make run` calls this on every start; the same folder should not fill the ranking with copies.
            self.stdout.write(
                f"{directory} was already submitted as #{earlier.pk}; skipped (--again to resubmit)"
            )
            return
        try:
            submission = services.submission_create(
                uploader=uploader, kernel_set=kernel_set, archive_sha256=digest, enqueue=not wait
            )
            if not private and submission.runs.exists():
                # The operator's own sets (`make run`'s examples) are there to be seen.
                services.submission_publish(submission=submission, user=uploader)
        except SubmissionError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        runs = list(submission.runs.select_related("hardware"))
        self.stdout.write(
            f"submission {submission.pk}: {len(runs)} run(s) on {', '.join(r.hardware.slug for r in runs)}"
        )
        if not runs:
            self.stderr.write("no active hardware: nothing will evaluate it (run `manage.py dkb_setup`)")
        if not wait:
            return
        failed = False
        for run in runs:
            self.stdout.write(f"run {run.pk}: evaluating on {run.hardware.name} ...")
            self.stdout.write(evaluation_execute(run.pk))
            run.refresh_from_db()
            if run.status == EvaluationRun.Status.FAILED:
                failed = True
                self.stderr.write(run.error)
            else:
                self.stdout.write(
                    f"run {run.pk}: overall speedup {run.overall_speedup}, pass rate {run.pass_rate}"
                )
        if failed:
            raise CommandError("an evaluation failed")


def folder_sha256(directory: Path) -> str:
    """The digest a kernel-set folder is known by (its files' names and contents), the same every time."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()

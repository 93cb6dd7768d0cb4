"""Import reports the harness wrote elsewhere (the H200 sessions under docs/results) as published results.

    manage.py dkb_import_reports docs/results/2026-12-03-h200-site-s9/reports.tgz [PATH ...]

A PATH is a report (.json), a folder of them (searched recursively) or a .tgz of them. A file is either a
report (`python -m evaluator run --out`) or a run as the site's API gives it (`GET /api/runs/<id>/`, the
report under "report" and the time it finished). Each report becomes a ranked run of its hardware ("NVIDIA
H200", registered inactive when new: no worker here evaluates on it) on the set whose manifest it records,
read from examples/ or reference/ (the sets whose sources are in the repository): the demo user's set of
that folder when `make run` submitted it, else a new one, published, except the planted bugs' sets
(examples/planted/: the harness's test cases, not anyone's kernels), which stay their owner's. Where the
reports' results folder has a sources.json (each folder's `sources_sha256` when it ran), a set whose
sources changed since is skipped: its published result would be another kernel's. Runs keep the
report's harness version and are dated when they finished (an API run's "finished"; else the date in the
path, e.g. 2026-12-02-h200-...); a set is dated no later than its earliest run started.
Idempotent: a report already stored on that set and hardware is skipped.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from evaluator.errors import SubmissionError
from evaluator.kernelset import KERNEL_NAME, KernelSet, kernel_set_from_dir
from leaderboard import services
from leaderboard.management.commands.dkb_submit import folder_sha256
from leaderboard.models import Hardware, Submission

EXAMPLES = Path(settings.BASE_DIR) / "examples"
PLANTED = EXAMPLES / "planted"  # sets with planted bugs: imported, never published
SOURCES = (EXAMPLES, Path(settings.BASE_DIR) / "reference")
# What a report's manifest must match of an examples/ folder's for the folder to be its set.
MANIFEST_KEYS = ("model", "language", "scope", "notes")
DATE_IN_PATH = re.compile(r"(\d{4}-\d{2}-\d{2})")


class Command(BaseCommand):
    help = "Import harness reports (.json, folders, .tgz) as published runs of their hardware."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--user", default="demo", help="owner of sets new to the site (default: demo)")

    def handle(self, *args: Any, paths: list[Path], user: str, **options: Any) -> None:
        try:
            owner = get_user_model().objects.get(username=user)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {user!r}; run `manage.py dkb_setup` first") from None
        examples = example_sets()
        recorded_sources.cache_clear()  # a sources.json may have changed since an earlier call here
        imported = skipped = 0
        for origin, data in read_paths(paths):
            report, finished = unwrap(data, origin)
            if report is None:
                self.stdout.write(f"{origin}: not a report; skipped")
                continue
            folder = examples.get(manifest_key(report.get("manifest") or {}))
            if folder is None:
                self.stdout.write(f"{origin}: no examples/ or reference/ folder has its manifest; skipped")
                continue
            if changed(origin, folder):
                self.stdout.write(f"{origin}: {folder.name}'s sources changed since this run; skipped")
                continue
            try:
                submission = set_of(folder, owner, since=finished)
            except SubmissionError as exc:
                self.stdout.write(f"{origin}: {exc.code}: {exc.message} (run `manage.py dkb_setup`); skipped")
                continue
            run = services.evaluation_import(
                submission=submission,
                hardware=hardware_of(report),
                report=report,
                finished=finished,
            )
            if run is None:
                skipped += 1
                self.stdout.write(f"{origin}: already imported")
                continue
            imported += 1
            if not submission.is_published and not folder.is_relative_to(PLANTED):
                services.submission_publish(submission=submission, user=submission.uploader)
            # Not uploaded after its run started (a set new here is dated by its first report's end).
            Submission.objects.filter(pk=submission.pk, created__gt=run.created).update(created=run.created)
            where = folder.relative_to(settings.BASE_DIR)
            self.stdout.write(
                f"{origin}: run {run.pk} of set #{run.submission_id} ({where}) on "
                f"{run.hardware.name}, harness {run.harness_version}, {finished:%Y-%m-%d %H:%M} UTC"
            )
        self.stdout.write(f"{imported} report(s) imported, {skipped} already there")


def read_paths(paths: list[Path]) -> Iterator[tuple[str, Any]]:
    """(where, parsed JSON) for every .json file in the paths, archives and folders included."""
    for path in paths:
        if not path.exists():
            raise CommandError(f"{path}: no such file or folder")
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.name.endswith((".json", ".tgz", ".tar.gz")):
                    yield from read_paths([file])
        elif path.name.endswith((".tgz", ".tar.gz")):
            with tarfile.open(path) as archive:
                for member in sorted(archive.getmembers(), key=lambda m: m.name):
                    content = archive.extractfile(member) if member.name.endswith(".json") else None
                    if content is not None:
                        yield f"{path}:{member.name}", parse(content.read())
        else:
            yield str(path), parse(path.read_bytes())


def parse(content: bytes) -> Any:
    """The JSON, or None for a file that is not one document (a log of JSON lines, say)."""
    try:
        return json.loads(content)
    except ValueError:
        return None


def unwrap(data: Any, origin: str) -> tuple[dict[str, Any] | None, datetime.datetime]:
    """The report in a file and when its run finished; None for a file that holds no report."""
    if isinstance(data, dict) and isinstance(data.get("report"), dict):
        finished = parse_datetime(str(data.get("finished") or ""))
        return data["report"], finished or date_of(origin)
    if isinstance(data, dict) and {"harness_version", "hardware", "queries"} <= set(data):
        return data, date_of(origin)
    return None, timezone.now()


def date_of(origin: str) -> datetime.datetime:
    """The session's date its folder names (docs/results/2026-12-02-h200-...), else now."""
    found = DATE_IN_PATH.search(origin)
    if found is None:
        return timezone.now()
    day = datetime.date.fromisoformat(found.group(1))
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)


def manifest_key(manifest: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(manifest.get(key, "")) for key in MANIFEST_KEYS)


def example_sets() -> dict[tuple[str, ...], Path]:
    """The examples/ and reference/ folders by what their manifest says (the key a report's manifest is
    matched on)."""
    folders = {}
    for manifest in sorted(m for source in SOURCES for m in source.rglob("manifest.json")):
        folders[manifest_key(json.loads(manifest.read_text()))] = manifest.parent
    return folders


def sources_sha256(folder: Path) -> str:
    """The digest of what a kernel set runs: its manifest and kernel files (not its dotfiles)."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.name == "manifest.json" or KERNEL_NAME.match(path.name):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def changed(origin: str, folder: Path) -> bool:
    """Whether the sources.json beside the report's archive or folder records other sources for the
    folder than it holds now (False where there is no record)."""
    where = Path(origin.split(":", 1)[0])
    recorded = recorded_sources(where if where.is_dir() else where.parent)
    digest = recorded.get(str(folder.relative_to(settings.BASE_DIR)))
    return digest is not None and digest != sources_sha256(folder)


@functools.cache
def recorded_sources(results: Path) -> dict[str, str]:
    """A results folder's sources.json (read once for all its reports), or {} without one."""
    record = results / "sources.json"
    return json.loads(record.read_text()) if record.is_file() else {}


def set_of(folder: Path, owner: Any, *, since: datetime.datetime) -> Submission:
    """The set of this examples/ folder the owner has (`make run` submits some), else a new one with no
    runs queued (its results are the imported ones), uploaded `since`."""
    digest = folder_sha256(folder)
    existing = Submission.objects.filter(uploader=owner, archive_sha256=digest).order_by("created", "id")
    if (first := existing.first()) is not None:
        return first
    kernel_set: KernelSet = kernel_set_from_dir(folder)
    submission = services.submission_create(
        uploader=owner, kernel_set=kernel_set, archive_sha256=digest, enqueue=False, hardware=[]
    )
    Submission.objects.filter(pk=submission.pk).update(created=since)  # not "0 minutes ago" on a new site
    submission.refresh_from_db()
    return submission


def hardware_of(report: dict[str, Any]) -> Hardware:
    """The report's hardware as the site names it (the slug `dkb_setup` gives that machine); a new one
    is inactive, since no worker here evaluates on it."""
    described = report.get("hardware") or {}
    device = str(described.get("device") or "cpu")
    name = str(described.get("name") or "unknown")
    slug = slugify(f"{device}-{name}")[:90]
    hardware, _ = Hardware.objects.get_or_create(
        slug=slug,
        defaults={
            "name": name,
            "device": device,
            "peak_bandwidth_gbs": described.get("peak_bandwidth_gbs"),
            "scale_factor": report.get("scale_factor") or 1,
            "queue": slug,
            "active": False,
        },
    )
    return hardware

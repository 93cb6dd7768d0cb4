"""Per-user upload limits, counted from the stored submissions: exact across web processes and restarts,
and nothing to keep in a cache. The API applies them as a DRF throttle, the web form through the same
function."""

from __future__ import annotations

import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from leaderboard.models import EvaluationRun, Submission

WINDOW = datetime.timedelta(hours=1)


def upload_limit(kind: str) -> int:
    if kind == EvaluationRun.Kind.FEEDBACK:
        return settings.DKB_FEEDBACK_PER_HOUR
    return settings.DKB_UPLOADS_PER_HOUR


def upload_wait_s(*, user: Any, kind: str) -> float | None:
    """Seconds until the user may upload another set of this kind; None when they may now. Staff are not
    limited (reruns and examples)."""
    if user.is_staff:
        return None
    limit = upload_limit(kind)
    now = timezone.now()
    times = list(
        Submission.objects.uploads_of(user=user, kind=kind)
        .filter(created__gt=now - WINDOW)
        .order_by("-created")
        .values_list("created", flat=True)[:limit]
    )
    if len(times) < limit:
        return None
    # The oldest upload still counted leaves the window first.
    return max(1.0, (times[-1] + WINDOW - now).total_seconds())


def rate_limited_message(*, kind: str, wait_s: float) -> str:
    limit = upload_limit(kind)
    what = ("feedback upload" if kind == EvaluationRun.Kind.FEEDBACK else "upload") + "s" * (limit != 1)
    minutes = max(1, round(wait_s / 60))
    return f"at most {limit} {what} an hour: try again in {minutes} minute{'s' * (minutes != 1)}"


class UploadThrottle(BaseThrottle):
    """DRF's throttle interface over `upload_wait_s`, for the kind the request asks for."""

    def allow_request(self, request: Request, view: Any) -> bool:
        kind = request.data.get("kind") or EvaluationRun.Kind.RANKED
        self.kind = kind if kind in EvaluationRun.Kind.values else EvaluationRun.Kind.RANKED
        self.wait_s = upload_wait_s(user=request.user, kind=self.kind)
        return self.wait_s is None

    def wait(self) -> float | None:
        return self.wait_s

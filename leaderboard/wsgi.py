"""WSGI entry point for gunicorn: `gunicorn leaderboard.wsgi`."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

application = get_wsgi_application()

"""Settings for the DataKernelBench leaderboard, read from the environment.

With no environment at all this runs locally: SQLite in var/, django-q2's ORM broker, a file cache, the
bubblewrap sandbox and TPC-H SF0.01 in var/data. Production sets DATABASE_URL, REDIS_URL, SECRET_KEY,
ALLOWED_HOSTS and the DKB_* values (see docker/).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from evaluator.tpch.scales import check_scale_factors

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DKB_VAR_DIR", BASE_DIR / "var"))


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ImproperlyConfigured(f"{name} must be positive, got {value}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _dev_secret_key() -> str:
    """A random key kept in var/ so that every gunicorn worker and restart shares it (sessions survive)."""
    path = VAR_DIR / "dev-secret-key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: when two workers start at once, one writes and the other reads what it wrote.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "") or _dev_secret_key()
ALLOWED_HOSTS = [
    h.strip() for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",") if h.strip()
]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env_str("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]
SITE_NAME = env_str("SITE_NAME", "DataKernelBench")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    # Swagger UI's files, served from static/ like the site's: /api/docs/ loads nothing from a CDN.
    "drf_spectacular_sidecar",
    "django_q",
    "leaderboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "leaderboard.urls"
WSGI_APPLICATION = "leaderboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "leaderboard.views.site_context",
            ],
        },
    },
]

_sqlite_path = VAR_DIR / "db.sqlite3"
DATABASES = {
    "default": dj_database_url.config(default=f"sqlite:///{_sqlite_path}", conn_max_age=60),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # The web server and the worker write the same file: IMMEDIATE transactions and a busy timeout
    # turn "database is locked" into a short wait, and WAL lets pages read while a report is stored.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL;",
    }
    # A file, not :memory:, so a real `manage.py qcluster` started by a test sees the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "dkb",
        }
    }
else:
    # Shared by the web processes and the worker, so a generation bump by one is seen by all.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "upload"
LOGOUT_REDIRECT_URL = "index"
# Sign-ups per client address and hour: enough for a lab behind one NAT, not for a script.
DKB_SIGNUPS_PER_HOUR = env_int("DKB_SIGNUPS_PER_HOUR", 5, minimum=1)
# Password-reset mail goes to the console (the process's log) unless a real backend is configured.
EMAIL_BACKEND = env_str("DKB_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DKB_FROM_EMAIL", "leaderboard@localhost")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# Serve straight from static/ when collectstatic has not run (make run), still through WhiteNoise,
# which warns on every request when its root is missing.
WHITENOISE_USE_FINDERS = True
try:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
except OSError:
    pass

# Uploads are small (a kernel set is at most 8 MiB); keep them in memory and refuse anything larger.
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.JSONParser",
    ],
    # Lists only (GET /api/runs/ ...): ?page=N&page_size=M, see leaderboard/pagination.py.
    "DEFAULT_PAGINATION_CLASS": "leaderboard.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "leaderboard.schema.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": f"{SITE_NAME} API",
    "DESCRIPTION": "Kernel sets, their evaluation runs and per-query results; see docs/api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Uploads are multipart: separate request and response components keep file fields out of responses.
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two models have a "status": name their enums apart.
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "leaderboard.models.EvaluationRun.Status",
        "ResultStatusEnum": "leaderboard.models.QueryResult.Status",
    },
}

# The evaluation: where data lives, how kernels are isolated, how long one set may take.
DKB_DATA_DIR = Path(env_str("DKB_DATA_DIR", str(VAR_DIR / "data")))
# docker: each runner in a container of DKB_EVALUATOR_IMAGE (pinned by digest) on GPU DKB_DOCKER_GPU,
# both read by sandbox/docker.py.
DKB_SANDBOX = env_choice("DKB_SANDBOX", "bubblewrap", ("bubblewrap", "docker", "process"))
DKB_SCALE_FACTOR = env_float("DKB_SCALE_FACTOR", 0.01)
DKB_DEVICE = env_choice("DKB_DEVICE", "auto", ("auto", "cpu", "cuda"))
# Further scale factors of the correctness trials (evaluator/tpch/scales.py): "auto" is a tenth of the
# hardware's when that is >= 1 (SF1 beside SF10), "none", or a list such as "1,0.1".
DKB_CHECK_SCALE_FACTORS = env_str("DKB_CHECK_SCALE_FACTORS", "auto").strip().lower()
try:
    check_scale_factors(DKB_CHECK_SCALE_FACTORS, 1.0)
except ValueError as exc:
    raise ImproperlyConfigured(f"DKB_CHECK_SCALE_FACTORS: {exc}") from None
DKB_EVAL_TIMEOUT_S = env_int("DKB_EVAL_TIMEOUT_S", 1800, minimum=10)
DKB_QUEUE = env_str("DKB_QUEUE", "dkb")
# A worker renews its lease on the run it evaluates every quarter of DKB_WORKER_LEASE_S; a running run
# whose lease is older than that has lost its worker (killed, its host gone) and is queued again, up to
# DKB_RUN_ATTEMPTS attempts in all (leaderboard.services.evaluation_reclaim_stale, docs/deploy.md).
DKB_WORKER_LEASE_S = env_int("DKB_WORKER_LEASE_S", 120, minimum=4)
DKB_RUN_ATTEMPTS = env_int("DKB_RUN_ATTEMPTS", 2, minimum=1)
# How often the workers' scheduler runs that reclaim (dkb_setup's schedule; django-q2 looks every 30 s).
DKB_RECLAIM_EVERY_MIN = env_int("DKB_RECLAIM_EVERY_MIN", 10, minimum=1)
# Per user and hour (staff exempt): ranked uploads take the GPU for minutes each; feedback runs are quicker
# (only the set's own queries) and a repair loop sends many.
DKB_UPLOADS_PER_HOUR = env_int("DKB_UPLOADS_PER_HOUR", 10, minimum=1)
DKB_FEEDBACK_PER_HOUR = env_int("DKB_FEEDBACK_PER_HOUR", 60, minimum=1)

Q_CLUSTER = {
    "name": DKB_QUEUE,
    # A GPU host runs `Q_CLUSTER_NAME=<hardware queue> manage.py qcluster`; django-q2 wants this key then.
    "ALT_CLUSTERS": {},
    # One evaluation at a time per host: concurrent runs would share the device and spoil the timings.
    "workers": env_int("DKB_WORKERS", 1, minimum=1),
    # The sandbox kills an evaluation at DKB_EVAL_TIMEOUT_S; the worker's own limit sits above it, and
    # the broker's redelivery above that, so a slow but healthy run is never delivered twice.
    "timeout": DKB_EVAL_TIMEOUT_S + 120,
    "retry": DKB_EVAL_TIMEOUT_S + 240,
    "max_attempts": 1,
    "ack_failures": True,
    "catch_up": False,
    "save_limit": 1000,
    "label": "Evaluation queue",
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"
    Q_CLUSTER["poll"] = 1

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "leaderboard": {"handlers": ["console"], "level": env_str("DKB_LOG_LEVEL", "INFO")},
    },
}

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

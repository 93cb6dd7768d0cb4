# The README's two commands: `make run` and `make test`. Everything else here serves them.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Where torch comes from. The machines we develop on have the CPU build of torch 2.13.0 on local disk,
# which plain pip picks up; elsewhere pass TORCH_INDEX=https://download.pytorch.org/whl/cpu so pip does
# not fetch a multi-GB CUDA build on a machine without a GPU.
TORCH_INDEX ?=
export DKB_DATA_DIR ?= $(CURDIR)/var/data
# Real GPU numbers for a new site: the H200 runs the site itself made of the example sets (harness 0.6.0,
# then 0.6.4) and of the reference sets (0.6.4), imported as published results beside the local CPU
# checks; a set whose sources changed since its run is skipped (its results folder's sources.json).
H200_REPORTS ?= docs/results/2026-12-03-h200-site-s9/reports.tgz docs/results/2026-12-04-h200-s13/reports.tgz

.PHONY: run test install bubblewrap chromium lint format gpu-wheels clean images deploy-test

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# bubblewrap is the default sandbox: install it from Debian's packages where we can (root + apt).
bubblewrap:
	@command -v bwrap >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq bubblewrap || (apt-get update -qq && apt-get install -y -qq bubblewrap)) >/dev/null; \
	else \
	  echo "bubblewrap is not installed and cannot be installed here (needs root + apt)."; \
	  echo "The worker will refuse to evaluate kernels; to accept running them unisolated, use"; \
	  echo "  make run DKB_SANDBOX=process"; \
	fi

# Debian's Chromium drives the browser tests (Playwright's own browser download cannot work offline).
chromium:
	@command -v chromium >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq chromium || (apt-get update -qq && apt-get install -y -qq chromium)) >/dev/null; \
	else \
	  echo "chromium is not installed (apt-get install chromium): the browser tests will fail"; \
	fi

# Serves at once: the examples are queued for the worker started here, their CPU checks land minutes later.
run: install bubblewrap
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) -m evaluator prepare --sf 0.01
	$(PY) manage.py dkb_setup
	$(PY) manage.py dkb_submit examples/triton-q06-full --user demo --skip-existing
	$(PY) manage.py dkb_submit examples/triton-q06-core --user demo --skip-existing
	$(PY) manage.py dkb_import_reports $(H200_REPORTS)
	@# The worker in a session of its own, stopped by SIGTERM to it alone: sent to its whole group (as
	@# Ctrl-C and `kill 0` do) it never exits (django-q2 issue #66); what is left after 20 s is killed.
	@setsid $(PY) manage.py qcluster & worker=$$!; \
	$(VENV)/bin/gunicorn leaderboard.wsgi --bind $(HOST):$(PORT) --workers 2 --access-logfile - & web=$$!; \
	trap 'trap - EXIT INT TERM; kill $$web $$worker 2>/dev/null; \
	  for i in $$(seq 40); do kill -0 $$worker 2>/dev/null || break; sleep 0.5; done; \
	  kill -KILL -- -$$worker 2>/dev/null; exit 0' EXIT INT TERM; \
	for i in $$(seq 100); do $(PY) -c "import urllib.request; urllib.request.urlopen('http://$(HOST):$(PORT)/')" 2>/dev/null && break; sleep 0.2; done; \
	echo; echo "DataKernelBench leaderboard: http://$(HOST):$(PORT)/  (Ctrl-C stops it)"; echo; \
	wait

test: install bubblewrap chromium
	$(PY) -m pytest

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format:
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Containers (docs/deploy.md): the images from Debian's packages and PyPI (podman or docker), then the
# composed stack started, fed an upload through the API and stopped. `make deploy-test` installs podman
# where it can (root + apt); without an engine the test skips and says why.
images:
	nice -n 10 scripts/images.sh

deploy-test: install
	@command -v podman >/dev/null || command -v docker >/dev/null || \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq podman runc debootstrap || (apt-get update -qq && apt-get install -y -qq podman runc debootstrap)) >/dev/null; \
	fi
	$(PY) -m pytest tests/deploy -p no:cacheprovider

# Wheels and bubblewrap for the lent GPU host (nothing can be installed there).
gpu-wheels:
	bash ../shared/gpu/wheels.sh
	bash ../shared/gpu/bubblewrap.sh

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache

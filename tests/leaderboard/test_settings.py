from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from leaderboard.settings import env_bool, env_choice, env_float, env_int


def test_env_helpers_fall_back_to_defaults_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DKB_X", raising=False)
    assert env_bool("DKB_X", True) is True
    assert env_int("DKB_X", 7) == 7
    assert env_float("DKB_X", 0.5) == 0.5
    assert env_choice("DKB_X", "cpu", ("cpu", "cuda")) == "cpu"


def test_env_helpers_read_typed_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DKB_X", "0")
    assert env_bool("DKB_X", True) is False
    assert env_int("DKB_X", 7) == 0


@pytest.mark.parametrize(
    "helper",
    [
        lambda: env_bool("DKB_X", False),
        lambda: env_int("DKB_X", 1),
        lambda: env_float("DKB_X", 1.0),
        lambda: env_choice("DKB_X", "cpu", ("cpu", "cuda")),
    ],
)
def test_a_malformed_value_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch, helper) -> None:
    monkeypatch.setenv("DKB_X", "banana")
    with pytest.raises(ImproperlyConfigured, match="DKB_X"):
        helper()


def test_an_integer_below_its_minimum_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DKB_X", "3")
    with pytest.raises(ImproperlyConfigured, match="at least 10"):
        env_int("DKB_X", 60, minimum=10)


def test_the_worker_timeout_exceeds_the_evaluation_and_the_retry_exceeds_the_timeout(settings) -> None:
    assert settings.Q_CLUSTER["timeout"] > settings.DKB_EVAL_TIMEOUT_S
    assert settings.Q_CLUSTER["retry"] > settings.Q_CLUSTER["timeout"]


def test_bad_check_scale_factors_stop_the_site_from_starting() -> None:
    import os
    import subprocess
    import sys

    env = os.environ | {"DKB_CHECK_SCALE_FACTORS": "1,-2", "DJANGO_SETTINGS_MODULE": "leaderboard.settings"}
    setup = [sys.executable, "-c", "import django; django.setup()"]
    done = subprocess.run(setup, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "DKB_CHECK_SCALE_FACTORS: '1,-2': scale factors are positive" in done.stderr

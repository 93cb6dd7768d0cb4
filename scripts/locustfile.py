"""Locust's clients for scripts/load_site.sh: each asks for the home page again as soon as it has it."""

from __future__ import annotations

from locust import HttpUser, constant, task


class Visitor(HttpUser):
    # No think time: 50 such clients are 50 requests always in flight, what the server can take at most.
    wait_time = constant(0)

    @task
    def home(self) -> None:
        self.client.get("/", name="home")

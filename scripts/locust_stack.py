"""Locust's clients for scripts/load_stack.sh: the leaderboard page and the API's submission list."""

from __future__ import annotations

from locust import HttpUser, constant, task


class Visitor(HttpUser):
    # No think time: every client has a request in flight at all times, the most the server is asked.
    wait_time = constant(0)

    @task
    def home(self) -> None:
        self.client.get("/", name="home")

    @task
    def api_list(self) -> None:
        self.client.get("/api/submissions/", name="api submissions")

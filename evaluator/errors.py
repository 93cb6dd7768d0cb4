"""Errors say whose fault they are: the submitter's (shown to them, with a stable code) or ours."""

from __future__ import annotations


class SubmissionError(Exception):
    """Something wrong with the uploaded kernel set; the message is shown to the uploader."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class EvaluatorError(Exception):
    """Our fault (missing data, broken environment): logged and retried, never blamed on the user."""

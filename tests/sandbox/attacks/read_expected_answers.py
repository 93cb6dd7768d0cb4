"""Reading the expected answers: DuckDB's database file sits in the data folder the runner reads."""

import os


def _request():
    """The runner's request: its file is deleted before the kernel is imported, but the runner's own
    stack frames still hold it, and admission does not look at tracebacks."""
    try:
        raise LookupError
    except LookupError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None:
        if isinstance(frame.f_locals.get("request"), dict):
            return frame.f_locals["request"]
        frame = frame.f_back
    raise LookupError("no request on the runner's stack")


def run_query(tables, **params):
    data = _request()["sf_folder"]
    with open(os.path.join(data, "tpch.duckdb"), "rb") as answers:
        answers.read(4096)
    raise AssertionError("the kernel read DuckDB's file")

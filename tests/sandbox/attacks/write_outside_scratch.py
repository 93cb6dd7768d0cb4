"""Writing outside its scratch: into the TPC-H data every later run reads, then beside its own file."""

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
    data = _request()["sf_folder"]  # the runner's request names the data folder
    here = os.path.dirname(__file__)
    for target in (os.path.join(data, "lineitem", "l_discount.npy"), os.path.join(here, "q01.py")):
        try:
            with open(target, "wb") as f:
                f.write(b"planted")
        except OSError as exc:
            print(target, exc.strerror)
    raise PermissionError("every write outside the scratch folder was refused")

"""Writing outside its scratch: into the TPC-H data every later run reads, then beside its own file."""

import os


def _data_folder():
    """The TPC-H folder the runner reads: bound into the sandbox at its own path, so listed among the
    process's mounts."""
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            point = line.split()[4]
            if os.path.exists(os.path.join(point, "meta.json")):
                return point
    raise LookupError("no data folder among the mounts")


def run_query(tables, **params):
    data = _data_folder()
    here = os.path.dirname(__file__)
    for target in (os.path.join(data, "lineitem", "l_discount.npy"), os.path.join(here, "q01.py")):
        try:
            with open(target, "wb") as f:
                f.write(b"planted")
        except OSError as exc:
            print(target, exc.strerror)
    raise PermissionError("every write outside the scratch folder was refused")

"""Opening a socket: a connection to the host's PostgreSQL, which listens on 127.0.0.1:5432."""

import socket


def run_query(tables, **params):
    socket.create_connection(("127.0.0.1", 5432), timeout=2)
    raise AssertionError("the kernel reached the host's database")

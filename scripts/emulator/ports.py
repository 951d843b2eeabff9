"""Local TCP ports for controllers that must not collide with another one
running on the machine (someone else's, on the default ports)."""
import socket


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]

"""Compile the fat-tree simulator and the pipeline's path driver.

Both go to ``scripts/sim/ns3/bin/`` (git-ignored) and are rebuilt only
when a source is newer (scripts.letflow.ns3.build compiles them: g++
against the ns3 package's headers and libraries).

    python -m scripts.sim.ns3.build [--force]
"""
import sys
from pathlib import Path

from scripts.letflow.ns3.build import build_main, build_program

SOURCE_DIR = Path(__file__).resolve().parent
BUILD_DIR = SOURCE_DIR / "bin"
PIPELINE = [SOURCE_DIR / "of_pipeline.h", SOURCE_DIR / "flowlet_table.h"]
HOST_TCP = SOURCE_DIR / "host_tcp.h"


def path_trace(force: bool = False) -> Path:
    """The driver that walks packets through an export (needs only g++)."""
    return build_program(SOURCE_DIR / "path_trace.cc", BUILD_DIR / "path_trace", PIPELINE,
                         force=force)


def simulator(force: bool = False) -> Path:
    """The ns-3 fat-tree whose switches run the exported rules."""
    return build_program(SOURCE_DIR / "fattree_sim.cc", BUILD_DIR / "fattree_sim", [*PIPELINE, HOST_TCP],
                         with_ns3=True, force=force)


def main(argv=None) -> int:
    return build_main([path_trace, simulator], __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())

"""Compile the LetFlow ns-3 simulator and the flowlet-table trace tool.

g++ builds against the headers and shared libraries shipped inside the PyPI
``ns3`` package (its pkg-config files point at the wheel's build machine, so
the paths are derived from the installed package instead).  Binaries go to
``scripts/letflow/ns3/bin/`` (git-ignored) and are rebuilt only when a source is
newer, so calling this again is cheap.

    python -m scripts.letflow.ns3.build [--force]
"""

import argparse
import ctypes.util
import fcntl
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent
BUILD_DIR = SOURCE_DIR / "bin"
# shared with the fat-tree simulator: the flowlet table (its pipeline's flowlet
# groups), the hosts' TCP and main()
SHARED_DIR = SOURCE_DIR.parent.parent / "sim" / "ns3"
HEADERS = [SHARED_DIR / "flowlet_table.h", SHARED_DIR / "host_tcp.h"]
NS3_MODULES = ["core", "network", "internet", "point-to-point", "applications",
               "traffic-control"]
CXXFLAGS = ["-std=c++20", "-O3", "-DNDEBUG", "-Wall", "-Wno-unused-parameter"]


class BuildError(RuntimeError):
    """The toolchain or the ns3 package is missing, or compilation failed."""


def ns3_root() -> Path:
    spec = importlib.util.find_spec("ns3")  # locates without the slow import
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("the Python package 'ns3' is not installed; "
                         "install it with: pip install ns3==3.44.post0")
    root = Path(list(spec.submodule_search_locations)[0])
    if not (root / "include" / "ns3" / "core-module.h").exists():
        raise BuildError(f"the ns3 package at {root} has no C++ headers")
    return root


def compiler() -> str:
    cxx = shutil.which("g++")
    if cxx is None:
        raise BuildError("g++ not found; install it with: apt-get install g++")
    return cxx


def _stale(target: Path, sources) -> bool:
    return not target.exists() or any(s.stat().st_mtime > target.stat().st_mtime for s in sources)


def _compile(command, target: Path) -> None:
    print(f"building {target.name} ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise BuildError(f"compiling {target.name} failed:\n{done.stderr}")


def _ns3_libraries(lib_dir: Path):
    libs = []
    for module in NS3_MODULES:
        matches = sorted(lib_dir.glob(f"libns3*-{module}.so"))
        if not matches:
            raise BuildError(f"the ns3 package lacks the {module} library in {lib_dir}")
        libs.append("-l:" + matches[0].name)
    return libs


def allocator_flags():
    """Link flags that make jemalloc every ns-3 program's malloc, when the
    machine has it (setup installs it for ovs-vswitchd): ns-3 allocates and
    frees per packet and per event; with it (and -O3) the fat-tree simulator
    ran 9% fewer instructions and took 10-15% less CPU time, with the same
    output. Linked even though no symbol of ours needs it, so that the ns-3
    libraries' malloc resolves to it too."""
    library = ctypes.util.find_library("jemalloc")
    if library is None:
        return []
    return ["-Wl,--push-state,--no-as-needed", f"-l:{library}", "-Wl,--pop-state"]


def build_program(source: Path, target: Path, headers=(), with_ns3: bool = False,
                  force: bool = False) -> Path:
    """Compile one C++ program with g++ (and the ns3 package's headers and
    libraries when ``with_ns3``), unless ``target`` is newer than its sources.
    One build at a time per target, under a lock: the runner's processes
    each ask for the simulator as a run starts, and the program appears
    whole (compiled beside it, then renamed) while others run the old one."""
    sources = [source, *headers, Path(__file__)]  # this file: the flags
    if not (force or _stale(target, sources)):
        return target
    target.parent.mkdir(exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if force or _stale(target, sources):  # another process may have built it while this one waited
            partial = target.with_name(target.name + ".partial")
            command = [compiler(), *CXXFLAGS]
            if with_ns3:
                root = ns3_root()
                lib_dir = root / "lib64"
                # No NS3_LOG_ENABLE: our own code logs nothing through ns-3, so its
                # NS_LOG calls compile away (the libraries' are compiled in the wheel).
                command += [f"-I{root / 'include'}", str(source), "-o", str(partial),
                            f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}", *_ns3_libraries(lib_dir),
                            *allocator_flags()]
            else:
                command += [str(source), "-o", str(partial)]
            _compile(command, target)
            partial.replace(target)
    return target


def trace_tool(force: bool = False) -> Path:
    """The controlled-clock flowlet table driver (needs only g++)."""
    return build_program(SOURCE_DIR / "flowlet_trace.cc", BUILD_DIR / "flowlet_trace", HEADERS,
                         force=force)


def simulator(force: bool = False) -> Path:
    """The ns-3 leaf-spine simulator (needs g++ and the ns3 package)."""
    return build_program(SOURCE_DIR / "letflow_sim.cc", BUILD_DIR / "letflow_sim", HEADERS,
                         with_ns3=True, force=force)


def build_main(builders, description, argv=None) -> int:
    """A build command: call each of ``builders`` (force) and print what it built."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    args = parser.parse_args(argv)
    try:
        for builder in builders:
            print(builder(args.force))
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    return build_main([trace_tool, simulator], __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())

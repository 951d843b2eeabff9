"""The emulator's own benchmarks: what one machine's Open vSwitch, shaped
links and daemons can carry (latency, a shaped link and its profile, the
highest faithful rate, the cost of a port), as opposed to the experiments
over the designs (scripts/fattree/), which run on either backend."""

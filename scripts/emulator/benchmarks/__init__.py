"""The emulator's own benchmarks: what one machine's Open vSwitch, shaped
links and daemons can carry (latency, a shaped link and its profile, the
highest faithful rate, the cost of a port, the calibration's chain), what
a fabric costs to start and stop (startup), what the live view costs its
controller (view_cost), and the fabric over container servers (cluster).
They run experiments to measure the backend: beside it, not in it."""

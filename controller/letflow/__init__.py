"""LetFlow (Vanini et al., NSDI 2017): workloads, the section 4.2 Markov
model and the ns-3 packet simulator.

The models are pure Python (numpy/scipy); the switch logic itself is C++ here
(letflow_sim.cc, flowlet_table.h), built by build.py and driven by sim.py.
"""

"""LetFlow (Vanini et al., NSDI 2017): the section 4.2 Markov model, as pure
Python (numpy/scipy). Its flow-size workloads are scripts/workloads/,
shared with the emulated FCT experiment.

The switch logic runs in the ns-3 packet simulator, which is LetFlow's
experiment harness rather than a controller: scripts/letflow/ns3/ (C++
sources, their build and the scenario runner).
"""

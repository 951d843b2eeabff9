"""LetFlow (Vanini et al., NSDI 2017): workloads and the section 4.2 Markov model.

Pure Python (numpy/scipy); the switch logic itself is C++ in scripts/letflow/.
"""

"""Command line, Mininet runner, failure injection, traffic tools and per-system experiments."""
import os

# The checkout's root: the working directory for processes started by module name.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

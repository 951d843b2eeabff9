"""What `dcfabric --help` loads: no numeric library (the flow-size CDFs'
sampling and the reports' statistics are loaded when an experiment runs)."""
import subprocess
import sys


def test_help_loads_no_numpy():
    code = ('import sys\nfrom scripts import cli\n'
            'try:\n    cli.main(["--help"])\nexcept SystemExit:\n    pass\n'
            'print("numpy" in sys.modules)')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == 'False'

"""How every dcfabric command ends: an expected error with its message, an
interruption with whether everything it made is gone."""
import argparse
import sys


def run_command(name, work, errors=()):
    """Run ``work()`` as the command ``name``. A SetupError, FaultError,
    ValueError, TimeoutError or one of ``errors`` ends it with ``name: the
    message`` (exit status 1); Ctrl-C with what teardown left (the fabric's
    own handlers have torn down by then)."""
    from scripts.emulator import run_record
    from scripts.emulator.errors import SetupError
    from scripts.emulator.faults import FaultError
    try:
        return work()
    except (SetupError, FaultError, ValueError, TimeoutError) + tuple(errors) as err:
        sys.exit('%s: %s' % (name, err))
    except KeyboardInterrupt:
        sys.exit('%s: interrupted; %s' % (name, run_record.teardown_state()))


def command_main(prog, doc, add_arguments, run, name, errors=()):
    """An experiment's ``main(argv)``: its options from ``add_arguments``,
    then ``run(args)`` as the command ``name`` (``run_command``)."""
    def main(argv=None):
        parser = argparse.ArgumentParser(prog=prog, description=doc,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        add_arguments(parser)
        args = parser.parse_args(argv)
        run_command(name, lambda: run(args), errors)
    return main

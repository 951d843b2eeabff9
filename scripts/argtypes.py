"""Argument types and options the command lines share (dcfabric and every
experiment): one definition each, with errors that name the bad value."""
import argparse

from topologies.fattree import check_k
from topologies.model import check_int


def positive(kind):
    """argparse type: a number of ``kind`` (int or float) above zero."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError('not a number: %s' % text) from None
        if kind is int:
            return check_int(value, 'the value', 1, argparse.ArgumentTypeError)
        if value <= 0:
            raise argparse.ArgumentTypeError('must be positive, got %s' % text)
        return value
    return parse


def seconds(minimum_exclusive=True):
    """argparse type: a time in seconds, whole or with a fraction (a whole
    one stays an int, so results files keep writing 10, not 10.0); above
    zero, or with ``minimum_exclusive`` False zero or more."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError('not a number: %s' % text) from None
        if value != value or value in (float('inf'), float('-inf')) or value < 0 \
                or (minimum_exclusive and value == 0):
            raise argparse.ArgumentTypeError('must be %s, got %s'
                                             % ('positive' if minimum_exclusive else 'zero or more', text))
        return int(value) if value.is_integer() else value
    return parse


def non_negative_int(text):
    """argparse type: a whole number, 0 or more (0 often meaning "off")."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('not an integer: %s' % text) from None
    return check_int(value, 'the value', 0, argparse.ArgumentTypeError)


def fattree_k(text):
    """argparse type: a fat-tree arity the paper's addressing can express."""
    try:
        return check_k(int(text) if text.lstrip('-').isdigit() else text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_seed_options(parser, reps, seed_base, per='repetition'):
    """``--seeds S [S ...]``, or ``--reps N`` seeds counted up from
    ``--seed-base B``: one ``per`` each. ``seeds_of`` reads them back."""
    parser.add_argument('--seeds', type=int, nargs='+', metavar='SEED',
                        help='the seeds, one %s each (instead of --reps and --seed-base)' % per)
    parser.add_argument('--reps', type=positive(int),
                        help='how many seeds, counted up from --seed-base (default %d)' % reps)
    parser.add_argument('--seed-base', type=int,
                        help='the first seed of --reps (default %d)' % seed_base)
    parser.set_defaults(seed_defaults=(reps, seed_base))


def seeds_of(args):
    """The seeds ``add_seed_options`` asked for, as a list; ValueError for
    --seeds beside --reps or --seed-base, or a seed given twice."""
    reps, base = args.seed_defaults
    if args.seeds is not None:
        if args.reps is not None or args.seed_base is not None:
            raise ValueError('give either --seeds or --reps/--seed-base, not both')
        if len(set(args.seeds)) != len(args.seeds):
            raise ValueError('--seeds repeats a seed: %s' % ' '.join(map(str, args.seeds)))
        return list(args.seeds)
    base = base if args.seed_base is None else args.seed_base
    return list(range(base, base + (reps if args.reps is None else args.reps)))

"""Start ryu-manager with a dcfabric app: the one place that applies the
eventlet shim Ryu 4.34 needs on Python >= 3.11 (no eventlet release works
unpatched there: ryu.app.wsgi imports eventlet.wsgi.ALREADY_HANDLED, which
eventlet >= 0.30.3 dropped, and older eventlet crashes on 3.11), and that
binds the OpenFlow and REST listeners to 127.0.0.1 unless told otherwise.

    python -m controller.ryuapp.manager APP_MODULE --params '{"k": 4}' [--ofp-port 6653]
        [--rest-port 8080] [--listen 127.0.0.1] [--log FILE] [--stats-period 2]
"""
import argparse
import json
import socket
import sys


class PortInUseError(RuntimeError):
    pass


def check_port_free(host, port, what):
    """Fail early, naming the port, when another process (say, another
    controller) already listens there."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            raise PortInUseError('%s port %s:%d is already in use (another controller?): %s'
                                 % (what, host, port, err.strerror)) from None


def fabric_params():
    """The fabric parameters the launcher was given, for the app to build its model."""
    from ryu import cfg
    return json.loads(cfg.CONF.dcfabric_params)


def stats_period():
    """Seconds between the live view's and the metrics' counter polls (0:
    none; None: by fabric size, see observation.poll_period)."""
    from ryu import cfg
    return cfg.CONF.dcfabric_stats_period


def _period(text):
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError('must be >= 0 (0: no polling), got %s' % text)
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='controller.ryuapp.manager', description=__doc__.split('\n\n')[0])
    parser.add_argument('app', help='Ryu app module, e.g. controller.fattree.routing_app')
    parser.add_argument('--params', default='{}', help='fabric parameters as JSON')
    parser.add_argument('--listen', default='127.0.0.1', help='address to bind OpenFlow/REST to')
    parser.add_argument('--ofp-port', type=int, default=6653)
    parser.add_argument('--rest-port', type=int, default=8080)
    parser.add_argument('--log', help='log file (default: stderr)')
    parser.add_argument('--stats-period', type=_period,
                        help='seconds between port/flow/group counter polls for the live view and '
                             'metrics (0: none; port states still come from port-status messages; '
                             'default: 2, longer above 80 switches)')
    parser.add_argument('--verbose', action='store_true')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    json.loads(args.params)
    try:
        check_port_free(args.listen, args.ofp_port, 'OpenFlow')
        check_port_free(args.listen, args.rest_port, 'REST')
    except PortInUseError as err:
        sys.exit('controller: %s' % err)

    import warnings
    warnings.filterwarnings('ignore', message='.*Eventlet is deprecated')
    import eventlet.wsgi
    eventlet.wsgi.ALREADY_HANDLED = b''  # ryu.app.wsgi imports it; removed in eventlet 0.30.3
    from ryu import cfg
    from ryu.cmd import manager
    cfg.CONF.register_cli_opts([cfg.StrOpt('dcfabric-params', default='{}',
                                           help='dcfabric fabric parameters (JSON)'),
                                cfg.FloatOpt('dcfabric-stats-period', default=None,
                                             help='live view/metrics counter poll period (s)')])
    ryu_args = ['--ofp-listen-host', args.listen, '--ofp-tcp-listen-port', str(args.ofp_port),
                '--wsapi-host', args.listen, '--wsapi-port', str(args.rest_port),
                '--dcfabric-params', args.params]
    if args.stats_period is not None:
        ryu_args += ['--dcfabric-stats-period', str(args.stats_period)]
    if args.log:
        ryu_args += ['--log-file', args.log]
    if args.verbose:
        ryu_args.append('--verbose')
    manager.main(args=ryu_args + [args.app])


if __name__ == '__main__':
    main()

"""The live web view and the Prometheus metrics of a running fabric, served
by Ryu's WSGI on the REST port (127.0.0.1:8080 by default):

  GET /view                    the page (controller/ryuapp/static: plain HTML/SVG/JS)
  GET /view/static/FILE        its script and style sheet
  GET /view/layout             nodes placed by role and coordinates, links (JSON)
  GET /view/state[?since=SEQ]  link states and loads, the app's overlay
                               (avoided links, reservations, DA links, shielded
                               leaves), the switches not yet confirmed, the
                               latest OpenFlow errors and the events from
                               sequence SEQ on (JSON)
  GET /metrics                 Prometheus text format (controller.ryuapp.metrics)

``FabricViewMixin`` goes before FabricApp in a fabric app's bases. It polls every
switch's port descriptions, port counters, flow and group counts (every
``--stats-period`` s of controller.ryuapp.manager, 2 by default), counts
OpenFlow messages, and logs port failures and recoveries (from the app's
one port-state tracker) and OpenFlow errors; an app adds its overlay with
``observed_state()`` and its failure broadcasts with
``observe_broadcast()``. The logic is in controller.ryuapp.observation.
"""
import functools
import inspect
import json
import os
import time

from ryu.app.wsgi import ControllerBase, Response, WSGIApplication, route
from ryu.controller import ofp_event
from ryu.controller.handler import (
    CONFIG_DISPATCHER, DEAD_DISPATCHER, HANDSHAKE_DISPATCHER, MAIN_DISPATCHER, set_ev_cls)
from ryu.lib import hub
from ryu.ofproto import ofproto_v1_3 as ofproto
from ryu.ofproto import ofproto_v1_3_parser as parser

from controller.ryuapp import ofp
from controller.ryuapp.manager import stats_period
from controller.ryuapp.metrics import FabricMetrics
from controller.ryuapp.observation import FabricObservation, PortCounters, layout, overlay_view, poll_period

ERRORS_SHOWN = 20

APP_KEY = 'fabric_view_app'
STATIC_DIR = os.path.join(os.path.dirname(__file__), 'static')
STATIC_TYPES = {'view.js': 'application/javascript', 'view.css': 'text/css'}
# Every OpenFlow 1.3 message a switch can send, as Ryu's event classes.
RECEIVED_EVENTS = sorted({ofp_event.ofp_msg_to_ev_cls(cls) for _, cls in inspect.getmembers(parser, inspect.isclass)
                          if hasattr(cls, 'cls_msg_type')}, key=lambda cls: cls.__name__)


class FabricViewMixin:
    _CONTEXTS = {'wsgi': WSGIApplication}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.observation = FabricObservation(self.topo, time.time, self.ports)
        self.metrics = FabricMetrics(self.observation, lambda: list(self.datapaths), self._metric_extras,
                                     self.confirmations)
        self.view_layout = layout(self.topo)
        self._group_replies = {}  # switch -> groups counted so far in a multipart reply
        kwargs['wsgi'].register(FabricViewRest, {APP_KEY: self})
        self.stats_period = poll_period(stats_period(), len(self.topo.switches))
        if self.stats_period > 0:
            hub.spawn(self._observe_loop)

    def observed_state(self):
        """The app's overlay, names as in the model: 'avoided' [(a, b)],
        'reserved' [(from, to, label)], 'da_links' [(source, spine, destination)],
        'shielded' [switch], and for the metrics 'scheduler' {'placed',
        'reserved', 'rejected'} and 'distda' {'sent': {kind: n}, 'received': ...}.
        The base fabric has none of them."""
        return {}

    def observe_broadcast(self, failed, changed, seconds):
        """The app recomputed its tables for the failed links ``failed`` in
        ``seconds`` and sent the changes to the switches ``changed``."""
        self.metrics.recompute.observe(seconds)
        self.observation.log('broadcast', 'failed links now %s: %d switches updated in %.1f ms' % (
            ', '.join(sorted('-'.join(sorted(link)) for link in failed)) or 'none', len(changed), 1e3 * seconds))

    def port_changed(self, switch, port, before):
        self.observation.port_changed(switch, port, before)
        super().port_changed(switch, port, before)

    def openflow_error(self, record):
        self.observation.log('error', '%s rejected %s: %s' % (
            record['switch'], record['message'] or 'xid %d' % record['xid'], record['error']))
        super().openflow_error(record)

    def _metric_extras(self):
        state = self.observed_state()
        return {'failed_links': len(self.observation.failed_links()),
                'scheduler': state.get('scheduler'), 'distda': state.get('distda')}

    def view_state(self, since):
        return dict(overlay_view(self.topo, self.observed_state()), time=time.time(),
                    connected=sorted(self.datapaths), links=self.observation.links(),
                    failed_links=len(self.observation.failed_links()),
                    unconfirmed=[s.name for s in self.topo.switches if not self.confirmations.confirmed(s.name)],
                    outstanding_errors=len(self.confirmations.outstanding_errors()),
                    openflow_errors=list(self.confirmations.recent)[-ERRORS_SHOWN:],
                    events=self.observation.events_since(since))

    def _observe_loop(self):
        while True:
            hub.sleep(self.stats_period)
            try:
                for datapath in list(self.datapaths.values()):
                    for request in (ofp.port_desc_request, ofp.port_stats_request,
                                    ofp.aggregate_stats_request, ofp.group_desc_request):
                        datapath.send_msg(request(datapath))
            except Exception:  # one bad round must not end the polls for good
                self.logger.exception('live view: counter poll failed')

    def _observed_switch(self, datapath):
        node = self.topo.by_dpid(datapath.id) if datapath.id is not None else None
        return None if node is None else node.name

    def _count_sent(self, datapath):
        send = datapath.send  # what send_msg and the app's batches (ofp.encode_batch) both go through

        def counted_send(buffer, *args, **kwargs):
            switch = self._observed_switch(datapath)
            if switch is not None:
                for is_flow_mod in ofp.flow_mod_flags(buffer):
                    self.observation.message_sent(switch, is_flow_mod)
            return send(buffer, *args, **kwargs)
        datapath.send = counted_send

    # Named to sort before FabricApp's _switch_features: Ryu calls one app's
    # handlers of an event in name order, and the features reply must find
    # its sends already counted when the app installs the switch.
    @set_ev_cls(RECEIVED_EVENTS, [HANDSHAKE_DISPATCHER, CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def _observe_message(self, ev):
        datapath = ev.msg.datapath
        if not getattr(datapath, 'dcfabric_counted', False):
            datapath.dcfabric_counted = True
            self._count_sent(datapath)
        switch = self._observed_switch(datapath)
        if switch is not None:
            self.observation.message_received(switch, type(ev.msg).__name__)

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def _observe_port_stats(self, ev):
        switch, now = self._observed_switch(ev.msg.datapath), time.monotonic()
        if switch is None:
            return
        for stat in ev.msg.body:
            if stat.port_no <= ofproto.OFPP_MAX:
                self.observation.port_stats(switch, stat.port_no, PortCounters(
                    stat.rx_bytes, stat.tx_bytes, stat.rx_packets, stat.tx_packets), now)

    @set_ev_cls(ofp_event.EventOFPAggregateStatsReply, MAIN_DISPATCHER)
    def _observe_aggregate(self, ev):
        switch = self._observed_switch(ev.msg.datapath)
        if switch is not None:
            self.observation.table_sizes(switch, flows=ev.msg.body.flow_count)

    @set_ev_cls(ofp_event.EventOFPGroupDescStatsReply, MAIN_DISPATCHER)
    def _observe_groups(self, ev):
        switch = self._observed_switch(ev.msg.datapath)
        if switch is None:
            return
        counted = self._group_replies.pop(switch, 0) + len(ev.msg.body)
        if ofp.more_replies_follow(ev.msg):
            self._group_replies[switch] = counted
        else:
            self.observation.table_sizes(switch, groups=counted)

    @set_ev_cls(ofp_event.EventOFPStateChange, [MAIN_DISPATCHER, DEAD_DISPATCHER])
    def _observe_connection(self, ev):
        switch = self._observed_switch(ev.datapath)
        if switch is not None:
            connected = ev.state == MAIN_DISPATCHER
            self.observation.log('recovery' if connected else 'failure',
                                 '%s %s' % (switch, 'connected' if connected else 'disconnected'))


class BadRequest(ValueError):
    """A request the view cannot answer; the message says why (400)."""


def _json(status, body):
    return Response(status=status, content_type='application/json', charset='utf-8',
                    body=(json.dumps(body, sort_keys=True) + '\n').encode())


def _error(status, message):
    return _json(status, {'error': message})


def _takes(*allowed):
    """A handler taking only the query parameters ``allowed`` (it gets them
    as ``query``); anything else, or a BadRequest it raises, answers 400."""
    def wrap(handler):
        @functools.wraps(handler)
        def checked(self, req, **kwargs):
            try:
                unknown = sorted(set(req.GET) - set(allowed))
                if unknown:
                    raise BadRequest('unknown parameter(s) %s; this path takes %s'
                                     % (', '.join(unknown), ', '.join(allowed) or 'none'))
                return handler(self, req.GET, **kwargs)
            except BadRequest as err:
                return _error(400, str(err))
        return checked
    return wrap


def _file(name, content_type):
    with open(os.path.join(STATIC_DIR, name), 'rb') as page:
        return Response(status=200, content_type=content_type, charset='utf-8', body=page.read())


class FabricViewRest(ControllerBase):

    def __init__(self, req, link, data, **config):
        super().__init__(req, link, data, **config)
        self.app = data[APP_KEY]

    @route('fabric_view', '/view', methods=['GET'])
    @_takes()
    def page(self, query, **kwargs):
        return _file('index.html', 'text/html')

    @route('fabric_view', '/view/static/{name}', methods=['GET'], requirements={'name': r'[^/]+'})
    @_takes()
    def static(self, query, name, **kwargs):
        if name not in STATIC_TYPES:
            return _error(404, 'no static file %r; there are %s' % (name, ', '.join(sorted(STATIC_TYPES))))
        return _file(name, STATIC_TYPES[name])

    @route('fabric_view', '/view/layout', methods=['GET'])
    @_takes()
    def layout(self, query, **kwargs):
        return _json(200, self.app.view_layout)

    @route('fabric_view', '/view/state', methods=['GET'])
    @_takes('since')
    def state(self, query, **kwargs):
        since = query.get('since', '0')
        if not since.isdigit():
            raise BadRequest('since= must be an event sequence number (integer >= 0), got %r' % since)
        return _json(200, self.app.view_state(int(since)))

    @route('fabric_view', '/metrics', methods=['GET'])
    @_takes()
    def metrics(self, query, **kwargs):
        return Response(status=200, content_type='text/plain', charset='utf-8',
                        body=self.app.metrics.render())

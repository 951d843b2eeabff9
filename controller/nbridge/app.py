"""Ryu app: the K-ary N-Bridge's routing entity (seed 003 section 4) and the
control channel scripts/nbridge/config_err_board.sh talks to.

Start it with
    python -m controller.ryuapp.manager controller.nbridge.app --params '{"shape": [4, 3], "q": 1, "hosts": 1}'

REST (bound to 127.0.0.1 by controller.ryuapp.manager):
  GET  /nbridge                      shape, shielded leaf, connected switches
  POST /nbridge/leaf/COORDS/error    shield LSW(COORDS), e.g. /nbridge/leaf/13,2/error
  POST /nbridge/leaf/COORDS/renew    restore its attached roots' exact pre-fault rules
Answers 200 with what changed once every changed switch has confirmed it
(barrier), 400 for bad coordinates or verb, 409 for a conflicting state.
"""
import json

from ryu.app.wsgi import ControllerBase, Response, WSGIApplication, route

from controller.openflow.diff import ADD_FLOW, DELETE_FLOW, count
from controller.ryuapp.fabric_app import FabricApp
from controller.ryuapp.web import FabricViewMixin
from controller.nbridge.routing import NBridgeRouting, ShieldError
from topologies.nbridge import NBridge, format_coords

APP_KEY = 'nbridge_app'


class NBridgeApp(FabricViewMixin, FabricApp):
    _CONTEXTS = {'wsgi': WSGIApplication}
    BARRIER_TIMEOUT_S = 10

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.routing = NBridgeRouting(self.topo)
        kwargs['wsgi'].register(NBridgeRest, {APP_KEY: self})

    def build_topology(self, params):
        return NBridge(params.get('shape', (4, 3)), params.get('q', 1), params.get('hosts', 1))

    def rules_for(self, switch):
        return self.routing.rules_for(switch)

    def observed_state(self):
        """The live view's overlay (controller.ryuapp.web): the shielded leaf
        and its links to the roots, which the roots route around."""
        shielded = self.routing.shielded
        if shielded is None:
            return {}
        leaf = self.topo.leaf_name(shielded)
        return {'shielded': [leaf],
                'avoided': [(leaf, self.topo.peer(leaf, port)[0]) for port in self.topo.ports(leaf)
                            if not self.topo.nodes[self.topo.peer(leaf, port)[0]].is_host]}

    def set_leaf(self, coords, verb):
        """Shield ('error') or restore ('renew') a leaf; push only the changed
        rules to the connected roots (a root connecting later gets its whole
        current state from the base app) and wait until they are in place."""
        changes = (self.routing.shield if verb == 'error' else self.routing.renew)(coords)
        pushed = {name: self.push_switch(name) for name in changes}
        unconfirmed = [name for name, sent in sorted(pushed.items())
                       if sent is not None and not sent[1].wait(self.BARRIER_TIMEOUT_S)]
        if unconfirmed:
            self.logger.warning('%s %s: no barrier reply from %s', verb, format_coords(coords), unconfirmed)
        counts = {name: {'deleted': count(ops, DELETE_FLOW), 'added': count(ops, ADD_FLOW)}
                  for name, ops in sorted(changes.items())}
        self.observation.log('failure' if verb == 'error' else 'recovery', 'leaf %s %s' % (
            format_coords(coords), 'shielded' if verb == 'error' else 'restored'))
        self.logger.info('%s %s: %s', verb, format_coords(coords),
                         ', '.join('%s -%d +%d' % (n, c['deleted'], c['added']) for n, c in counts.items()))
        return counts


def _json(status, body):
    return Response(status=status, content_type='application/json', charset='utf-8',
                    body=(json.dumps(body) + '\n').encode())


class NBridgeRest(ControllerBase):
    VERBS = ('error', 'renew')

    def __init__(self, req, link, data, **config):
        super().__init__(req, link, data, **config)
        self.app = data[APP_KEY]

    @route('nbridge', '/nbridge', methods=['GET'])
    def state(self, req, **kwargs):
        topo, shielded = self.app.topo, self.app.routing.shielded
        return _json(200, {'fabric': topo.name, 'shape': topo.shape, 'q': topo.q,
                           'hosts_per_leaf': topo.hosts_per_leaf,
                           'shielded': format_coords(shielded) if shielded else None,
                           'switches': len(topo.switches), 'connected': len(self.app.datapaths)})

    @route('nbridge', '/nbridge/leaf/{coords}/{verb}', methods=['POST'])
    def set_leaf(self, req, coords, verb, **kwargs):
        if verb not in self.VERBS:
            return _json(400, {'error': 'unknown verb %r: use error (shield) or renew (restore)' % verb})
        try:
            parsed = self.app.topo.parse_coords(coords)
            changed = self.app.set_leaf(parsed, verb)
        except ShieldError as err:
            return _json(409, {'error': str(err)})
        except ValueError as err:
            return _json(400, {'error': str(err)})
        return _json(200, {'leaf': format_coords(parsed), 'verb': verb, 'changed': changed})

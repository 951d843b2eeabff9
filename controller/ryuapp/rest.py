"""Read-only REST view of the fat-tree controller's live state, served by
ryu.app.wsgi on the address controller.ryuapp.manager binds (127.0.0.1 by default).

The state is a set of named sections, each produced on request by a callable
the app registered (``StateView.register``): the routing scheme's per-flow
assignments and reservations, link loads, link liveness, ...

  GET /fattree/state                    every section
  GET /fattree/state?sections=a,b       the named sections (400 if one is unknown)
  GET /fattree/state/NAME               one section (404 if unknown)
"""
import json

from ryu.app.wsgi import ControllerBase, Response, route

VIEW_KEY = 'fattree_state_view'


class UnknownSectionError(KeyError):
    def __str__(self):
        return self.args[0]


class StateView:
    """Named state sections, each a callable returning JSON-able data."""

    def __init__(self):
        self._sections = {}

    def register(self, name, produce):
        if name in self._sections:
            raise ValueError('state section %r is already registered' % name)
        self._sections[name] = produce

    @property
    def names(self):
        return sorted(self._sections)

    def snapshot(self, names=None):
        names = self.names if names is None else names
        unknown = [n for n in names if n not in self._sections]
        if unknown:
            raise UnknownSectionError('unknown state section(s) %s; known: %s'
                                      % (', '.join(unknown), ', '.join(self.names)))
        return {name: self._sections[name]() for name in names}


def _json(status, body):
    return Response(status=status, content_type='application/json', charset='utf-8',
                    body=(json.dumps(body, indent=1, sort_keys=True) + '\n').encode())


class FatTreeRest(ControllerBase):

    def __init__(self, req, link, data, **config):
        super().__init__(req, link, data, **config)
        self.view = data[VIEW_KEY]

    @route('fattree', '/fattree/state', methods=['GET'])
    def state(self, req, **kwargs):
        query = req.GET.get('sections')
        names = None
        if query is not None:
            names = [n for n in query.split(',') if n]
            if not names:
                return _json(400, {'error': 'sections= names no section; known: %s'
                                            % ', '.join(self.view.names)})
        try:
            return _json(200, self.view.snapshot(names))
        except UnknownSectionError as err:
            return _json(400, {'error': str(err)})

    @route('fattree', '/fattree/state/{section}', methods=['GET'])
    def section(self, req, section, **kwargs):
        try:
            return _json(200, self.view.snapshot([section])[section])
        except UnknownSectionError as err:
            return _json(404, {'error': str(err)})

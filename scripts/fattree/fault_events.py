"""The fault campaign's events (scripts.fattree.fault_campaign), drawn at
random from a seeded generator, and the physical failures they leave.
Pure: the model in, events out.

Failures overlap in time but never share a link: recovering a switch
brings back every one of its links, which must not undo part of another
failure still in place.
"""
from controller.fattree.failover import expand_failures, link_key


def choose_events(model, rng, failed, max_failed):
    """One or two events for the next step; ``failed`` ({element: silent})
    is updated as they will leave it."""
    events = []
    for _ in range(rng.choice((1, 1, 2))):
        kinds = ['controller-restart', 'connection-drop']
        if failed:
            kinds += ['recover'] * (2 + len(failed))
        if len(failed) < max_failed:
            kinds += ['fail-link'] * 4 + ['fail-switch']
        kind = rng.choice(kinds)
        if kind == 'recover':
            element = rng.choice(sorted(failed))
            del failed[element]
            events.append({'kind': kind, 'element': list(element)})
        elif kind.startswith('fail'):
            if kind == 'fail-link':
                candidates = [('link',) + tuple(sorted((l.node_a, l.node_b))) for l in model.switch_links()]
            else:
                candidates = [('switch', s.name) for s in model.switches]
            candidates = [c for c in candidates if not _overlaps(model, c, failed)]
            if not candidates:
                continue
            element, silent = rng.choice(candidates), rng.random() < 0.5
            failed[element] = silent
            events.append({'kind': kind, 'element': list(element), 'silent': silent})
        elif kind == 'connection-drop':
            events.append({'kind': kind, 'switch': rng.choice(model.switches).name})
        else:
            events.append({'kind': kind})
    return events


def _overlaps(model, element, failed):
    """Whether ``element`` shares a link with a failed element: each failure
    then has links of its own, and undoing one never undoes part of another
    (recovering a switch brings back every one of its links)."""
    links = links_of(model, element)
    return any(links & links_of(model, other) for other in failed)


def links_of(model, element):
    if element[0] == 'link':
        return {link_key(*element[1:])}
    return {link_key(element[1], model.peer(element[1], port)[0]) for port in model.ports(element[1])}


def physical_failures(model, failed):
    """(failed link keys, failed switches) of ``failed`` ({element: silent})."""
    links = [tuple(e[1:]) for e in failed if e[0] == 'link']
    switches = frozenset(e[1] for e in failed if e[0] == 'switch')
    return expand_failures(model, links, switches), switches



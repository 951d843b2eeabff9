"""The K-ary N-Bridge model (seed 003 section 2.3): sizes, cabling, ports,
addresses that encode coordinates as prefixes; bad shapes rejected."""
import itertools

import pytest

from topologies.addressing import ip_to_int
from topologies.model import UnknownNodeError
from topologies.nbridge import NBridge


def of_role(topo, role):
    return [n for n in topo.switches if n.role == role]


def _product(values):
    result = 1
    for v in values:
        result *= v
    return result


@pytest.mark.parametrize('shape,q,h', [((4,), 1, 1), ((3, 4), 2, 2), ((33, 6), 1, 1), ((2, 3, 4), 2, 3)])
def test_sizes_and_cabling(shape, q, h):
    topo = NBridge(shape, q, h)
    n, leaves = len(shape), _product(shape)
    assert len(of_role(topo, 'leaf')) == leaves
    assert len(of_role(topo, 'root')) == q * sum(leaves // k for k in shape)
    assert len(topo.hosts) == leaves * h
    assert len(topo.links) == leaves * (h + n * q)
    assert len({s.dpid for s in topo.switches}) == len(topo.switches)
    assert len({x.ip for x in topo.nodes.values()}) == len(topo.nodes)
    for leaf in of_role(topo, 'leaf'):
        assert topo.ports(leaf.name) == list(range(h + n * q))
        for port in range(h):
            assert topo.peer(leaf.name, port) == (topo.host_name(leaf.coords, port), 0)
        for dim, p in itertools.product(range(n), range(q)):
            root, root_port = topo.peer(leaf.name, topo.leaf_port_up(dim, p))
            assert root == topo.root_of(leaf.coords, dim, p)
            assert root_port == topo.coord(leaf.coords, dim)
    for root in of_role(topo, 'root'):
        dim, line, p = root.coords
        assert topo.ports(root.name) == list(range(topo.k(dim)))
        for v in range(topo.k(dim)):
            leaf = topo.node(topo.peer(root.name, v)[0])
            assert topo.line_of(leaf.coords, dim) == line and topo.coord(leaf.coords, dim) == v


def test_paper_shape_33x6():
    topo = NBridge((33, 6))
    assert (len(of_role(topo, 'leaf')), len(of_role(topo, 'root')), len(topo.hosts)) == (198, 39, 198)
    assert topo.node('nh13_2_0').ip == '10.0.0.213'  # 13 << 4 | 2 << 1 | host 0 + 1
    assert topo.node('nl13_2').coords == (13, 2)
    assert topo.peer('nl13_2', 1) == ('nr0_13_0', 2)   # dimension 0 root of line j1=13
    assert topo.peer('nl13_2', 2) == ('nr1_2_0', 13)   # dimension 1 root of line j0=2
    assert topo.node('nl13_2').dpid == 1 << 32 | 13 * 6 + 2


def test_addresses_are_coordinate_prefixes():
    topo = NBridge((3, 5, 2), q=1, hosts_per_leaf=3)
    for leaf, host in itertools.product(topo.all_coords(), topo.hosts):
        ip = ip_to_int(host.ip)
        for dims_from in range(topo.n + 1):
            network, length = topo.prefix(leaf, dims_from)
            mask = (0xffffffff << (32 - length)) & 0xffffffff
            agrees = all(topo.coord(leaf, d) == topo.coord(host.coords[:-1], d)
                         for d in range(dims_from, topo.n))
            assert (ip & mask == ip_to_int(network)) == agrees, (leaf, host.name, dims_from)
    assert all(h.ip.startswith('10.') and not h.ip.endswith('.0') for h in topo.hosts)


@pytest.mark.parametrize('shape,q,h,problem', [
    ((), 1, 1, 'N >= 1'),
    ((4, 1), 1, 1, 'K_0'),
    ((0, 4), 1, 1, 'K_1'),
    ((4, 2.5), 1, 1, 'K_0 .* integer'),
    ((4, True), 1, 1, 'K_0 .* integer'),
    (4, 1, 1, 'sequence'),
    ((4, 4), 0, 1, 'Q'),
    ((4, 4), 1, 0, 'H'),
    ((4096, 4096, 2), 1, 1, 'address bits'),
    ((2,) * 24, 1, 1, 'needs 25 address bits'),
    ((1000, 1000), 1, 1, 'switches'),
])
def test_bad_shapes_are_rejected_naming_the_problem(shape, q, h, problem):
    with pytest.raises(ValueError, match=problem):
        NBridge(shape, q, h)


def test_largest_encodable_shape_is_accepted():
    assert NBridge.check_shape((256, 128), 1, 1) == (256, 128)  # 8 + 7 + 1 = 16 bits


def test_coordinates_parse_and_check():
    topo = NBridge((33, 6))
    for text in ('13,2', '(13,2)', 'LSW(13,2)', ' 13 , 2 '):
        assert topo.parse_coords(text) == (13, 2)
    for text, problem in (('13', 'has 1 coordinates'), ('13,6', r'j_0 .* \[0, 5\]'),
                          ('33,0', r'j_1 .* \[0, 32\]'), ('a,b', 'expected integers'),
                          ('-1,0', r'j_1'), ('1,2,3', 'needs 2')):
        with pytest.raises(ValueError, match=problem):
            topo.parse_coords(text)
    with pytest.raises(UnknownNodeError, match='nl99_0'):
        topo.node('nl99_0')

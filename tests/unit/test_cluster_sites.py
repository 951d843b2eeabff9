"""Server commands of the cluster mode: tunnel devices and what ssh's errors mean."""
import pytest

from scripts.cluster.sites import explain_ssh_failure, max_sessions, sessions_needed, tunnel_command


def test_gre_tunnel_is_mininets_gretap():
    assert ' '.join(tunnel_command('gre', 'a0_2-eth3', '10.9.0.1', '10.9.0.2', 7)) == (
        'ip link add name a0_2-eth3 type gretap local 10.9.0.1 remote 10.9.0.2 ttl 64 key 7')


def test_vxlan_tunnel_carries_the_key_as_its_id():
    assert ' '.join(tunnel_command('vxlan', 'c1_1-eth1', '10.9.0.2', '10.9.0.1', 7)) == (
        'ip link add name c1_1-eth1 type vxlan id 7 local 10.9.0.2 remote 10.9.0.1 dstport 4789 ttl 64')


def test_unknown_tunnel_kind_is_named():
    with pytest.raises(ValueError, match="one of gre, vxlan, got 'ipip'"):
        tunnel_command('ipip', 'x', '1.1.1.1', '1.1.1.2', 1)


@pytest.mark.parametrize('stderr, meaning', [
    ('ssh: connect to host 10.9.0.3 port 22: Connection refused', 'ssh is refused'),
    ('ssh: connect to host 10.9.0.3 port 22: Connection timed out', 'server is unreachable'),
    ('ssh: connect to host 10.9.0.3 port 22: No route to host', 'server is unreachable'),
    ('root@10.9.0.3: Permission denied (publickey).', 'ssh key not accepted'),
    ('kex_exchange_identification: read: Connection reset by peer', 'ssh failed'),
])
def test_ssh_failures_name_the_server_and_the_cause(stderr, meaning):
    message = explain_ssh_failure('10.9.0.3', stderr + '\n')
    assert message.startswith('server 10.9.0.3: ' + meaning)
    assert message.endswith(stderr)


def test_max_sessions_is_read_from_sshd_t():
    assert max_sessions('port 22\nmaxsessions 10\nmaxstartups 10:30:100\n') == 10
    with pytest.raises(ValueError, match='no maxsessions'):
        max_sessions('port 22\n')
    assert sessions_needed(18) == 50

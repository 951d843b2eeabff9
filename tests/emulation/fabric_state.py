"""What the fault emulation tests read back from a running fabric: every
switch's flow table and groups, and polling until a condition holds."""
import subprocess
import time


def state(topo):
    """{switch: (flows, groups)} as ovs-ofctl dumps them, without counters."""
    dump = {}
    for switch in topo.switches:
        flows = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', '--no-stats', 'dump-flows', switch.name],
                               capture_output=True, text=True, check=True, timeout=120).stdout
        groups = subprocess.run(['ovs-ofctl', '-O', 'OpenFlow13', 'dump-groups', switch.name],
                                capture_output=True, text=True, check=True, timeout=120).stdout
        dump[switch.name] = (sorted(l.strip() for l in flows.splitlines() if 'priority' in l),
                             sorted(l.strip() for l in groups.splitlines() if 'group_id' in l))
    return dump


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, what
        time.sleep(0.2)

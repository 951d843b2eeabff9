"""Reading perf's report into the shaped profile's columns."""
from scripts.emulator.benchmarks.shaped_profile import shares

REPORT = """
# Children      Self  Command       Shared Object      Symbol
    81.33%     0.21%  ovs-vswitchd  [kernel.kallsyms]  [k] do_syscall_64
    49.12%     0.18%  ovs-vswitchd  [kernel.kallsyms]  [k] __sys_sendmmsg
    26.47%     0.30%  ovs-vswitchd  [kernel.kallsyms]  [k] do_recvmmsg
    24.89%     0.59%  ovs-vswitchd  [kernel.kallsyms]  [k] tcp_v4_rcv
     7.64%     1.68%  ovs-vswitchd  [kernel.kallsyms]  [k] htb_dequeue
     3.00%     3.00%  ovs-vswitchd  ovs-vswitchd       [.] dp_netdev_input
"""


def test_each_column_is_its_functions_children_share():
    assert shares(REPORT) == {'kernel (system calls)': 81.33, 'sendmmsg': 49.12, 'recvmmsg': 26.47,
                              "hosts' TCP receive": 24.89, 'HTB dequeue': 7.64, 'poll and wait': 0.0}

"""A fat-tree spread over several servers with Mininet's cluster edition
(``mininet.examples.cluster``): placement of whole pods per server, the
cluster-edition classes with this project's fixes, server preflight, and a
harness of namespace containers that stand in for servers on one machine."""

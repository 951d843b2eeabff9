"""dcfabric's controllers: one package per system (fattree, kevin, nbridge,
letflow, p4) beside the shared OpenFlow layer (openflow: rule and group
types, ofctl text, housekeeping rules, the one ordered diff) and the Ryu side
(ryuapp: message builders, the base app, REST, the launcher).

Pure logic never imports ryu, eventlet or mininet, even transitively; the
Ryu shells are controller/ryuapp/* and controller/<system>/*app.py
(tests/unit/test_layout.py checks both).
"""

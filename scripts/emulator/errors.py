"""The error every emulation step raises when the machine or the run cannot go on."""


class SetupError(RuntimeError):
    """The machine is not ready for an emulation (not root, OVS down, port taken)."""

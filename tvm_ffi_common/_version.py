"""The version of this project's packages (not the ABI version, see ``abi_version``)."""

__version__ = "0.1.0"

"""Claude duplex bridge."""

__version__ = "0.1.0"

"""The ``hybridmap`` command."""

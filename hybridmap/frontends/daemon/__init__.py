"""The warm daemon: one process per repository that keeps a map open, so a one-shot
``hybridmap`` call is answered warm (``docs/daemon.md``).

``place`` says where a daemon listens and how messages are framed (standard library only: the
client side runs in every CLI call); ``client`` asks a daemon and starts one; ``server`` is the
daemon itself.
"""

"""Language servers as a symbol source (see docs/language-servers.md).

Importing this package, :mod:`.source`, :mod:`.pool` or :mod:`.config` does not import pygls
or lsprotocol (~0.3 s): a map that starts no server never pays for them. :mod:`.session` does,
and guards their logging when it does (:mod:`hybridmap.infra.logs`).
"""

"""SCIP indexes as a symbol source (see docs/scip.md): a precise index built once by
``scip-python`` / ``scip-typescript`` (``hybridmap index``), read by :class:`.source.ScipSource`.
Importing this package imports nothing heavy."""

"""Tests of ``hybridmap/frontends/``."""

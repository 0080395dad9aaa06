"""Tests of ``hybridmap/sources/``."""

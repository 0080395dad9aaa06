"""Tests of ``hybridmap/api/``."""

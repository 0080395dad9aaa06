"""Tests of ``hybridmap/store/``."""

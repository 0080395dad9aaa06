"""Tests of ``hybridmap/features/``."""

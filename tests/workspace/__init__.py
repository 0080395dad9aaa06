"""Tests of ``hybridmap/workspace/``."""

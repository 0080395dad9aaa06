"""Tests of ``hybridmap/pipeline/``."""

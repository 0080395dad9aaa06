"""Tests of ``hybridmap/infra/``."""

"""Tests of ``hybridmap/languages/``."""

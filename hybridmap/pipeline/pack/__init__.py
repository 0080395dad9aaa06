"""Packing rendered text into an exact token budget, and the token counters."""

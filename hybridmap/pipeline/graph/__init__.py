"""The file/definition graph with provenance, and its incremental update."""

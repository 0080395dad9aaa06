"""Tools over the pipeline's data, each its own module: symbol and file search, dead code, clones,
export, comparison, AGENTS.md notes, the SCIP indexer, doctor.
"""

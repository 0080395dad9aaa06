"""Symbol sources: tree-sitter tags (static), language servers (LSP) and SCIP indexes, behind one
seam (:mod:`hybridmap.sources.base`).
"""

"""Infrastructure with no knowledge of maps: escaping what we print, path boundaries, logging,
ignore patterns, edit distance, git, and the OS sandbox every process we start runs in.
"""

"""The repository's files: the walk (ignore rules, boundaries), the current state of every source
file, and the watcher that wakes a live map.
"""

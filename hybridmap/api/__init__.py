"""The embedding API: :class:`hybridmap.api.repo.AsyncRepoMap` and its sync facade
:class:`hybridmap.api.sync.RepoMap` (generated), plus lookups.
"""

"""What a language is, one rule per concept: the registry (grammars, queries, server configs as
data), visibility, path kinds, words of names, query predicates.
"""

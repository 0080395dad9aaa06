"""One map, in data-flow order: inputs (the conversation, the session, co-change) -> merge -> graph
-> rank -> render -> pack; :mod:`hybridmap.pipeline.build` runs it and
:mod:`hybridmap.pipeline.request` checks what is asked.
"""

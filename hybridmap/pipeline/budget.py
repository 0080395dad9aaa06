"""How many tokens a map may use when the request does not say, and never more than the user allows.

An explicit budget wins over the defaults. Otherwise the conversation's length decides (SoulForge's
curve: a long conversation leaves less room, so the map shrinks in steps), whether or not a file
is being edited: the caller said how much room is left, and a multiplier must not give back what
the curve took away. When the length is not given, ``map_tokens``; a request with no chat file
then gets it multiplied (Aider's ``map_mul_no_files``: with nothing being edited, the map is all
the model has), capped. Whatever the result, it is at most ``max_tokens_ceiling``: the MCP tools' ``tokens`` is
the model's choice, and the budget settings may come from the repository. Every number is a
setting (``docs/configuration.md``, "budget").
"""

from __future__ import annotations

from ..settings import Settings


def conversation_budget(conversation_tokens: int, settings: Settings) -> int:
    """The budget for a conversation of ``conversation_tokens`` tokens (a step function)."""
    if conversation_tokens >= settings.conversation_budget_long_at:
        return settings.conversation_budget_long
    if conversation_tokens >= settings.conversation_budget_mid_at:
        return settings.conversation_budget_mid
    return settings.conversation_budget_start


def requested_budget(explicit: int | None, conversation_tokens: int | None, has_chat: bool, settings: Settings) -> int:
    """The request's budget before the ceiling (see the module docstring); never below what the
    curve gives."""
    if explicit is not None:
        return explicit
    if conversation_tokens is not None:
        return conversation_budget(conversation_tokens, settings)
    budget = settings.map_tokens
    if not has_chat and settings.no_chat_budget_multiplier > 1:
        raised = min(int(budget * settings.no_chat_budget_multiplier), settings.no_chat_budget_max)
        budget = max(budget, raised)
    return budget


def budget_for(explicit: int | None, conversation_tokens: int | None, has_chat: bool, settings: Settings) -> int:
    """The request's budget: :func:`requested_budget`, at most ``max_tokens_ceiling``."""
    return min(requested_budget(explicit, conversation_tokens, has_chat, settings), settings.max_tokens_ceiling)


def ceiling_note(requested: int, settings: Settings) -> str:
    """What to tell the caller when ``requested`` was above the ceiling ("" when it was not)."""
    if requested <= settings.max_tokens_ceiling:
        return ""
    return (
        f"a budget of {requested:_} tokens was asked for; maps get at most max_tokens_ceiling="
        f"{settings.max_tokens_ceiling:_} (raise it in your config, with --max-tokens-ceiling or the API's overrides)"
    )

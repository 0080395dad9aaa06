"""The skeleton text of ranked files and definitions: marks, summaries, the renderer."""

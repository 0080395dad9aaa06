"""What the ranking reads besides the code: the conversation (chat files, mentions, the message),
the session's files, git co-change.
"""

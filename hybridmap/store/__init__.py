"""The content-keyed disk cache and the codec of what it stores (no pickle)."""

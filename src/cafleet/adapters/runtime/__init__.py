"""The private per-user runtime directory (standard library only: the hook and launcher import
it)."""

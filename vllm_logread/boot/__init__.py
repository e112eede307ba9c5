"""One boot: its state (every value with where it came from) and the resolver of
its unknowns (candidates, pruned by every figure the log prints; docs/candidates.md)."""

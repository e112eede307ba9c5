"""One boot: what each engine said, split from the facts (boots.py), its vLLM
release from its call sites (fingerprint.py), its state (every value with where
it came from) and the resolver of its unknowns (candidates, pruned by every
figure the log prints; docs/candidates.md)."""

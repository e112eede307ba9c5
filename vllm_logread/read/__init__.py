"""The reading stage: bytes -> lines -> facts and stats rows.

Takes the bytes of a log (a file, a pipe) or a /metrics text; gives ``Fact``s (each
with its line, process tag and printed precision) through THE patterns table, and
the stats lines' values through one grammar. Knows nothing of reports or sessions.
"""

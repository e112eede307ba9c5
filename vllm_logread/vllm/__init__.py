"""What vLLM does, by version: its rules (rules.py), the version type (versions.py),
its scheduler replayed (simulate.py) and the requests it serves (workload.py)."""

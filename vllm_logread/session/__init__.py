"""One input, read as it streams: the state machine of an input (session.py:
boot mode <-> serving mode), the load it watches (watch.py), what it hands
on (events.py), the inputs' bytes (inputs.py) and a fleet from Prometheus (fleet.py)."""

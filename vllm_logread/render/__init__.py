"""The output stage: every text, JSON, Markdown, GitHub, CSV and plot output.

Takes reports, typed outputs and per-input results (``events``); gives strings and
files. No other package formats text for people.
"""

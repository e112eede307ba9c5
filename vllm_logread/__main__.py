"""``python -m vllm_logread``: the same as the ``vllm-logread`` command."""

from .cli.commands import run

run()

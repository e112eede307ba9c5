"""The model stage: a model's config.json -> vLLM's KV cache specs.

Takes a config (``--config``, the offline Hugging Face cache, or the shipped table);
gives one frozen spec per attention kind as vLLM has them (page_size_bytes, the
blocks a request holds) and the KV cache groups vLLM forms, by vLLM version.
"""

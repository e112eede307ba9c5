"""The model stage: a model's config.json -> vLLM's KV cache specs.

Takes a config (``--config``, the offline Hugging Face cache, or the shipped table);
gives one frozen spec per layer, of one class per attention kind as vLLM has them
(:mod:`.specs`: page_size_bytes, the blocks a request holds), and the KV cache
groups vLLM forms from them by vLLM version (:mod:`.groups`).
"""

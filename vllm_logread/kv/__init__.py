"""Model config -> vLLM's KV cache specs and groups.

Takes a config.json (a file, the Hugging Face cache, the shipped table) and
gives one frozen spec per layer (:mod:`.specs`: full, sliding window, chunked
local, MLA, Mamba...), each with its page size and the blocks a request holds,
and the KV cache groups vLLM forms from them (:mod:`.groups`).
"""

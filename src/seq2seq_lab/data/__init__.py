"""Data: where sentence pairs come from, how they are tokenised and batched.

- ``batch``: the :class:`Batch` every model consumes; ``specials``: PAD/UNK/BOS/EOS ids.
- ``synthetic``: the embedded, seeded synthetic translation task (and copy/reverse).
- ``sources``: parallel text files (with download), Hugging Face datasets.
- ``tokenizers``: word-level and sentencepiece tokenizers, their checkpoint state and cache.
- ``batching``: token-budget batch sampler, ``collate``, ``source_batch``.
- ``subset``: ``data.first_pairs``, the first N pairs of each split (a quick subset).
- ``datamodule``: ``TranslationDataModule``, the one Lightning data module (``data=...``).

Nothing is imported here: pure ``nn.Module`` code imports ``data.specials`` without pulling in
Lightning or sentencepiece.
"""

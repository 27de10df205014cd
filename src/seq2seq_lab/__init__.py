"""seq2seq-lab: reproducible side-by-side comparisons of sequence-to-sequence architectures."""

__version__ = "0.1.0"

"""Batched greedy and beam search, written once for every model family."""

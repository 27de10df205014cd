"""Special token ids, the same in every vocabulary of the project (word-level and subword)."""

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIAL_TOKENS = (PAD, UNK, BOS, EOS)  # in id order

"""Translation quality metrics: sacrebleu corpus scores and BLEU by source length."""

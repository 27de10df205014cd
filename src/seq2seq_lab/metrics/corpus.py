"""Corpus-level scores with sacrebleu, on detokenised text, with their signatures.

Scores are only comparable across papers and runs when the tokenisation and settings are the
same; sacrebleu's signature records them, so every result carries it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sacrebleu.metrics import BLEU, CHRF, TER


@dataclass
class CorpusScores:
    bleu: float
    chrf: float
    ter: float
    signatures: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"bleu": self.bleu, "chrf": self.chrf, "ter": self.ter}


def corpus_scores(hypotheses: list[str], references: list[str]) -> CorpusScores:
    """BLEU (13a tokenisation, cased), chrF (char 6-grams, beta 2) and TER, sacrebleu defaults."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    refs = [references]
    metrics = {"bleu": BLEU(), "chrf": CHRF(), "ter": TER()}
    results = {name: m.corpus_score(hypotheses, refs) for name, m in metrics.items()}
    return CorpusScores(
        bleu=results["bleu"].score,
        chrf=results["chrf"].score,
        ter=results["ter"].score,
        signatures={name: str(m.get_signature()) for name, m in metrics.items()},
    )


def corpus_bleu(hypotheses: list[str], references: list[str]) -> float:
    return BLEU().corpus_score(hypotheses, [references]).score


def bleu_with_length(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """Corpus BLEU with the two length figures it folds in, so that a low score can be told
    apart into "too short" and "wrong words":

        BLEU = BP * exp(sum_n log(p_n) / 4),   BP = min(1, exp(1 - r / c)),

    c and r the hypotheses' and references' lengths in sacrebleu's 13a tokens. Returns
    ``{"bleu", "length_ratio": c / r, "brevity_penalty": BP}``."""
    score = BLEU().corpus_score(hypotheses, [references])
    return {
        "bleu": score.score,
        "length_ratio": score.sys_len / score.ref_len if score.ref_len else 0.0,
        "brevity_penalty": score.bp,
    }

"""The embedded synthetic translation task: a seeded toy language pair generated in-process.

It exists to make the documented comparisons visible on a laptop CPU in minutes, with no
download. A small grammar writes a *source* sentence and, from the same derivation, its exact
*target* translation, so the reference is a deterministic function of the source (a perfect
model scores 100 BLEU; with ``synonyms``, up to free word choices) and every alignment is known.

What the language pair contains, and which comparison it serves:

- Two invented vocabularies: source words are hyphenated syllables ("ka-lo", "mi-ra-tu"),
  target words closed syllables ("mip", "dovs"); ``extra_syllables`` lengthens content words
  on both sides ("ka-lo-mi", "bamip") so that a large lexicon has enough distinct forms.
- A lexicon with one-to-two mappings (a source noun -> a two-word target compound; a source verb
  -> target verb + particle) and two-to-one mappings (a two-word source compound noun or a
  "stem + light word" verb -> one target word).
- Reordering, so alignments are not monotone: the source is SVO with adjectives after the noun
  and prepositions; the target is verb-final in every clause (S O PP V), puts adjectives before
  the noun in mirrored order, and uses postpositions.
- Agreement across a distance: source verbs do not inflect, target verbs agree in number with
  their subject, which is marked only on the source subject noun, often many words back and
  past an "attractor" noun of the other number ("the keys to the cabinet are"). Relative
  clause verbs agree with the head noun they modify.
- Rare words (``zipf``): lemmas of the open classes are drawn by Zipf's law over a random rank
  order, so a large lexicon has a long tail of words seen a few times in training.
- Ambiguity resolved by context (``senses``): a share of the nouns has two translations, and
  the verb of the noun's clause (or relative clause) decides which: verbs come in two classes,
  and a clause draws its class first. The deciding verb follows the subject (and a phrase
  attached to it) in the source and precedes the object and the clause's prepositional
  phrases, a few to a dozen words away.
- Free variation (``synonyms``, ``synonym_rate``): a share of the lemmas has a second target
  word, used in a ``synonym_rate`` share of its occurrences whatever the source says, as a
  translator picks one of two equivalent words. No model can tell which, so a converged model
  stays below 100 BLEU (a decoder outputs the more probable word) and holds the uncertainty
  that decoding studies need; the source side is drawn as without it.
- Length: sentences are clauses joined by conjunctions, with prepositional phrases and relative
  clauses, generated to a length drawn uniformly from ``[min_words, max_words]`` of each split
  (clauses of at most ``clause_words``, longer sentences get more clauses). Train and val stop
  at ``train_max_words``, test at ``test_max_words``; the extrapolation split
  (``extrapolation_pairs``) lies past every training length, up to ``extrapolation_max_words``
  (Bahdanau et al. 2014, BLEU by sentence length), scored apart from the test split.

Two versions, each a data option: ``data=synthetic`` (version 2, the default: a 240-lemma
Zipfian lexicon with two-sense nouns and free variation, sentences to 30 words) and ``data=synthetic_v1`` (170
lemmas drawn uniformly, training sentences to 10 words, test to 20; converged attention models
score 99-100 BLEU on its trained lengths). Version 1's corpus is drawn byte for byte as before
version 2's levers existed: each lever draws from the generator only when it is on.
docs/synthetic_task.md has the calibration behind version 2's values.

Grammar (source order; the target order of each rule after the arrow)::

    sentence := clause (conj clause)*
    clause   := NP_full verb [NP_full] PP*      ->  NP_full [NP_full] PP* verb
    NP_full  := NP [PP | REL]
    NP       := det noun adj*                   ->  det adj*(mirrored) noun
    PP       := prep NP                         ->  NP postposition
    REL      := rel verb [NP]                   ->  rel [NP] verb

Each source word belongs to exactly one lexical entry and category, and noun phrases inside a
PP or a REL take no further modifiers, so a source string has a single derivation: the
reference is a function of the source text (with synonyms: up to which of its two words each
varying lemma uses).

Also two tiny tasks for tests and teaching: ``copy`` (target = source) and ``reverse`` (target =
source reversed) over random sequences of a small symbol vocabulary.

Determinism: everything is drawn from one ``random.Random(seed)`` (Mersenne Twister, stable
across platforms and Python versions) and no set or hash order is ever iterated, so the same
seed gives byte-identical text. Train, val and test are disjoint (no source sentence repeats).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq2seq_lab.data.sources import SPLITS, PairSource, SourceContext, TextPairs
from seq2seq_lab.errors import ConfigError

TASKS = ("translation", "copy", "reverse")
# The split of sentences longer than any training sentence (``extrapolation_pairs``), scored
# apart from the test split (pipeline/extra_tests.py)
EXTRAPOLATION = "extrapolation"

# Source syllables are CV ("ka"); target words are CVC ("mip"), function words VC ("el").
_SRC_CONSONANTS, _SRC_VOWELS = "klmnpstvz", "aeiou"
_TGT_ONSETS, _TGT_VOWELS, _TGT_CODAS = "bdfghjmnpstvwz", "aeiouy", "bdgklmnprt"
_SRC_PLURAL = "-ri"  # source plural noun = singular + "-ri" ("ka-lo" -> "ka-lo-ri")
_TGT_NOUN_PLURAL = "s"  # target plural noun = singular + "s" (no target coda is "s")
_TGT_VERB_PLURAL = "en"  # target verb agreeing with a plural subject = base + "en"
_SYMBOL_CONSONANTS, _SYMBOL_VOWELS = "bdfgklmnprstvz", "aeiou"  # copy/reverse symbols "ba", "ke"


# --------------------------------------------------------------------------------------------
# Lexicon
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LexicalEntry:
    """One lemma: its source and target words, singular and plural.

    Only nouns have plural source forms; only nouns and verbs have plural target forms (a verb's
    "plural" is its form agreeing with a plural subject). Other categories repeat one form.
    """

    category: str  # noun, verb_tr, verb_intr, adj, det, prep, conj, rel
    src_sg: tuple[str, ...]
    src_pl: tuple[str, ...]
    tgt_sg: tuple[str, ...]
    tgt_pl: tuple[str, ...]
    # a noun with two senses: its target words in sense 1 (sense 0 is tgt_sg, tgt_pl)
    alt_sg: tuple[str, ...] = ()
    alt_pl: tuple[str, ...] = ()
    verb_class: int = 0  # a verb's class, which selects the sense of its clause's nouns
    # a lemma with a synonym: target words free to replace tgt_sg, tgt_pl in any occurrence
    syn_sg: tuple[str, ...] = ()
    syn_pl: tuple[str, ...] = ()

    def src(self, plural: bool) -> tuple[str, ...]:
        return self.src_pl if plural else self.src_sg

    def tgt(self, plural: bool, sense: int = 0, synonym: bool = False) -> tuple[str, ...]:
        if sense and self.alt_sg:
            return self.alt_pl if plural else self.alt_sg
        if synonym and self.syn_sg:
            return self.syn_pl if plural else self.syn_sg
        return self.tgt_pl if plural else self.tgt_sg


@dataclass(frozen=True)
class WordInfo:
    """What a surface word is: its category and, for nouns and target verbs, its number."""

    category: str
    plural: bool


class _WordMaker:
    """Fresh, never-repeated invented words (rejection sampling against everything made).

    Content words get ``extra_syllables`` more syllables on both sides (a larger lexicon needs
    more forms than CVC's 840 target words); function words keep theirs.
    """

    def __init__(self, rng: random.Random, extra_syllables: int = 0) -> None:
        self.rng = rng
        self.extra = extra_syllables
        self.used: set[str] = set()  # membership tests only: never iterated

    def fresh(self, make: Callable[[], str], derived: Callable[[str], list[str]]) -> str:
        """A word such that it and its ``derived`` forms are all new."""
        for _ in range(10_000):
            word = make()
            forms = [word, *derived(word)]
            if not any(f in self.used for f in forms):
                self.used.update(forms)
                return word
        raise ConfigError("synthetic lexicon: ran out of distinct word forms; use fewer words")

    def src(self, syllables: int) -> str:
        rng = self.rng
        return "-".join(
            rng.choice(_SRC_CONSONANTS) + rng.choice(_SRC_VOWELS)
            for _ in range(syllables + self.extra)
        )

    def src_function(self) -> str:
        return self.rng.choice(_SRC_CONSONANTS) + self.rng.choice(_SRC_VOWELS)

    def tgt(self) -> str:
        rng = self.rng
        head = "".join(rng.choice(_TGT_ONSETS) + rng.choice(_TGT_VOWELS) for _ in range(self.extra))
        return head + rng.choice(_TGT_ONSETS) + rng.choice(_TGT_VOWELS) + rng.choice(_TGT_CODAS)

    def tgt_function(self) -> str:
        return self.rng.choice(_TGT_VOWELS) + self.rng.choice(_TGT_CODAS)


def _none(_: str) -> list[str]:
    return []


class Lexicon:
    """The bilingual lexicon of the synthetic task, drawn from ``rng``.

    About 10% of nouns are source compounds (two source words -> one target word), 10% are
    target compounds (one -> two); about 10% of verbs are source "stem + light word" pairs
    (two -> one) and 10% target "verb + particle" pairs (one -> two).

    With ``senses`` > 0 that share of the nouns has two target words, one per sense, and the
    verbs fall into two classes (alternately, by lemma): a clause's verb class picks the sense
    of its nouns (:class:`_Derivation`). ``shuffle_ranks`` puts each open class in a random
    order, its frequency ranks under Zipf's law. These draws come after all others, so without
    them the lexicon is the task's first version's word for word.

    With ``synonyms`` > 0 that share of the verbs, adjectives and one-sense nouns has a second
    target word that any occurrence may use instead of the first (:class:`_Derivation` draws
    which). Its words are drawn from ``synonym_rng`` (``rng`` when none is given); with a
    stream of their own the rest of the lexicon, and every source sentence drawn after it, are
    the same with or without synonyms.
    """

    def __init__(
        self,
        rng: random.Random,
        *,
        nouns: int,
        verbs: int,
        adjectives: int,
        senses: float = 0.0,
        extra_syllables: int = 0,
        shuffle_ranks: bool = False,
        synonyms: float = 0.0,
        synonym_rng: random.Random | None = None,
    ) -> None:
        for key, value, low in (
            ("nouns", nouns, 10),
            ("verbs", verbs, 10),
            ("adjectives", adjectives, 1),
        ):
            if value < low:
                raise ConfigError(f"data.source.{key}={value}: expected at least {low}")
        w = _WordMaker(rng, extra_syllables)
        src_function = lambda: w.fresh(w.src_function, _none)  # noqa: E731
        tgt_function = lambda: w.fresh(w.tgt_function, _none)  # noqa: E731

        def function_words(category: str, n: int) -> list[LexicalEntry]:
            out = []
            for _ in range(n):
                s, t = (src_function(),), (tgt_function(),)
                out.append(LexicalEntry(category, s, s, t, t))
            return out

        self.dets = function_words("det", 3)
        self.preps = function_words("prep", 8)
        self.conjs = function_words("conj", 4)
        self.rels = function_words("rel", 1)
        light_words = [src_function() for _ in range(2)]  # second word of two-word source verbs
        particles = [tgt_function() for _ in range(3)]  # second word of two-word target verbs

        src_noun = lambda: w.fresh(lambda: w.src(2), lambda s: [s + _SRC_PLURAL])  # noqa: E731
        tgt_noun = lambda: w.fresh(w.tgt, lambda t: [t + _TGT_NOUN_PLURAL])  # noqa: E731
        n_compound = max(1, nouns // 10)
        self.nouns = []
        for i in range(nouns):
            if i < n_compound:  # two source words -> one target word
                head = w.fresh(lambda: w.src(2), _none)
                s = (head, src_noun())
            else:
                s = (src_noun(),)
            t: tuple[str, ...]
            if n_compound <= i < 2 * n_compound:  # one source word -> two target words
                t = (w.fresh(w.tgt, _none), tgt_noun())
            else:
                t = (tgt_noun(),)
            # number is marked on the last word of a compound, on both sides
            s_pl = (*s[:-1], s[-1] + _SRC_PLURAL)
            t_pl = (*t[:-1], t[-1] + _TGT_NOUN_PLURAL)
            self.nouns.append(LexicalEntry("noun", s, s_pl, t, t_pl))

        src_verb = lambda: w.fresh(lambda: w.src(3), _none)  # noqa: E731
        tgt_verb = lambda: w.fresh(w.tgt, lambda t: [t + _TGT_VERB_PLURAL])  # noqa: E731
        n_special = max(1, verbs // 10)
        self.verbs_tr, self.verbs_intr = [], []
        for i in range(verbs):
            s = (src_verb(), light_words[i % 2]) if i < n_special else (src_verb(),)
            base = tgt_verb()
            if n_special <= i < 2 * n_special:  # verb + particle: one source word -> two
                particle = particles[i % len(particles)]
                t, t_pl = (base, particle), (base + _TGT_VERB_PLURAL, particle)
            else:
                t, t_pl = (base,), (base + _TGT_VERB_PLURAL,)
            category = "verb_tr" if i % 5 < 3 else "verb_intr"  # 60% transitive
            entry = LexicalEntry(category, s, s, t, t_pl)
            (self.verbs_tr if category == "verb_tr" else self.verbs_intr).append(entry)

        self.adjectives = []
        for _ in range(adjectives):
            s, t = (w.fresh(lambda: w.src(2), _none),), (w.fresh(w.tgt, _none),)
            self.adjectives.append(LexicalEntry("adj", s, s, t, t))

        if shuffle_ranks:
            # the lists' order is their frequency rank under Zipf's law; as drawn, compounds
            # and two-word verbs come first and would be the most frequent
            for entries in (self.nouns, self.verbs_tr, self.verbs_intr, self.adjectives):
                rng.shuffle(entries)
        if senses > 0:
            self._add_senses(w, senses)
        if synonyms > 0:
            ws = _WordMaker(synonym_rng or rng, extra_syllables)
            ws.used = w.used  # one pool of forms: a synonym is never another lemma's word
            self._add_synonyms(ws, synonyms)

        self.source_words: dict[str, WordInfo] = {}
        self.target_words: dict[str, WordInfo] = {}
        for entry in self.entries():
            for plural in (False, True):
                for word in entry.src(plural):
                    self.source_words.setdefault(word, WordInfo(entry.category, plural))
                for sense, synonym in ((0, False), (1, False), (0, True)):
                    for word in entry.tgt(plural, sense, synonym):
                        self.target_words.setdefault(word, WordInfo(entry.category, plural))
        # words shared by several lemmas (light words, particles) carry no number
        for word in light_words:
            self.source_words[word] = WordInfo("light", False)
        for word in particles:
            self.target_words[word] = WordInfo("particle", False)

    def _add_senses(self, w: _WordMaker, share: float) -> None:
        """Every ``1 / share``-th noun (evenly over the frequency ranks) gets a second target
        word; verbs alternate between the classes 0 and 1."""
        step = 1 / share
        ambiguous = {int(k * step) for k in range(int(len(self.nouns) * share))}
        tgt_noun = lambda: w.fresh(w.tgt, lambda t: [t + _TGT_NOUN_PLURAL])  # noqa: E731
        for i in sorted(ambiguous):
            entry = self.nouns[i]
            alt = (*entry.tgt_sg[:-1], tgt_noun())
            alt_pl = (*alt[:-1], alt[-1] + _TGT_NOUN_PLURAL)
            self.nouns[i] = dataclasses.replace(entry, alt_sg=alt, alt_pl=alt_pl)
        for verbs in (self.verbs_tr, self.verbs_intr):
            for i, entry in enumerate(verbs):
                verbs[i] = dataclasses.replace(entry, verb_class=i % 2)

    def _add_synonyms(self, w: _WordMaker, share: float) -> None:
        """Every ``1 / share``-th lemma (evenly over the frequency ranks) of the verbs, the
        adjectives and the nouns with one sense gets a synonym: its content word replaced by a
        fresh one (a verb's particle and a compound's first word stay)."""
        tgt_noun = lambda: w.fresh(w.tgt, lambda t: [t + _TGT_NOUN_PLURAL])  # noqa: E731
        tgt_verb = lambda: w.fresh(w.tgt, lambda t: [t + _TGT_VERB_PLURAL])  # noqa: E731
        tgt_adj = lambda: w.fresh(w.tgt, _none)  # noqa: E731

        def chosen(eligible: list[int]) -> list[int]:
            return [eligible[int(k / share)] for k in range(int(len(eligible) * share))]

        for i in chosen([i for i, e in enumerate(self.nouns) if not e.alt_sg]):
            e = self.nouns[i]
            word = tgt_noun()
            syn, syn_pl = (*e.tgt_sg[:-1], word), (*e.tgt_sg[:-1], word + _TGT_NOUN_PLURAL)
            self.nouns[i] = dataclasses.replace(e, syn_sg=syn, syn_pl=syn_pl)
        for verbs in (self.verbs_tr, self.verbs_intr):
            for i in chosen(list(range(len(verbs)))):
                e = verbs[i]
                base = tgt_verb()
                syn, syn_pl = (base, *e.tgt_sg[1:]), (base + _TGT_VERB_PLURAL, *e.tgt_sg[1:])
                verbs[i] = dataclasses.replace(e, syn_sg=syn, syn_pl=syn_pl)
        for i in chosen(list(range(len(self.adjectives)))):
            e = self.adjectives[i]
            word = (tgt_adj(),)
            self.adjectives[i] = dataclasses.replace(e, syn_sg=word, syn_pl=word)

    def entries(self) -> list[LexicalEntry]:
        return [
            *self.dets,
            *self.preps,
            *self.conjs,
            *self.rels,
            *self.nouns,
            *self.verbs_tr,
            *self.verbs_intr,
            *self.adjectives,
        ]


# --------------------------------------------------------------------------------------------
# Derivations: units placed in source order and in target order
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """Target word ``tgt_pos`` takes its number from source word ``src_pos`` (subject noun)."""

    src_pos: int  # the number-marked word of the controlling source noun
    tgt_pos: int  # the first word of the agreeing target verb
    plural: bool


@dataclass(frozen=True)
class SenseLink:
    """Target word ``tgt_pos``, a noun with two senses, takes sense ``sense`` from the class of
    the verb at source word ``verb_pos`` (its clause's or its relative clause's)."""

    noun_pos: int  # the number-marked (last) source word of the noun
    verb_pos: int  # the first source word of the verb
    tgt_pos: int  # the last target word of the noun
    sense: int


@dataclass(frozen=True)
class SyntheticPair:
    """One generated pair with its derivation, for inspection and tests.

    ``units`` lists, for every lexical unit, the source word positions and the target word
    positions it produced: (i,), (j,) for a one-to-one word; (i,), (j, j+1) for one-to-two;
    (i, i+1), (j,) for two-to-one. Positions index ``src.split()`` and ``tgt.split()``.
    """

    src: str
    tgt: str
    units: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    agreements: tuple[Agreement, ...] = ()
    senses: tuple[SenseLink, ...] = ()

    def links(self) -> list[tuple[int, int]]:
        """Word alignment as (source position, target position) links, by source position."""
        return sorted((i, j) for src, tgt in self.units for i in src for j in tgt)


@dataclass
class _NP:
    det: int
    noun: int
    plural: bool
    adjs: list[int] = field(default_factory=list)
    pp: _PP | None = None
    rel: _Rel | None = None

    def src(self) -> list[int]:
        tail = self.pp.src() if self.pp else self.rel.src() if self.rel else []
        return [self.det, self.noun, *self.adjs, *tail]

    def tgt(self) -> list[int]:
        tail = self.pp.tgt() if self.pp else self.rel.tgt() if self.rel else []
        return [self.det, *reversed(self.adjs), self.noun, *tail]  # adjectives mirrored


@dataclass
class _PP:
    prep: int
    np: _NP

    def src(self) -> list[int]:
        return [self.prep, *self.np.src()]

    def tgt(self) -> list[int]:
        return [*self.np.tgt(), self.prep]  # postposition


@dataclass
class _Rel:
    rel: int
    verb: int
    obj: _NP | None

    def src(self) -> list[int]:
        return [self.rel, self.verb, *(self.obj.src() if self.obj else [])]

    def tgt(self) -> list[int]:
        return [self.rel, *(self.obj.tgt() if self.obj else []), self.verb]  # verb-final


@dataclass
class _Clause:
    subj: _NP
    verb: int
    obj: _NP | None
    pps: list[_PP] = field(default_factory=list)

    def src(self) -> list[int]:
        obj = self.obj.src() if self.obj else []
        return [*self.subj.src(), self.verb, *obj, *(u for pp in self.pps for u in pp.src())]

    def tgt(self) -> list[int]:
        obj = self.obj.tgt() if self.obj else []
        return [*self.subj.tgt(), *obj, *(u for pp in self.pps for u in pp.tgt()), self.verb]

    def nps(self) -> list[_NP]:
        """Every noun phrase of the clause (adjectives may be added to any of them)."""
        out: list[_NP] = []
        for np in (self.subj, self.obj, *(pp.np for pp in self.pps)):
            if np is None:
                continue
            out.append(np)
            if np.pp:
                out.append(np.pp.np)
            if np.rel and np.rel.obj:
                out.append(np.rel.obj)
        return out


@dataclass(frozen=True)
class Grammar:
    """How sentences are drawn (``data.source.*``; the first version's values in brackets).

    zipf: lemmas of open classes drawn with P(rank r) proportional to 1 / r^zipf (0: uniform).
    senses: whether a clause's verb class picks its nouns' senses (the lexicon's ``senses``).
    max_adjectives: per noun phrase (2); clause_pps: prepositional phrases attached to a
    clause (2); clause_words: a clause's most source words, longer sentences get more clauses
    (12). synonym_rate: how often an occurrence of a lemma with a synonym uses it (0).
    """

    zipf: float = 0.0
    senses: bool = False
    max_adjectives: int = 2
    clause_pps: int = 2
    clause_words: int = 12
    synonym_rate: float = 0.0


class _Derivation:
    """Builds one sentence: lexical units and the agreement links between them.

    With ``grammar.senses`` every clause (and every relative clause) draws a verb class c
    first and its verb from that class; its nouns take sense c, so an ambiguous source noun's
    translation is fixed by a verb elsewhere in the sentence (after the subject and what is
    attached to it, before the object and the clause's PPs).

    Free variation: an occurrence of a lemma with a synonym uses it with probability
    ``grammar.synonym_rate``, drawn from ``synonym_rng`` whatever the source or its context
    says, so that no model can tell which: the task's irreducible uncertainty (a model that
    knows the task puts that probability on the synonym; greedy and beam search output the
    more probable word). The draws leave ``rng``, and so every source sentence, as without it.
    """

    def __init__(
        self,
        rng: random.Random,
        lexicon: Lexicon,
        grammar: Grammar,
        choices: dict[tuple[int, int, int | None], tuple[list, list[float] | None]],
        synonym_rng: random.Random,
    ) -> None:
        """``choices``: shared by every sentence of a corpus, the entries that fit a pick and
        their cumulative Zipf weights, computed once each."""
        self.rng, self.lex, self.grammar, self.choices = rng, lexicon, grammar, choices
        self.synonym_rng = synonym_rng
        self.units: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        self.agreements: list[tuple[int, int, bool]] = []  # (noun unit, verb unit, plural)
        self.sense_links: list[tuple[int, int, int]] = []  # (noun unit, verb unit, sense)
        # the two-sense nouns of each open clause (innermost last), linked to its verb at its end
        self._scopes: list[list[int]] = []

    def _unit(self, entry: LexicalEntry, plural: bool = False, sense: int = 0) -> int:
        synonym = bool(entry.syn_sg) and self.synonym_rng.random() < self.grammar.synonym_rate
        self.units.append((entry.src(plural), entry.tgt(plural, sense, synonym)))
        return len(self.units) - 1

    def _pick(
        self, entries: Sequence[LexicalEntry], max_words: int = 1_000, verb_class: int | None = None
    ) -> LexicalEntry:
        """One of ``entries`` (in frequency-rank order) of at most ``max_words`` source words
        (and of ``verb_class``), uniformly or by Zipf's law."""
        key = (id(entries), min(max_words, 3), verb_class)  # no entry has more than 2 words
        if key not in self.choices:
            fitting = [
                e
                for e in entries
                if len(e.src_sg) <= max_words and verb_class in (None, e.verb_class)
            ]
            cumulative = None
            if self.grammar.zipf:
                cumulative = list(
                    itertools.accumulate((r + 1) ** -self.grammar.zipf for r in range(len(fitting)))
                )
            self.choices[key] = (fitting, cumulative)
        fitting, cumulative = self.choices[key]
        if cumulative is None:
            return self.rng.choice(fitting)
        return self.rng.choices(fitting, cum_weights=cumulative)[0]

    def _sense(self) -> int | None:
        """A clause's verb class (its nouns' sense), or None without senses."""
        return self.rng.randrange(2) if self.grammar.senses else None

    def _cost(self, unit: int) -> int:
        return len(self.units[unit][0])

    def np(self, max_words: int, sense: int | None = None) -> _NP:
        """det noun: 2 or 3 source words (``max_words`` >= 2)."""
        plural = self.rng.random() < 0.4
        det = self._unit(self.rng.choice(self.lex.dets))
        entry = self._pick(self.lex.nouns, max_words - 1)
        noun = self._unit(entry, plural, sense or 0)
        if sense is not None and entry.alt_sg and self._scopes:
            self._scopes[-1].append(noun)
        return _NP(det, noun, plural)

    def _close_scope(self, verb: int, sense: int | None) -> None:
        for noun in self._scopes.pop():
            self.sense_links.append((noun, verb, sense or 0))

    def _np_cost(self, np: _NP) -> int:
        return sum(self._cost(u) for u in np.src())

    def verb(
        self, transitive: bool, subject: _NP, max_words: int, verb_class: int | None = None
    ) -> int:
        entries = self.lex.verbs_tr if transitive else self.lex.verbs_intr
        verb = self._unit(self._pick(entries, max_words, verb_class), subject.plural)
        self.agreements.append((subject.noun, verb, subject.plural))
        return verb

    def pp(self, max_words: int, sense: int | None = None) -> _PP:
        """prep det noun: 3 or 4 source words (``max_words`` >= 3)."""
        prep = self._unit(self.rng.choice(self.lex.preps))
        return _PP(prep, self.np(max_words - 1, sense))

    def rel(self, head: _NP, max_words: int) -> _Rel:
        """rel verb [det noun]: 2 to 6 source words (``max_words`` >= 2); its own verb class
        picks its object's sense."""
        rel = self._unit(self.lex.rels[0])
        transitive = max_words >= 4 and self.rng.random() < 0.5
        sense = self._sense()
        self._scopes.append([])
        verb = self.verb(transitive, head, max_words - 1 - (2 if transitive else 0), sense)
        obj = None
        if transitive:
            obj = self.np(max_words - 1 - self._cost(verb), sense)
        self._close_scope(verb, sense)
        return _Rel(rel, verb, obj)

    def clause(self, budget: int) -> _Clause:
        """A clause of at most ``budget`` (>= 3) source words, usually exactly ``budget``."""
        rng = self.rng
        transitive = budget >= 5 and rng.random() < 0.6
        sense = self._sense()
        self._scopes.append([])
        object_words = 2 if transitive else 0  # the shortest object: det noun
        # leave room for the verb and the object
        subj = self.np(budget - 1 - object_words, sense)
        verb = self.verb(transitive, subj, budget - self._np_cost(subj) - object_words, sense)
        obj = None
        if transitive:
            obj = self.np(budget - self._np_cost(subj) - self._cost(verb), sense)
        clause = _Clause(subj, verb, obj)
        left = budget - sum(self._cost(u) for u in clause.src())
        while left > 0:
            # expansions that fit in what is left, as (weight, kind, noun phrase); structure
            # (PPs, relative clauses) is preferred to piling up adjectives
            options: list[tuple[float, str, _NP | None]] = []
            for np in (subj, obj):
                if np is None or np.pp or np.rel:
                    continue
                if left >= 3:
                    options.append((3.0, "pp", np))
                if left >= 2:
                    options.append((2.0, "rel", np))
            if len(clause.pps) < self.grammar.clause_pps and left >= 3:
                options.append((2.0, "clause_pp", None))
            for np in clause.nps():
                if len(np.adjs) < self.grammar.max_adjectives:
                    options.append((0.5, "adj", np))
            if not options:
                break
            _, kind, np = rng.choices(options, [w for w, _, _ in options])[0]
            if kind == "clause_pp":
                clause.pps.append(self.pp(left, sense))
            elif kind == "pp":
                np.pp = self.pp(left, sense)
            elif kind == "rel":
                np.rel = self.rel(np, left)
            else:
                np.adjs.append(self._unit(self._pick(self.lex.adjectives)))
            left = budget - sum(self._cost(u) for u in clause.src())
        self._close_scope(verb, sense)
        return clause

    def sentence(self, target_words: int) -> SyntheticPair:
        """A sentence of at most ``target_words`` (>= 3) source words, usually exactly."""
        rng = self.rng
        src_order: list[int] = []
        tgt_order: list[int] = []
        left = target_words
        while True:
            if src_order:
                if left < 4:  # a conjunction and the shortest clause (det noun verb)
                    break
                conj = self._unit(rng.choice(self.lex.conjs))
                src_order.append(conj)
                tgt_order.append(conj)
                left -= 1
            if left <= self.grammar.clause_words:
                budget = left
            else:  # leave room for at least one more clause
                budget = rng.randint(5, min(self.grammar.clause_words, left - 4))
            clause = self.clause(budget)
            src_order += clause.src()
            tgt_order += clause.tgt()
            left -= sum(self._cost(u) for u in clause.src())
        return self._linearise(src_order, tgt_order)

    def _linearise(self, src_order: list[int], tgt_order: list[int]) -> SyntheticPair:
        src_pos: dict[int, tuple[int, ...]] = {}
        tgt_pos: dict[int, tuple[int, ...]] = {}
        src_words: list[str] = []
        tgt_words: list[str] = []
        for u in src_order:
            words = self.units[u][0]
            src_pos[u] = tuple(range(len(src_words), len(src_words) + len(words)))
            src_words += words
        for u in tgt_order:
            words = self.units[u][1]
            tgt_pos[u] = tuple(range(len(tgt_words), len(tgt_words) + len(words)))
            tgt_words += words
        units = tuple((src_pos[u], tgt_pos[u]) for u in src_order)
        agreements = tuple(
            Agreement(src_pos[noun][-1], tgt_pos[verb][0], plural)
            for noun, verb, plural in self.agreements
        )
        senses = tuple(
            SenseLink(src_pos[noun][-1], src_pos[verb][0], tgt_pos[noun][-1], sense)
            for noun, verb, sense in self.sense_links
        )
        return SyntheticPair(" ".join(src_words), " ".join(tgt_words), units, agreements, senses)


# --------------------------------------------------------------------------------------------
# Corpora
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticCorpus:
    """The generated splits (``train``, ``val``, ``test``) and, for ``translation``, the lexicon."""

    task: str
    splits: dict[str, list[SyntheticPair]]  # SPLITS, and EXTRAPOLATION when asked for
    lexicon: Lexicon | None

    def pairs(self, split: str) -> list[tuple[str, str]]:
        return [(p.src, p.tgt) for p in self.splits[split]]


def _symbols(n: int) -> list[str]:
    syllables = [c + v for c in _SYMBOL_CONSONANTS for v in _SYMBOL_VOWELS]
    if not 2 <= n <= len(syllables):
        raise ConfigError(f"data.source.symbols={n}: expected 2..{len(syllables)}")
    return syllables[:n]


@dataclass(frozen=True, kw_only=True)
class SyntheticTask:
    """The settings of a synthetic corpus: ``data.source.*``, whose one home is
    conf/data/synthetic.yaml (no defaults here).

    Source lengths are drawn uniformly from ``[min_words, train_max_words]`` for train and val
    and from ``[min_words, test_max_words]`` for test; ``extrapolation_pairs`` more (the split
    :data:`EXTRAPOLATION`, none for 0) from ``[train_max_words + 1,
    extrapolation_max_words]``, past every training length. ``nouns``/``verbs``/``adjectives``
    size the translation lexicon, its content words ``extra_syllables`` longer than the first
    version's, ``senses`` the share of its nouns with two senses, ``synonyms`` the share of
    its lemmas with a synonym, used in a ``synonym_rate`` share of their occurrences;
    ``zipf``, ``max_adjectives``, ``clause_pps``, ``clause_words``: :class:`Grammar`.
    ``symbols`` is the vocabulary of ``copy`` and ``reverse``.
    """

    task: str
    seed: int
    train_pairs: int
    val_pairs: int
    test_pairs: int
    min_words: int
    train_max_words: int
    test_max_words: int
    nouns: int
    verbs: int
    adjectives: int
    extra_syllables: int
    senses: float
    synonyms: float
    synonym_rate: float
    zipf: float
    max_adjectives: int
    clause_pps: int
    clause_words: int
    extrapolation_pairs: int
    extrapolation_max_words: int
    symbols: int

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ConfigError(f"data.source.task={self.task}: expected one of {', '.join(TASKS)}")
        if self.min_words < (3 if self.task == "translation" else 1):
            raise ConfigError(
                f"data.source.min_words={self.min_words}: the shortest sentence has 3 words"
            )
        if not self.min_words <= self.train_max_words <= self.test_max_words:
            raise ConfigError(
                f"data.source: expected min_words <= train_max_words <= test_max_words, got "
                f"{self.min_words}, {self.train_max_words}, {self.test_max_words}"
            )
        for key in ("train_pairs", "val_pairs", "test_pairs"):
            if getattr(self, key) < 1:
                raise ConfigError(f"data.source.{key}={getattr(self, key)}: expected at least 1")
        if self.extrapolation_pairs < 0:
            raise ConfigError(
                f"data.source.extrapolation_pairs={self.extrapolation_pairs}: expected 0 or more"
            )
        if self.extrapolation_pairs and self.extrapolation_max_words <= self.train_max_words:
            raise ConfigError(
                f"data.source.extrapolation_max_words={self.extrapolation_max_words}: expected "
                f"more than train_max_words={self.train_max_words} (the split lies beyond it)"
            )
        for key in ("senses", "synonyms", "synonym_rate"):
            if not 0 <= getattr(self, key) <= 1:
                raise ConfigError(
                    f"data.source.{key}={getattr(self, key)}: expected a share in [0, 1]"
                )
        if self.zipf < 0:
            raise ConfigError(f"data.source.zipf={self.zipf}: expected 0 (uniform) or more")
        if self.clause_words < 5 or self.clause_pps < 0 or self.max_adjectives < 0:
            raise ConfigError(
                f"data.source: expected clause_words >= 5, clause_pps >= 0 and max_adjectives "
                f">= 0, got {self.clause_words}, {self.clause_pps}, {self.max_adjectives}"
            )

    @property
    def grammar(self) -> Grammar:
        return Grammar(
            zipf=self.zipf,
            senses=self.senses > 0,
            max_adjectives=self.max_adjectives,
            clause_pps=self.clause_pps,
            clause_words=self.clause_words,
            synonym_rate=self.synonym_rate,
        )


def generate_corpus(settings: SyntheticTask) -> SyntheticCorpus:
    """Generate the three splits of a synthetic task (see the module docstring)."""
    task, min_words = settings.task, settings.min_words
    train_max_words, test_max_words = settings.train_max_words, settings.test_max_words
    train_pairs, val_pairs, test_pairs = (
        settings.train_pairs,
        settings.val_pairs,
        settings.test_pairs,
    )
    rng = random.Random(settings.seed)
    # the synonyms' own stream (their words, which occurrence uses one): with or without them,
    # rng draws the same sentences
    synonym_rng = random.Random(f"synonyms/{settings.seed}")
    lexicon = None
    if task == "translation":
        lexicon = Lexicon(
            rng,
            nouns=settings.nouns,
            verbs=settings.verbs,
            adjectives=settings.adjectives,
            senses=settings.senses,
            extra_syllables=settings.extra_syllables,
            shuffle_ranks=settings.zipf > 0,
            synonyms=settings.synonyms,
            synonym_rng=synonym_rng,
        )
        grammar, choices = settings.grammar, {}
        make = lambda n: _Derivation(  # noqa: E731
            rng, lexicon, grammar, choices, synonym_rng
        ).sentence(n)
    else:
        vocab = _symbols(settings.symbols)

        def make(n: int) -> SyntheticPair:
            words = [rng.choice(vocab) for _ in range(n)]
            out = words if task == "copy" else words[::-1]
            units = tuple(((i,), (i if task == "copy" else n - 1 - i,)) for i in range(n))
            return SyntheticPair(" ".join(words), " ".join(out), units)

    sizes = {"train": train_pairs, "val": val_pairs, "test": test_pairs}
    max_words = {"train": train_max_words, "val": train_max_words, "test": test_max_words}
    min_length = dict.fromkeys(SPLITS, min_words)
    if settings.extrapolation_pairs:  # drawn last: the other splits stay as without it
        sizes[EXTRAPOLATION] = settings.extrapolation_pairs
        max_words[EXTRAPOLATION] = settings.extrapolation_max_words
        min_length[EXTRAPOLATION] = train_max_words + 1
    seen: set[str] = set()  # source sentences already used by any split: splits are disjoint
    splits: dict[str, list[SyntheticPair]] = {}
    for split in sizes:
        min_words = min_length[split]
        out: list[SyntheticPair] = []
        attempts = 0
        while len(out) < sizes[split]:
            attempts += 1
            if attempts > 50 * sizes[split] + 1000:
                raise ConfigError(
                    f"data.source: could not draw {sizes[split]} distinct {split} sentences of "
                    f"{min_words}..{max_words[split]} words; allow longer sentences or a larger "
                    "vocabulary, or ask for fewer pairs"
                )
            pair = make(rng.randint(min_words, max_words[split]))
            n = pair.src.count(" ") + 1
            if n < min_words or pair.src in seen:
                continue
            seen.add(pair.src)
            out.append(pair)
        splits[split] = out
    return SyntheticCorpus(task, splits, lexicon)


@functools.lru_cache(maxsize=2)
def _cached_corpus(settings: SyntheticTask) -> SyntheticCorpus:
    """One generation per settings and process: a run and its checks read it more than once."""
    return generate_corpus(settings)


class SyntheticSource(PairSource):
    """``data=synthetic|copy|reverse``: the generated corpus as a pair source.

    Its two languages are called ``src`` and ``tgt``; ``data.src_lang=tgt data.tgt_lang=src``
    trains the reverse direction (whose references are not guaranteed to be unique).
    ``seed`` is the identity of the corpus, kept separate from the training seed so that runs
    with different seeds train on the same data.
    """

    LANGS = ("src", "tgt")
    generated = True

    def __init__(self, **settings: Any) -> None:
        """``settings``: the fields of :class:`SyntheticTask`."""
        self.settings = SyntheticTask(**settings)
        task = self.settings.task
        self.name = "synthetic" if task == "translation" else task

    def describe(self) -> str:
        s = self.settings
        extrapolation = (
            f", {EXTRAPOLATION} {s.train_max_words + 1}-{s.extrapolation_max_words}"
            if s.extrapolation_pairs
            else ""
        )
        return (
            f"synthetic {s.task} task (seed {s.seed}; train/val up to "
            f"{s.train_max_words} words, test up to {s.test_max_words}{extrapolation})"
        )

    def extra_test_splits(self) -> tuple[str, ...]:
        return (EXTRAPOLATION,) if self.settings.extrapolation_pairs else ()

    def load(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> dict[str, TextPairs]:
        for key, lang in (("src_lang", context.src_lang), ("tgt_lang", context.tgt_lang)):
            if lang not in self.LANGS:
                raise ConfigError(
                    f"data.{key}={lang}: the synthetic task's languages are 'src' and 'tgt'"
                )
        corpus = _cached_corpus(self.settings)
        flip = context.src_lang == "tgt"
        out: dict[str, TextPairs] = {}
        for split in splits:  # the corpus is generated whole: its splits depend on each other
            src = [p.src for p in corpus.splits[split]]
            tgt = [p.tgt for p in corpus.splits[split]]
            out[split] = (tgt, src) if flip else (src, tgt)
        return out

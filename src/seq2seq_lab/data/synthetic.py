"""The embedded synthetic translation task: a seeded toy language pair generated in-process.

It exists to make the documented comparisons visible on a laptop CPU in minutes, with no
download. A small grammar writes a *source* sentence and, from the same derivation, its exact
*target* translation, so the reference is a deterministic function of the source (a perfect
model scores 100 BLEU) and every alignment is known.

What the language pair contains, and which comparison it serves:

- Two invented vocabularies of a few hundred words each: source words are hyphenated syllables
  ("ka-lo", "mi-ra-tu"), target words short closed syllables ("mip", "dovs").
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
- Length: sentences are clauses joined by conjunctions, with prepositional phrases and relative
  clauses, generated to a length drawn uniformly from ``[min_words, max_words]`` of each split.
  Train and val stop at ``train_max_words``; test goes to ``test_max_words``, beyond any
  training sentence (Bahdanau et al. 2014, BLEU by sentence length).

Grammar (source order; the target order of each rule after the arrow)::

    sentence := clause (conj clause)*
    clause   := NP_full verb [NP_full] PP*      ->  NP_full [NP_full] PP* verb
    NP_full  := NP [PP | REL]
    NP       := det noun adj*                   ->  det adj*(mirrored) noun
    PP       := prep NP                         ->  NP postposition
    REL      := rel verb [NP]                   ->  rel [NP] verb

Each source word belongs to exactly one lexical entry and category, and noun phrases inside a
PP or a REL take no further modifiers, so a source string has a single derivation: the
reference is a function of the source text.

Also two tiny tasks for tests and teaching: ``copy`` (target = source) and ``reverse`` (target =
source reversed) over random sequences of a small symbol vocabulary.

Determinism: everything is drawn from one ``random.Random(seed)`` (Mersenne Twister, stable
across platforms and Python versions) and no set or hash order is ever iterated, so the same
seed gives byte-identical text. Train, val and test are disjoint (no source sentence repeats).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from seq2seq_lab.data.sources import SPLITS, PairSource, SourceContext, TextPairs
from seq2seq_lab.errors import ConfigError

TASKS = ("translation", "copy", "reverse")

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

    def src(self, plural: bool) -> tuple[str, ...]:
        return self.src_pl if plural else self.src_sg

    def tgt(self, plural: bool) -> tuple[str, ...]:
        return self.tgt_pl if plural else self.tgt_sg


@dataclass(frozen=True)
class WordInfo:
    """What a surface word is: its category and, for nouns and target verbs, its number."""

    category: str
    plural: bool


class _WordMaker:
    """Fresh, never-repeated invented words (rejection sampling against everything made)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
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
            rng.choice(_SRC_CONSONANTS) + rng.choice(_SRC_VOWELS) for _ in range(syllables)
        )

    def src_function(self) -> str:
        return self.rng.choice(_SRC_CONSONANTS) + self.rng.choice(_SRC_VOWELS)

    def tgt(self) -> str:
        rng = self.rng
        return rng.choice(_TGT_ONSETS) + rng.choice(_TGT_VOWELS) + rng.choice(_TGT_CODAS)

    def tgt_function(self) -> str:
        return self.rng.choice(_TGT_VOWELS) + self.rng.choice(_TGT_CODAS)


def _none(_: str) -> list[str]:
    return []


class Lexicon:
    """The bilingual lexicon of the synthetic task, drawn from ``rng``.

    About 10% of nouns are source compounds (two source words -> one target word), 10% are
    target compounds (one -> two); about 10% of verbs are source "stem + light word" pairs
    (two -> one) and 10% target "verb + particle" pairs (one -> two).
    """

    def __init__(self, rng: random.Random, *, nouns: int, verbs: int, adjectives: int) -> None:
        for key, value, low in (
            ("nouns", nouns, 10),
            ("verbs", verbs, 10),
            ("adjectives", adjectives, 1),
        ):
            if value < low:
                raise ConfigError(f"data.source.{key}={value}: expected at least {low}")
        w = _WordMaker(rng)
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

        self.source_words: dict[str, WordInfo] = {}
        self.target_words: dict[str, WordInfo] = {}
        for entry in self.entries():
            for plural in (False, True):
                for word in entry.src(plural):
                    self.source_words.setdefault(word, WordInfo(entry.category, plural))
                for word in entry.tgt(plural):
                    self.target_words.setdefault(word, WordInfo(entry.category, plural))
        # words shared by several lemmas (light words, particles) carry no number
        for word in light_words:
            self.source_words[word] = WordInfo("light", False)
        for word in particles:
            self.target_words[word] = WordInfo("particle", False)

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


class _Derivation:
    """Builds one sentence: lexical units and the agreement links between them."""

    MAX_ADJECTIVES = 2  # per noun phrase
    MAX_CLAUSE_PPS = 2
    MAX_CLAUSE_WORDS = 12  # longer sentences get more clauses, not longer clauses

    def __init__(self, rng: random.Random, lexicon: Lexicon) -> None:
        self.rng, self.lex = rng, lexicon
        self.units: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        self.agreements: list[tuple[int, int, bool]] = []  # (noun unit, verb unit, plural)

    def _unit(self, entry: LexicalEntry, plural: bool = False) -> int:
        self.units.append((entry.src(plural), entry.tgt(plural)))
        return len(self.units) - 1

    def _pick(self, entries: Sequence[LexicalEntry], max_words: int) -> LexicalEntry:
        fitting = [e for e in entries if len(e.src_sg) <= max_words]
        return self.rng.choice(fitting)

    def _cost(self, unit: int) -> int:
        return len(self.units[unit][0])

    def np(self, max_words: int) -> _NP:
        """det noun: 2 or 3 source words (``max_words`` >= 2)."""
        plural = self.rng.random() < 0.4
        det = self._unit(self.rng.choice(self.lex.dets))
        noun = self._unit(self._pick(self.lex.nouns, max_words - 1), plural)
        return _NP(det, noun, plural)

    def _np_cost(self, np: _NP) -> int:
        return sum(self._cost(u) for u in np.src())

    def verb(self, transitive: bool, subject: _NP, max_words: int) -> int:
        entries = self.lex.verbs_tr if transitive else self.lex.verbs_intr
        verb = self._unit(self._pick(entries, max_words), subject.plural)
        self.agreements.append((subject.noun, verb, subject.plural))
        return verb

    def pp(self, max_words: int) -> _PP:
        """prep det noun: 3 or 4 source words (``max_words`` >= 3)."""
        prep = self._unit(self.rng.choice(self.lex.preps))
        return _PP(prep, self.np(max_words - 1))

    def rel(self, head: _NP, max_words: int) -> _Rel:
        """rel verb [det noun]: 2 to 6 source words (``max_words`` >= 2)."""
        rel = self._unit(self.lex.rels[0])
        transitive = max_words >= 4 and self.rng.random() < 0.5
        verb = self.verb(transitive, head, max_words - 1 - (2 if transitive else 0))
        obj = None
        if transitive:
            obj = self.np(max_words - 1 - self._cost(verb))
        return _Rel(rel, verb, obj)

    def clause(self, budget: int) -> _Clause:
        """A clause of at most ``budget`` (>= 3) source words, usually exactly ``budget``."""
        rng = self.rng
        transitive = budget >= 5 and rng.random() < 0.6
        object_words = 2 if transitive else 0  # the shortest object: det noun
        subj = self.np(budget - 1 - object_words)  # leave room for the verb and the object
        verb = self.verb(transitive, subj, budget - self._np_cost(subj) - object_words)
        obj = None
        if transitive:
            obj = self.np(budget - self._np_cost(subj) - self._cost(verb))
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
            if len(clause.pps) < self.MAX_CLAUSE_PPS and left >= 3:
                options.append((2.0, "clause_pp", None))
            for np in clause.nps():
                if len(np.adjs) < self.MAX_ADJECTIVES:
                    options.append((0.5, "adj", np))
            if not options:
                break
            _, kind, np = rng.choices(options, [w for w, _, _ in options])[0]
            if kind == "clause_pp":
                clause.pps.append(self.pp(left))
            elif kind == "pp":
                np.pp = self.pp(left)
            elif kind == "rel":
                np.rel = self.rel(np, left)
            else:
                np.adjs.append(self._unit(rng.choice(self.lex.adjectives)))
            left = budget - sum(self._cost(u) for u in clause.src())
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
            if left <= self.MAX_CLAUSE_WORDS:
                budget = left
            else:  # leave room for at least one more clause
                budget = rng.randint(5, min(self.MAX_CLAUSE_WORDS, left - 4))
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
        return SyntheticPair(" ".join(src_words), " ".join(tgt_words), units, agreements)


# --------------------------------------------------------------------------------------------
# Corpora
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticCorpus:
    """The generated splits (``train``, ``val``, ``test``) and, for ``translation``, the lexicon."""

    task: str
    splits: dict[str, list[SyntheticPair]]
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
    and from ``[min_words, test_max_words]`` for test. ``nouns``/``verbs``/``adjectives`` size
    the translation lexicon; ``symbols`` is the vocabulary of ``copy`` and ``reverse``.
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
    lexicon = None
    if task == "translation":
        lexicon = Lexicon(
            rng, nouns=settings.nouns, verbs=settings.verbs, adjectives=settings.adjectives
        )
        make = lambda n: _Derivation(rng, lexicon).sentence(n)  # noqa: E731
    else:
        vocab = _symbols(settings.symbols)

        def make(n: int) -> SyntheticPair:
            words = [rng.choice(vocab) for _ in range(n)]
            out = words if task == "copy" else words[::-1]
            units = tuple(((i,), (i if task == "copy" else n - 1 - i,)) for i in range(n))
            return SyntheticPair(" ".join(words), " ".join(out), units)

    sizes = {"train": train_pairs, "val": val_pairs, "test": test_pairs}
    max_words = {"train": train_max_words, "val": train_max_words, "test": test_max_words}
    seen: set[str] = set()  # source sentences already used by any split: splits are disjoint
    splits: dict[str, list[SyntheticPair]] = {}
    for split in SPLITS:
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


class SyntheticSource(PairSource):
    """``data=synthetic|copy|reverse``: the generated corpus as a pair source.

    Its two languages are called ``src`` and ``tgt``; ``data.src_lang=tgt data.tgt_lang=src``
    trains the reverse direction (whose references are not guaranteed to be unique).
    ``seed`` is the identity of the corpus, kept separate from the training seed so that runs
    with different seeds train on the same data.
    """

    LANGS = ("src", "tgt")

    def __init__(self, **settings: Any) -> None:
        """``settings``: the fields of :class:`SyntheticTask`."""
        self.settings = SyntheticTask(**settings)
        task = self.settings.task
        self.name = "synthetic" if task == "translation" else task

    def describe(self) -> str:
        s = self.settings
        return (
            f"synthetic {s.task} task (seed {s.seed}; train/val up to "
            f"{s.train_max_words} words, test up to {s.test_max_words})"
        )

    def load(self, context: SourceContext, splits: Sequence[str] = SPLITS) -> dict[str, TextPairs]:
        for key, lang in (("src_lang", context.src_lang), ("tgt_lang", context.tgt_lang)):
            if lang not in self.LANGS:
                raise ConfigError(
                    f"data.{key}={lang}: the synthetic task's languages are 'src' and 'tgt'"
                )
        corpus = generate_corpus(self.settings)
        flip = context.src_lang == "tgt"
        out: dict[str, TextPairs] = {}
        for split in splits:  # the corpus is generated whole: its splits depend on each other
            src = [p.src for p in corpus.splits[split]]
            tgt = [p.tgt for p in corpus.splits[split]]
            out[split] = (tgt, src) if flip else (src, tgt)
        return out

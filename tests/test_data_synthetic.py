"""The synthetic task: determinism, disjoint splits, lengths, and the linguistic properties the
comparisons rely on (reordering, one-to-two/two-to-one words, long-distance agreement, exact
references: an independent parser re-derives every target from its source text alone)."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from config_values import config_values, synthetic_settings

from seq2seq_lab.data.sources import SourceContext
from seq2seq_lab.data.synthetic import (
    EXTRAPOLATION,
    LexicalEntry,
    Lexicon,
    SyntheticCorpus,
    SyntheticSource,
    SyntheticTask,
    generate_corpus,
)
from seq2seq_lab.errors import ConfigError

# conf/data/synthetic.yaml's task, smaller
SMALL = dict(train_pairs=400, val_pairs=50, test_pairs=150, train_max_words=20, test_max_words=40,
             extrapolation_max_words=40)  # fmt: skip
SMALL_EXTRAPOLATION = 60
# sha256 of data=synthetic_v1's corpus (train, val, test: "source\ttarget\n" per pair)
V1_SHA256 = "4f2681367a5c533facbe682f64dea4cbae1cd335d0d2eb4123c271bf4357c359"


def v1_settings(**overrides):
    return config_values("data.source", "data=synthetic_v1", **overrides)


def corpus_of(**overrides) -> SyntheticCorpus:
    """The corpus of conf/data/synthetic.yaml's settings with ``overrides``."""
    return generate_corpus(SyntheticTask(**synthetic_settings(**overrides)))


def source_of(**overrides) -> SyntheticSource:
    return SyntheticSource(**synthetic_settings(**overrides))


def ctx(src_lang: str, tgt_lang: str) -> SourceContext:
    return SourceContext(
        root=None, src_lang=src_lang, tgt_lang=tgt_lang, download=False, cache_dir="unused"
    )


@pytest.fixture(scope="module")
def corpus() -> SyntheticCorpus:
    """Version 2 without its free variation, so that each reference is one string the parser
    can re-derive (with it: test_synonyms_vary_the_target_words_and_nothing_else)."""
    return corpus_of(seed=7, **SMALL, synonyms=0.0, extrapolation_pairs=SMALL_EXTRAPOLATION)


def words(text: str) -> list[str]:
    return text.split()


def test_same_seed_same_bytes_and_other_seed_differs():
    a = source_of(seed=3, **SMALL).load(ctx("src", "tgt"))
    b = source_of(seed=3, **SMALL).load(ctx("src", "tgt"))
    c = source_of(seed=4, **SMALL).load(ctx("src", "tgt"))
    dump = lambda d: "\n".join(f"{s}\t{t}" for split in d for s, t in zip(*d[split]))  # noqa: E731
    assert dump(a).encode() == dump(b).encode()
    assert dump(a) != dump(c)


def test_split_sizes_and_disjoint(corpus):
    assert [len(corpus.splits[s]) for s in ("train", "val", "test")] == [400, 50, 150]
    sources = [p.src for split in corpus.splits.values() for p in split]
    assert len(set(sources)) == len(sources)


def test_lengths_and_longer_test_sentences(corpus):
    train_len = [len(words(p.src)) for p in corpus.splits["train"] + corpus.splits["val"]]
    test_len = [len(words(p.src)) for p in corpus.splits["test"]]
    assert min(train_len) >= 3 and max(train_len) <= 20
    assert max(test_len) <= 40
    longer = [n for n in test_len if n > max(train_len)]
    assert len(longer) > 0.3 * len(test_len)  # lengths 21..40 of a uniform 3..40 draw


def test_vocabularies_are_distinct_and_a_few_hundred_words_in_version_1():
    corpus = generate_corpus(
        SyntheticTask(**v1_settings(seed=1, train_pairs=3000, val_pairs=10, test_pairs=10))
    )
    src = {w for p in corpus.splits["train"] for w in words(p.src)}
    tgt = {w for p in corpus.splits["train"] for w in words(p.tgt)}
    assert not src & tgt
    assert 200 <= len(src) <= 400 and 200 <= len(tgt) <= 400


def test_version_1_is_the_corpus_its_results_were_made_on():
    """data=synthetic_v1 draws byte for byte the corpus of every result recorded before
    version 2 (its sha256, taken before the version 2 levers were added)."""
    corpus = generate_corpus(SyntheticTask(**v1_settings()))
    digest = hashlib.sha256()
    for split in ("train", "val", "test"):
        for source, target in corpus.pairs(split):
            digest.update(f"{source}\t{target}\n".encode())
    assert digest.hexdigest() == V1_SHA256
    assert EXTRAPOLATION not in corpus.splits


def test_the_zipf_lever_draws_a_long_tail_of_rare_words():
    """At a lexicon large enough for a tail (version 2's 150 nouns is not: its calibration in
    docs/synthetic_task.md), lemma frequencies fall as 1 / rank and many are seen once or twice."""
    corpus = corpus_of(seed=1, nouns=1000, train_pairs=3000, val_pairs=10, test_pairs=10)
    lex = corpus.lexicon
    counts = Counter(w for p in corpus.splits["train"] for w in words(p.src))
    by_rank = [sum(counts[w] for w in e.src_sg + e.src_pl) for e in lex.nouns]
    first, last = sum(by_rank[:100]), sum(by_rank[-100:])
    assert first > 10 * last  # P(rank r) ~ 1 / r
    seen = [n for n in by_rank if n]
    assert sum(n <= 2 for n in seen) > 0.2 * len(seen)  # many lemmas seen once or twice


def test_a_verb_class_decides_every_two_sense_noun(corpus):
    """Each SenseLink: the verb it names is of class ``sense``, and the target noun is that
    sense's word; both senses occur, with the deciding verb before the noun (objects, PPs)
    and after it (subjects)."""
    lex = corpus.lexicon
    classes = {w: e.verb_class for e in lex.verbs_tr + lex.verbs_intr for w in e.src_sg}
    nouns = {e.src(plural)[-1]: (e, plural) for e in lex.nouns for plural in (False, True)}
    links, before, after = Counter(), 0, 0
    for pair in corpus.splits["train"] + corpus.splits["test"]:
        src, tgt = words(pair.src), words(pair.tgt)
        for link in pair.senses:
            entry, plural = nouns[src[link.noun_pos]]
            assert entry.alt_sg, "only two-sense nouns are linked"
            assert classes[src[link.verb_pos]] == link.sense
            assert tgt[link.tgt_pos] == entry.tgt(plural, link.sense)[-1]
            assert entry.tgt(plural, 0) != entry.tgt(plural, 1)
            links[link.sense] += 1
            before += link.verb_pos < link.noun_pos
            after += link.verb_pos > link.noun_pos
    assert links[0] > 50 and links[1] > 50 and before > 50 and after > 50


def test_the_extrapolation_split_lies_past_every_training_length(corpus):
    train_max = SMALL["train_max_words"]
    long = corpus.splits[EXTRAPOLATION]
    assert len(long) == SMALL_EXTRAPOLATION
    assert all(train_max < len(words(p.src)) <= 2 * train_max for p in long)
    sources = [p.src for split in corpus.splits.values() for p in split]
    assert len(set(sources)) == len(sources)
    source = source_of(seed=7, **SMALL, extrapolation_pairs=SMALL_EXTRAPOLATION)
    assert source.extra_test_splits() == (EXTRAPOLATION,)
    assert source.load(ctx("src", "tgt"), (EXTRAPOLATION,))[EXTRAPOLATION][0] == [
        p.src for p in long
    ]
    assert source_of(**SMALL, extrapolation_pairs=0).extra_test_splits() == ()


def crossing(links: list[tuple[int, int]]) -> bool:
    return any(i1 < i2 and j1 > j2 for i1, j1 in links for i2, j2 in links)


def test_alignment_covers_every_word_and_is_not_monotone(corpus):
    n_crossing = 0
    for pair in corpus.splits["train"]:
        links = pair.links()
        assert sorted({i for i, _ in links}) == list(range(len(words(pair.src))))
        assert sorted({j for _, j in links}) == list(range(len(words(pair.tgt))))
        n_crossing += crossing(links)
    assert n_crossing > 0.9 * len(corpus.splits["train"])  # verb-final: almost every sentence


def test_one_to_two_and_two_to_one_units(corpus):
    shapes = {(len(s), len(t)) for p in corpus.splits["train"] for s, t in p.units}
    assert {(1, 1), (1, 2), (2, 1)} <= shapes


def test_long_distance_agreement_is_correct_and_present(corpus):
    lex = corpus.lexicon
    assert lex is not None
    distances, attractors = [], 0
    for pair in corpus.splits["train"] + corpus.splits["test"]:
        src, tgt = words(pair.src), words(pair.tgt)
        assert pair.agreements
        for a in pair.agreements:
            noun, verb = lex.source_words[src[a.src_pos]], lex.target_words[tgt[a.tgt_pos]]
            assert noun.category == "noun" and verb.category.startswith("verb")
            assert noun.plural == verb.plural == a.plural
            # where the (uninflected) source verb is: the unit aligned to the target verb
            verb_src = next(s[0] for s, t in pair.units if a.tgt_pos in t)
            distances.append(verb_src - a.src_pos)
            between = [lex.source_words.get(w) for w in src[a.src_pos + 1 : verb_src]]
            attractors += any(w and w.category == "noun" and w.plural != a.plural for w in between)
    assert min(distances) >= 1
    assert max(distances) >= 6  # subject with a PP or relative clause before the verb
    assert attractors > 20  # "the keys to the cabinet are": a noun of the other number between


def _lookup(lex: Lexicon) -> dict[tuple[str, ...], tuple[LexicalEntry, bool]]:
    table = {}
    for entry in lex.entries():
        for plural in (False, True):
            table.setdefault(entry.src(plural), (entry, plural))
    return table


def translate(src: str, lex: Lexicon) -> str:
    """An independent translator: parse the source string with the documented grammar and
    build the target, using only the lexicon. Agreeing with the generator on every pair shows
    the reference is a deterministic function of the source text."""
    table = _lookup(lex)
    toks = words(src)
    units: list[tuple[LexicalEntry, bool]] = []
    i = 0
    while i < len(toks):  # longest match: compounds are two words
        if tuple(toks[i : i + 2]) in table:
            units.append(table[tuple(toks[i : i + 2])])
            i += 2
        else:
            units.append(table[(toks[i],)])
            i += 1
    pos = 0

    def peek() -> str | None:
        return units[pos][0].category if pos < len(units) else None

    def take(category: str) -> tuple[LexicalEntry, bool]:
        nonlocal pos
        assert peek() == category, (category, peek(), src)
        pos += 1
        return units[pos - 1]

    def t(entry: LexicalEntry, plural: bool = False) -> list[str]:
        return list(entry.tgt(plural))

    # A noun's target words wait for its clause's verb, whose class picks the noun's sense
    # (version 2; in version 1 every verb is of class 0 and every noun has one sense).
    Items = list  # target words, and (noun entry, plural) where the sense is still open

    def resolve(items: Items, verb_class: int) -> list[str]:
        out: list[str] = []
        for item in items:
            out += list(item[0].tgt(item[1], verb_class)) if isinstance(item, tuple) else [item]
        return out

    def np() -> tuple[Items, bool]:
        det, _ = take("det")
        noun, plural = take("noun")
        adjs = []
        while peek() == "adj":
            adjs.append(take("adj")[0])
        out = t(det) + [w for a in reversed(adjs) for w in t(a)] + [(noun, plural)]
        return out, plural

    def pp() -> Items:
        prep, _ = take("prep")
        return np()[0] + t(prep)

    def verb(plural: bool) -> tuple[list[str], bool, int]:
        nonlocal pos
        entry = units[pos][0]
        assert entry.category in ("verb_tr", "verb_intr"), src
        pos += 1
        return t(entry, plural), entry.category == "verb_tr", entry.verb_class

    def rel(head_plural: bool) -> list[str]:
        r, _ = take("rel")
        v, transitive, verb_class = verb(head_plural)
        return t(r) + (resolve(np()[0], verb_class) if transitive else []) + v

    def np_full() -> tuple[Items, bool]:
        out, plural = np()
        if peek() == "prep":
            out += pp()
        elif peek() == "rel":
            out += rel(plural)
        return out, plural

    out: list[str] = []
    while pos < len(units):
        if out:
            out += t(take("conj")[0])
        subj, plural = np_full()
        v, transitive, verb_class = verb(plural)
        obj = np_full()[0] if transitive else []
        pps = []
        while peek() == "prep":
            pps += pp()
        out += resolve(subj + obj + pps, verb_class) + v
    return " ".join(out)


def test_references_are_a_function_of_the_source_text(corpus):
    for split in corpus.splits.values():
        for pair in split:
            assert translate(pair.src, corpus.lexicon) == pair.tgt
    v1 = generate_corpus(SyntheticTask(**v1_settings(seed=7, train_pairs=400)))
    for pair in v1.splits["train"]:
        assert translate(pair.src, v1.lexicon) == pair.tgt


def primary_words(lex: Lexicon) -> dict[str, str]:
    """Each synonym's word -> the word it stands in for."""
    out = {}
    for entry in lex.entries():
        for plural in (False, True):
            for syn, word in zip(entry.tgt(plural, synonym=True), entry.tgt(plural)):
                if syn != word:
                    out[syn] = word
    return out


def test_synonyms_vary_the_target_words_and_nothing_else():
    """With synonyms, every source sentence is the one drawn without them, and its target is
    the reference without them once each synonym is read as its word; the lemmas with one are
    the configured share of each class, and their occurrences use it at the configured rate."""
    settings = dict(seed=3, **SMALL, extrapolation_pairs=SMALL_EXTRAPOLATION)
    plain = corpus_of(**settings, synonyms=0.0)
    varied = corpus_of(**settings, synonyms=0.5, synonym_rate=0.25)
    lex = varied.lexicon
    primary = primary_words(lex)
    used = Counter()
    for split, pairs in varied.splits.items():
        for pair, before in zip(pairs, plain.splits[split], strict=True):
            assert pair.src == before.src and pair.units == before.units
            tgt = words(pair.tgt)
            assert [primary.get(w, w) for w in tgt] == words(before.tgt)
            assert translate(pair.src, lex) == before.tgt
            varies = [w for w in words(before.tgt) if w in primary.values()]
            used["synonym"] += sum(w in primary for w in tgt)
            used["either"] += len(varies)
    assert 0.21 < used["synonym"] / used["either"] < 0.29  # rate 0.25 over > 2,000 draws
    assert used["either"] > 2000
    one_sense = [e for e in lex.nouns if not e.alt_sg]
    for entries in (one_sense, lex.verbs_tr, lex.verbs_intr, lex.adjectives):
        assert sum(bool(e.syn_sg) for e in entries) == int(len(entries) * 0.5)
    assert not any(e.syn_sg for e in lex.nouns if e.alt_sg)


@pytest.mark.parametrize("task", ["copy", "reverse"])
def test_copy_and_reverse(task):
    corpus = corpus_of(task=task, seed=0, symbols=6, min_words=1, **SMALL)
    for pair in corpus.splits["train"]:
        expected = words(pair.src) if task == "copy" else words(pair.src)[::-1]
        assert words(pair.tgt) == expected
    symbols = {w for p in corpus.splits["train"] for w in words(p.src)}
    assert len(symbols) == 6
    assert max(len(words(p.src)) for p in corpus.splits["test"]) > 20


def test_reverse_direction_swaps_sides():
    fwd = source_of(seed=2, **SMALL).load(ctx("src", "tgt"))
    back = source_of(seed=2, **SMALL).load(ctx("tgt", "src"))
    assert back["val"] == (fwd["val"][1], fwd["val"][0])


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"task": "sort"}, "data.source.task"),
        ({"train_max_words": 30, "test_max_words": 20}, "test_max_words"),
        ({"min_words": 2}, "data.source.min_words"),
        ({"train_pairs": 0}, "data.source.train_pairs"),
        ({"task": "copy", "symbols": 1}, "data.source.symbols"),
        ({"extrapolation_pairs": 5, "extrapolation_max_words": 20}, "extrapolation_max_words"),
        ({"senses": 1.5}, "data.source.senses"),
        ({"synonyms": 1.5}, "data.source.synonyms"),
        ({"synonym_rate": -0.1}, "data.source.synonym_rate"),
        ({"zipf": -1}, "data.source.zipf"),
    ],
)
def test_bad_settings_name_the_key(kwargs, key):
    with pytest.raises(ConfigError, match=key):
        corpus_of(**{**SMALL, **kwargs})


def test_impossible_request_is_a_config_error():
    with pytest.raises(ConfigError, match="distinct"):
        corpus_of(
            task="copy", symbols=2, min_words=1, train_max_words=2, test_max_words=2, train_pairs=50
        )


def test_unknown_language_name():
    with pytest.raises(ConfigError, match="data.src_lang=de"):
        source_of(**SMALL).load(ctx("de", "tgt"))

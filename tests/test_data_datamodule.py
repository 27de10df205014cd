"""TranslationDataModule end to end: the synthetic task and a tiny parallel-text directory,
built from the real Hydra configs; filter, hold-outs, checkpoint state, and Lightning's
epoch hooks."""

from __future__ import annotations

import io
from pathlib import Path

import lightning as L
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.errors import InstantiationException
from hydra.utils import instantiate

from seq2seq_lab.data.batch import Batch
from seq2seq_lab.data.datamodule import TranslationDataModule, tokenizers_from_checkpoint_state
from seq2seq_lab.errors import ConfigError, DataError

CONF = Path(__file__).resolve().parents[1] / "conf"
SMALL_SYNTHETIC = [
    "data.source.train_pairs=300",
    "data.source.val_pairs=40",
    "data.source.test_pairs=60",
    # version 1 (170 lemmas drawn uniformly) in long sentences: 300 of them cover the
    # vocabulary of the val split (no <unk>)
    "data.source.train_max_words=25",
    "data.source.test_max_words=50",
    "data.max_tokens=256",
]


def make_data(option: str, cache_dir: Path, *overrides: str) -> TranslationDataModule:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            overrides=[f"+data={option}", "+seed=0", f"+paths.cache_dir={cache_dir}", *overrides]
        )
    return instantiate(cfg.data)


def all_batches(loader) -> list[Batch]:
    return list(loader)


def weights_only_round_trip(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> TranslationDataModule:
    dm = make_data("synthetic_v1", tmp_path_factory.mktemp("cache"), *SMALL_SYNTHETIC)
    dm.prepare_data()
    dm.setup("fit")
    return dm


def test_synthetic_setup_exposes_sizes_and_tokenizers(synthetic):
    assert synthetic.src_vocab_size == synthetic.src_tokenizer.vocab_size > 100
    assert synthetic.tgt_vocab_size == synthetic.tgt_tokenizer.vocab_size > 100
    assert synthetic.shared_vocab is False
    text = synthetic.raw_pairs("train")[0][0]
    assert synthetic.encode_source(text) == synthetic.src_tokenizer.encode(text)


def test_batches_decode_to_the_untouched_references(synthetic):
    sources, references = synthetic.raw_pairs("val")
    seen = []
    for batch in all_batches(synthetic.val_dataloader()):
        assert isinstance(batch, Batch)
        assert len(batch) * max(batch.src.size(1), batch.tgt_in.size(1)) <= 256
        for row, i in enumerate(batch.index.tolist()):
            seen.append(i)
            assert synthetic.tgt_tokenizer.decode(batch.tgt_out[row].tolist()) == references[i]
            assert synthetic.src_tokenizer.decode(batch.src[row].tolist()) == sources[i]
    assert sorted(seen) == list(range(len(references)))


def test_train_and_test_loaders_cover_their_splits(synthetic):
    train = [i for b in all_batches(synthetic.train_dataloader()) for i in b.index.tolist()]
    assert sorted(train) == list(range(300))
    synthetic.setup("test")
    test = [i for b in all_batches(synthetic.test_dataloader()) for i in b.index.tolist()]
    assert sorted(test) == list(range(60))


def test_summary_and_printed_table(synthetic, capsys):
    s = synthetic.summary()
    assert {k: v["pairs"] for k, v in s["splits"].items()} == {"train": 300, "val": 40, "test": 60}
    assert s["vocab"] == {
        "src": synthetic.src_vocab_size,
        "tgt": synthetic.tgt_vocab_size,
        "shared": False,
    }
    test_len, train_len = s["splits"]["test"]["src_len"], s["splits"]["train"]["src_len"]
    assert train_len["p50"] <= train_len["p95"] <= train_len["max"] <= 25 < test_len["max"]
    synthetic.print_summary()
    out = capsys.readouterr().out
    assert "train" in out and "300" in out and "synthetic translation task" in out


def test_state_dict_round_trip_through_a_weights_only_checkpoint(synthetic, tmp_path):
    state = weights_only_round_trip({"TranslationDataModule": synthetic.state_dict()})
    src, tgt = tokenizers_from_checkpoint_state(state)  # a whole checkpoint works too
    assert src == synthetic.src_tokenizer and tgt == synthetic.tgt_tokenizer
    # a fresh module (another vocabulary setting) uses the checkpoint's tokenizers, not its own
    other = make_data("synthetic_v1", tmp_path, *SMALL_SYNTHETIC, "data.tokenizer.min_freq=100000")
    other.load_state_dict(state["TranslationDataModule"])
    other.setup("test")
    assert other.src_vocab_size == synthetic.src_vocab_size
    assert other.tgt_tokenizer == synthetic.tgt_tokenizer


# --------------------------------------------------------------------------- parallel text


def write_tiny_corpus(root: Path) -> None:
    """60 train lines numbered in order (so hold-outs are checkable), 8 val, 6 test."""
    animals = ["Hund", "Katze", "Maus", "Pferd", "Vogel"]
    english = [
        "dog",
        "cat",
        "mouse",
        "horse",
        "vulture",
    ]  # every character of "val"/"test" is in train
    root.mkdir()
    for split, n in (("train", 60), ("val", 8), ("test", 6)):
        de, en = [], []
        for i in range(n):
            k = 1 + i % 9 if split != "test" else 20 + 3 * i  # test: longer sentences
            de.append(f"{split} {i}: " + " und ".join(animals[j % 5] for j in range(k)) + ".")
            en.append(f"{split} {i}: " + " and ".join(english[j % 5] for j in range(k)) + ".")
        (root / f"{split}.de").write_text("\n".join(de) + "\n", "utf-8")
        (root / f"{split}.en").write_text("\n".join(en) + "\n", "utf-8")


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("text") / "corpus"
    write_tiny_corpus(root)
    return root


def parallel(corpus_dir: Path, cache: Path, *overrides: str) -> TranslationDataModule:
    return make_data(
        "parallel_text",
        cache,
        f"data.root={corpus_dir}",
        "data.tokenizer.vocab_size=120",
        "data.max_tokens=400",
        *overrides,
    )


def test_parallel_text_end_to_end_with_a_joint_subword_vocabulary(corpus_dir, tmp_path):
    dm = parallel(corpus_dir, tmp_path)
    dm.prepare_data()
    dm.setup("fit")
    assert dm.shared_vocab and dm.src_tokenizer is dm.tgt_tokenizer
    assert dm.src_vocab_size <= 120
    assert list((tmp_path / "tokenizers").glob("spm-*.model"))
    sources, references = dm.raw_pairs("val")
    for batch in all_batches(dm.val_dataloader()):
        for row, i in enumerate(batch.index.tolist()):
            assert dm.tgt_tokenizer.decode(batch.tgt_out[row].tolist()) == references[i]


def test_hold_out_the_end_of_train_and_subset(corpus_dir, tmp_path):
    dm = parallel(
        corpus_dir,
        tmp_path,
        "data.test_from_train_lines=5",
        "data.val_from_train_lines=3",
        "data.first_pairs.train=20",
        "data.first_pairs.test=2",
    )
    test_src, _ = dm.raw_pairs("test")
    val_src, _ = dm.raw_pairs("val")
    train_src, _ = dm.raw_pairs("train")
    # the cut comes after the held-out blocks are taken: test is the first 2 of the last 5
    assert [s.split(":")[0] for s in test_src] == [f"train {i}" for i in range(55, 57)]
    assert [s.split(":")[0] for s in val_src] == [f"train {i}" for i in range(52, 55)]
    assert [s.split(":")[0] for s in train_src] == [f"train {i}" for i in range(20)]
    with pytest.raises(ConfigError, match="test_from_train_lines=60"):
        parallel(corpus_dir, tmp_path, "data.test_from_train_lines=60").setup("fit")
    with pytest.raises(InstantiationException, match=r"data.first_pairs.val=0: expected a pos"):
        parallel(corpus_dir, tmp_path, "data.first_pairs.val=0")


@pytest.mark.parametrize(
    "held_out,absent,missing",
    [
        (["data.test_from_train_lines=5", "data.val_from_train_lines=3"], ["val", "test"], None),
        (["data.test_from_train_lines=5"], ["test"], None),
        (["data.test_from_train_lines=5"], ["val", "test"], "val.de"),
    ],
    ids=["both-held-out", "test-held-out", "val-still-read"],
)
def test_splits_taken_from_train_lines_need_no_files(
    held_out, absent, missing, tmp_path_factory, tmp_path
):
    # issue 20: the val/test files were demanded although their lines came from train
    root = tmp_path_factory.mktemp("text") / "corpus"
    write_tiny_corpus(root)
    for split in absent:
        for lang in ("de", "en"):
            (root / f"{split}.{lang}").unlink()
    dm = parallel(root, tmp_path, *held_out)
    if missing:
        with pytest.raises(DataError, match=rf"^missing file {root / missing} and 1 more: .*"):
            dm.setup("fit")
        return
    dm.prepare_data()
    dm.setup("fit")
    assert [s.split(":")[0] for s in dm.raw_pairs("test")[0]] == [
        f"train {i}" for i in range(55, 60)
    ]


def test_max_len_filter_reports_drops_and_never_drops_test(corpus_dir, tmp_path):
    dm = parallel(corpus_dir, tmp_path, "data.max_len=14")
    dm.setup("fit")
    dm.setup("test")
    summary = dm.summary()["splits"]
    assert summary["train"]["dropped"] > 0 and summary["val"]["dropped"] > 0
    assert summary["train"]["pairs"] + summary["train"]["dropped"] == 60
    assert summary["train"]["src_len"]["max"] <= 14
    assert summary["test"] == {**summary["test"], "pairs": 6, "dropped": 0}
    assert summary["test"]["src_len"]["max"] > 14  # long test pairs are kept
    test = [i for b in all_batches(dm.test_dataloader()) for i in b.index.tolist()]
    assert sorted(test) == list(range(6))


def test_split_option_serves_any_split_unfiltered(corpus_dir, tmp_path):
    dm = parallel(corpus_dir, tmp_path, "data.max_len=14", "data.split=val")
    dm.setup("test")
    served = [i for b in all_batches(dm.test_dataloader()) for i in b.index.tolist()]
    assert sorted(served) == list(range(8))
    # Hydra wraps constructor errors in an InstantiationException; the cause is ours
    with pytest.raises(InstantiationException) as e:
        parallel(corpus_dir, tmp_path, "data.split=dev")
    assert isinstance(e.value.__cause__, ConfigError)
    assert str(e.value.__cause__) == "data.split=dev: expected one of train, val, test"


def test_missing_root_for_multi30k_says_what_to_pass(tmp_path):
    dm = make_data("multi30k", tmp_path)
    with pytest.raises(ConfigError) as e:
        dm.setup("fit")
    assert "data.root=../shared/data/multi30k" in str(e.value)
    assert "data.download=true" in str(e.value)


def test_tokenizers_before_setup_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="setup"):
        make_data("copy", tmp_path).src_vocab_size  # noqa: B018


# ------------------------------------------------------------------------------- Lightning


class RecordingModule(L.LightningModule):
    """Records the order of training pairs per epoch; learns nothing of interest."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.orders: list[list[int]] = []

    def on_train_epoch_start(self) -> None:
        self.orders.append([])

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        self.orders[-1] += batch.index.tolist()
        return (self.weight * batch.src.float().mean()).pow(2)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_twice_recording(tmp_path: Path) -> tuple[list[list[int]], Path]:
    orders, ckpt = [], tmp_path / "last.ckpt"
    for _ in range(2):
        dm = make_data(
            "copy",
            tmp_path / "cache",
            "data.source.train_pairs=120",
            "data.source.val_pairs=10",
            "data.source.test_pairs=10",
            "data.max_tokens=120",
        )
        module = RecordingModule()
        trainer = L.Trainer(
            max_epochs=2,
            accelerator="cpu",
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            limit_val_batches=0,
            reload_dataloaders_every_n_epochs=1,  # required (train_dataloader says why)
        )
        trainer.fit(module, datamodule=dm)
        orders.append(module.orders)
        trainer.save_checkpoint(ckpt)
    assert orders[0] == orders[1]  # same seed, same batches, run after run
    return orders[0], ckpt


@pytest.mark.filterwarnings("ignore:.*no `validation_step`", "ignore:.*LeafSpec")
def test_a_trainer_keeping_the_loader_across_epochs_is_refused(tmp_path):
    dm = make_data("copy", tmp_path / "cache", "data.source.train_pairs=120")
    trainer = L.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                        enable_checkpointing=False, enable_model_summary=False)  # fmt: skip
    with pytest.raises(ConfigError, match=r"trainer.reload_dataloaders_every_n_epochs=0"):
        trainer.fit(RecordingModule(), datamodule=dm)


@pytest.mark.filterwarnings("ignore:.*no `validation_step`", "ignore:.*LeafSpec")
def test_lightning_sets_the_epoch_and_checkpoints_the_tokenizers(tmp_path):
    (epoch0, epoch1), ckpt = fit_twice_recording(tmp_path)
    assert sorted(epoch0) == sorted(epoch1) == list(range(120))
    assert epoch0 != epoch1  # set_epoch reached the sampler
    checkpoint = torch.load(ckpt, weights_only=True)
    src, tgt = tokenizers_from_checkpoint_state(checkpoint)
    assert src is tgt and src.vocab_size == 4 + 20  # the copy task's joint symbol vocabulary

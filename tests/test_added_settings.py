"""Options added since runs were recorded, whose default is not what the code of that time
did (seq2seq_lab/added_settings.py): a report's command for an old run names the old value,
so it makes what the run made; a run that recorded the option gets nothing added."""

from __future__ import annotations

import pytest
from report_support import write_run

from seq2seq_lab.added_settings import (
    added_overrides,
    before,
    changed_defaults,
    remake_note,
    with_added_settings,
)
from seq2seq_lab.report.commands import sweep_command
from seq2seq_lab.report.runs import find_runs

TRANSFORMER = "seq2seq_lab.models.transformer.network.TransformerNetwork"


def test_an_old_transformer_record_gets_the_xavier_scheme_it_was_made_with():
    assert added_overrides({"model": {"_target_": TRANSFORMER}}) == ["model.init=xavier"]
    assert added_overrides({"model": {"_target_": TRANSFORMER, "init": "paper"}}) == []
    luong = "seq2seq_lab.models.recurrent.luong.LuongNetwork"
    assert added_overrides({"model": {"_target_": luong, "attention": {"scaled": False}}}) == []
    assert added_overrides({}) == []  # no recorded config: nothing to infer
    assert before("model.init") == "xavier"


def test_old_checkpoints_and_old_runs_read_one_table_of_what_the_code_did_before():
    """A key added since runs were recorded has one value "as before" (added_settings.before):
    loading an old checkpoint fills it in, and matching a job to an old run ignores it there."""
    from seq2seq_lab.checkpoint import OLD_CHECKPOINT_LUONG_ATTENTION, OLD_CHECKPOINT_TRANSFORMER
    from seq2seq_lab.record.run_reuse import NEUTRAL

    assert before("model.attention.scaled") is False  # Luong's own score
    assert OLD_CHECKPOINT_LUONG_ATTENTION == {
        key: NEUTRAL[("model", "attention", key)] for key in ("scaled", "init_scale")
    }
    assert OLD_CHECKPOINT_TRANSFORMER["init"] == NEUTRAL[("model", "init")] == "xavier"
    assert ("data", "source", "zipf") not in NEUTRAL  # version 1 is a data option, not a value
    with pytest.raises(KeyError):
        before("model.hidden_size")


def test_e1s_luong_runs_before_its_multi30k_family_file_get_the_unscaled_score():
    """E1 scales Luong's score at multi30k (families/luong_multi30k.yaml): the command of an
    E1 Luong run at multi30k made with Luong's unscaled score, recorded without the option or
    with it at false, names it; a scaled run, another scale or comparison gets nothing."""
    luong = {"_target_": "seq2seq_lab.models.recurrent.luong.LuongNetwork"}

    def record(experiment="e1_attention", **attention):
        return {"experiment_name": experiment, "model": {**luong, "attention": attention}}

    unscaled = "model.attention.scaled=false"
    assert with_added_settings(["model=luong", "seed=1"], record(), "multi30k") == [
        "model=luong",
        "seed=1",
        unscaled,
    ]
    assert added_overrides(record(scaled=False), "multi30k") == [unscaled]
    assert added_overrides(record(scaled=True), "multi30k") == []
    assert added_overrides(record(scaled=False), "synthetic") == []  # no family file there
    assert added_overrides(record("e3_scores", scaled=False), "multi30k") == []
    note = remake_note(unscaled, ["luong", "luong"])
    assert note == (
        "# made before experiments/e1_attention/families/luong_multi30k.yaml: to remake the "
        "luong runs, add model.attention.scaled=false"
    )


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """An experiments root of its own beside the checkout's (experiment_folders.ENV)."""
    monkeypatch.setenv("SEQ2SEQ_LAB_EXPERIMENTS", str(tmp_path))
    changed_defaults.cache_clear()
    yield tmp_path
    changed_defaults.cache_clear()


def test_a_family_file_changes_the_settings_it_gives_other_values_than_the_familys_own(lab):
    """Read from the file, not a table: a setting at another value than conf/model/<model>.yaml
    is a changed default at the file's scale (a scale whose name holds another's, such as
    synthetic_v2, included); a setting at the family's own value, a key the family does not
    set and the report's label are none."""
    families = lab / "mine" / "families"
    families.mkdir(parents=True)
    (lab / "mine" / "config.yaml").write_text("experiment_name: mine\n")
    (families / "bahdanau_synthetic_v2.yaml").write_text(
        "# @package _global_\nmodel: {dropout: 0.5, attention: {form: separate}, nothere: 1}\n"
        "variant: bahdanau_wet\n"
    )
    found = [c for c in changed_defaults() if c.experiment == "mine"]
    assert [(c.scale, c.key, c.value) for c in found] == [("synthetic_v2", "model.dropout", 0.5)]
    (change,) = found
    bahdanau = {"_target_": change.target}
    old = {"experiment_name": "mine", "model": {**bahdanau, "dropout": 0.2}}
    assert added_overrides(old, "synthetic_v2") == ["model.dropout=0.2"]  # as it was recorded
    assert added_overrides({**old, "model": {**bahdanau, "dropout": 0.5}}, "synthetic_v2") == []
    assert added_overrides(old, "synthetic") == []
    assert remake_note("model.dropout=0.2", ["bahdanau"]).startswith(
        f"# made before {families / 'bahdanau_synthetic_v2.yaml'}: "
    )


def test_an_old_synthetic_record_names_version_1_and_replaces_a_recorded_data_choice():
    synthetic = {"_target_": "seq2seq_lab.data.synthetic.SyntheticSource"}
    old = {"data": {"source": {**synthetic, "task": "translation", "nouns": 80}}}
    assert with_added_settings(["seed=1"], old) == ["seed=1", "data=synthetic_v1"]
    assert with_added_settings(["data=synthetic", "seed=1"], old) == [
        "data=synthetic_v1",
        "seed=1",
    ]
    copy = {"data": {"source": {**synthetic, "task": "copy"}}}  # the symbol tasks did not change
    assert with_added_settings(["data=copy"], copy) == ["data=copy"]
    new = {"data": {"source": {**synthetic, "task": "translation", "zipf": 1.0}}}
    assert with_added_settings(["seed=1"], new) == ["seed=1"]


def test_the_report_command_of_an_old_run_names_the_old_value(tmp_path):
    write_run(tmp_path / "old", experiment="e4", variant="post", family="transformer",
              overrides=["model.norm=post", "seed=1"])  # fmt: skip
    write_run(tmp_path / "new", experiment="e4", variant="post", family="transformer",
              overrides=["model.norm=post", "seed=1"], config={"model.init": "paper"})  # fmt: skip
    runs = {run.path.name: run for run in find_runs(tmp_path)[0]}
    assert sweep_command([runs["old"]], multirun=False) == (
        "python -m seq2seq_lab.train model.norm=post seed=1 model.init=xavier"
    )
    assert sweep_command([runs["new"]], multirun=False) == (
        "python -m seq2seq_lab.train model.norm=post seed=1"
    )


def test_a_sweep_where_only_some_runs_lack_the_option_says_which_under_the_command(tmp_path):
    (tmp_path / "multirun.yaml").write_text("hydra: {}\n")
    for job, family in enumerate(("bahdanau", "transformer")):
        write_run(tmp_path / str(job), experiment="e1", variant=family, family=family,
                  overrides=[f"model={family}", "seed=1"])  # fmt: skip
    command, note = sweep_command(find_runs(tmp_path)[0]).split("\n")
    assert command == "python -m seq2seq_lab.train -m seed=1 model=bahdanau,transformer"
    assert note == (
        "# made before model.init existed: to remake the transformer runs, add model.init=xavier"
    )

"""Every config option composes, and builds what it names (the template's config test)."""

from __future__ import annotations

from pathlib import Path

import hydra.utils
import pytest
import torch
from conftest import CONF_DIR, FAMILIES, compose_config
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from seq2seq_lab import experiment_folders
from seq2seq_lab.config import instantiate
from seq2seq_lab.models.attention.multi_head import MultiHeadAttention
from seq2seq_lab.report.grid import SEED, axes, compose_experiment, seeds, settings
from seq2seq_lab.training.precision import choose_precision

EXPERIMENTS = experiment_folders.experiments()
GROUPS = ("data", "model", "optim", "schedule", "trainer", "logger", "callbacks")


def options(group: str) -> list[str]:
    return sorted(
        p.stem for p in (Path(CONF_DIR) / group).glob("*.yaml") if not p.stem.startswith("_")
    )


@pytest.mark.parametrize(
    "group,option", [(g, o) for g in GROUPS for o in options(g)], ids=lambda v: str(v)
)
def test_every_option_composes(group, option, tmp_path):
    cfg = compose_config("train", [f"{group}={option}"], tmp_path)
    assert cfg.get(group) is not None
    if group in ("model", "optim", "schedule"):
        hydra.utils.get_class(cfg[group]._target_)  # the target exists
    if group == "schedule":
        hydra.utils.instantiate(cfg.schedule)


@pytest.mark.parametrize("family", FAMILIES)
def test_model_configs_build_their_family(family, tmp_path):
    cfg = compose_config("train", [f"model={family}"], tmp_path)
    net = hydra.utils.instantiate(cfg.model, src_vocab_size=20, tgt_vocab_size=30, _convert_="all")
    assert net.family == family


def test_transformer_brings_its_optimiser_defaults_and_cli_wins(tmp_path):
    cfg = compose_config("train", ["model=transformer"], tmp_path)
    assert list(cfg.optim.betas) == [0.9, 0.98]
    assert cfg.schedule._target_.endswith("InverseSqrt")
    cfg = compose_config("train", ["model=transformer", "schedule=noam", "optim.lr=0.1"], tmp_path)
    assert cfg.schedule._target_.endswith("Noam") and cfg.optim.lr == 0.1
    assert cfg.schedule.d_model == cfg.model.d_model


@pytest.mark.parametrize("name", ["eval", "translate"])
def test_eval_and_translate_compose(name, tmp_path):
    cfg = compose_config(name, ["ckpt_path=x.ckpt", "model=luong"], tmp_path)
    assert cfg.ckpt_path == "x.ckpt"
    assert cfg.model._target_.endswith("LuongNetwork")


EXPERIMENTS = experiment_folders.experiments()
SCALES = sorted(p.stem for p in (Path(CONF_DIR) / "scale").glob("*.yaml"))
TRAIN = Path(CONF_DIR) / "train.yaml"


@pytest.mark.parametrize("experiment", EXPERIMENTS)
@pytest.mark.parametrize("scale", SCALES)
def test_every_experiment_composes_at_every_scale(experiment, scale, tmp_path):
    cfg = compose_config("train", [f"experiment={experiment}", f"scale={scale}"], tmp_path)
    assert cfg.experiment_name == experiment
    assert cfg.variant  # resolves (W&B job_type, report rows)
    hydra.utils.instantiate(cfg.schedule)


def test_scales_shrink_or_grow_the_model(tmp_path):
    smoke = compose_config("train", ["model=transformer", "scale=smoke"], tmp_path)
    cpu = compose_config("train", ["model=transformer"], tmp_path)
    full = compose_config("train", ["model=transformer", "scale=full"], tmp_path)
    assert smoke.model.d_model < cpu.model.d_model <= full.model.d_model
    assert full.data.source._target_.endswith("ParallelTextSource")
    assert smoke.trainer.max_steps > 0 and full.seeds == "1,2,3"


@pytest.mark.parametrize("scale", ["smoke", "synthetic", "multi30k"])
def test_the_trainer_of_each_scale_builds(scale, tmp_path):
    cfg = compose_config("train", [f"scale={scale}"], tmp_path)
    # trainer.precision=auto is resolved before the Trainer sees it, as pipeline.training.train does
    precision = choose_precision(cfg.trainer.precision, cfg.trainer.accelerator).precision
    trainer = instantiate(
        cfg.trainer, key="trainer", logger=False, enable_checkpointing=False, precision=precision
    )
    assert trainer.max_steps == cfg.trainer.max_steps


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_at_synthetic_every_variant_trains_for_the_experiments_update_budget(name, tmp_path):
    """The protocol (conf/scale/synthetic.yaml): max_steps is the experiment's declared budget, no
    early stopping ends a variant sooner, and the wall clock is only a cap above it."""
    cfg = compose_config("train", [f"experiment={name}"], tmp_path)
    declared = OmegaConf.load(
        experiment_folders.folder(name) / experiment_folders.CONFIG
    ).updates.synthetic
    assert cfg.trainer.max_steps == declared > 0
    assert cfg.callbacks.early_stopping is None
    assert cfg.trainer.max_time is not None
    assert declared % cfg.trainer.val_check_interval == 0  # the last update is validated


def test_at_multi30k_a_declared_budget_is_every_runs_budget(tmp_path):
    """The protocol at multi30k (conf/scale/multi30k.yaml), for the comparisons that declare
    updates.multi30k: max_steps is it, its last update is validated, no early stopping, three
    seeds, and the wall clock a cap above it."""
    declared = {}
    for name in EXPERIMENTS:
        updates = OmegaConf.load(
            experiment_folders.folder(name) / experiment_folders.CONFIG
        ).updates
        if "multi30k" in updates:
            declared[name] = updates.multi30k
    assert {"e4_norm_warmup", "e5_scaling", "e6_positions_heads"} <= set(declared)
    for name, budget in declared.items():
        cfg = compose_config("train", [f"experiment={name}", "scale=multi30k"], tmp_path)
        assert cfg.trainer.max_steps == budget > 0, name
        assert budget % cfg.trainer.val_check_interval == 0, name
        assert cfg.callbacks.early_stopping is None and cfg.seeds == "1,2,3"
        assert cfg.trainer.max_time.minutes >= 60


@pytest.mark.parametrize("scale", ["synthetic", "synthetic_v2", "multi30k"])
def test_a_comparison_on_a_cpu_trains_every_run_in_one_fixed_precision(scale, tmp_path):
    """Not `auto`: its start-up timing, beside another job, once chose bf16-mixed for one of
    three identical E4 jobs (conf/scale/multi30k.yaml); a grid spans machines too."""
    for name in EXPERIMENTS:
        cfg = compose_config("train", [f"experiment={name}", f"scale={scale}"], tmp_path)
        assert cfg.trainer.precision == "32-true", name


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_at_synthetic_the_variants_of_a_family_share_its_optimiser(name, tmp_path):
    """The lr is chosen per family at synthetic (conf/model_size/<model>_synthetic.yaml), never per
    variant: within one comparison every job of a family composes the same optimiser and
    schedule, except along an axis the experiment sweeps on purpose (E4's peak lr, warmup)."""
    grid = axes(compose_experiment(name, "synthetic"))
    swept = {axis.key for axis in grid}
    by_family: dict[str, set[str]] = {}
    for job in settings(grid):
        cfg = compose_config("train", [f"experiment={name}", *job], tmp_path)
        optimiser = OmegaConf.to_container(cfg.optim, resolve=True)
        schedule = OmegaConf.to_container(cfg.schedule, resolve=True)
        optimiser = {k: v for k, v in optimiser.items() if f"optim.{k}" not in swept}
        schedule = {k: v for k, v in schedule.items() if f"schedule.{k}" not in swept}
        family = cfg.model._target_.rsplit(".", 1)[-1]
        by_family.setdefault(family, set()).add(repr((optimiser, schedule)))
    assert by_family and all(len(kinds) == 1 for kinds in by_family.values()), by_family


def test_at_synthetic_v2_every_run_is_five_seeds_of_its_declared_budget_on_version_2(tmp_path):
    """The protocol at synthetic_v2 (conf/scale/synthetic_v2.yaml) for every comparison:
    max_steps is its declared updates.synthetic_v2, the last update is validated, no early
    stopping, five seeds, the wall clock a cap, and the data version 2 with its free variation
    (the ceiling below 95 that the scale exists for)."""
    for name in EXPERIMENTS:
        declared = OmegaConf.load(experiment_folders.folder(name) / experiment_folders.CONFIG)
        budget = declared.updates.get("synthetic_v2", OmegaConf.load(TRAIN).updates.synthetic_v2)
        cfg = compose_config("train", [f"experiment={name}", "scale=synthetic_v2"], tmp_path)
        assert cfg.trainer.max_steps == budget > 0, name
        assert budget % cfg.trainer.val_check_interval == 0, name
        assert cfg.callbacks.early_stopping is None and cfg.seeds == "1,2,3,4,5", name
        assert cfg.trainer.max_time is not None, name
        assert cfg.data.source.synonyms > 0 and cfg.data.source.train_max_words >= 30, name


@pytest.mark.parametrize("scale", ["synthetic", "synthetic_v2"])
def test_each_family_takes_the_lr_its_size_file_declares(scale, tmp_path):
    """conf/model_size/<family>_<scale>.yaml, or the file it builds on (a defaults entry)."""
    for family in FAMILIES:
        path = Path(CONF_DIR) / "model_size" / f"{family}_{scale}.yaml"
        declared = OmegaConf.load(path)
        while "optim" not in declared:  # a size file that keeps the lr of the one it reads
            path = path.with_name(f"{declared.defaults[0]}.yaml")
            declared = OmegaConf.load(path)
        cfg = compose_config("train", [f"model={family}", f"scale={scale}"], tmp_path)
        assert cfg.optim.lr == declared.optim.lr, (family, scale)
        # a command-line override still wins
        cfg = compose_config(
            "train", [f"model={family}", f"scale={scale}", "optim.lr=0.123"], tmp_path
        )
        assert cfg.optim.lr == 0.123


@pytest.mark.parametrize(
    ("scale", "steps"),
    [("smoke", 4), ("synthetic", 200), ("synthetic_v2", 200), ("multi30k", 350), ("full", 4000)],
)
def test_e4_warmup_follows_the_scale(scale, steps, tmp_path):
    cfg = compose_config("train", ["experiment=e4_norm_warmup", f"scale={scale}"], tmp_path)
    assert cfg.schedule.warmup_steps == steps
    # a command-line override still wins
    cfg = compose_config(
        "train", ["experiment=e4_norm_warmup", f"scale={scale}", "warmup_steps=7"], tmp_path
    )
    assert cfg.schedule.warmup_steps == 7


@pytest.mark.parametrize("scale", SCALES)
def test_e5_sweeps_d_k_through_the_heads_at_one_d_model(scale, tmp_path):
    """E5 varies d_k alone: every job of the grid has the scale's one d_model, heads x d_k =
    d_model in every attention layer of its network, and the same number of parameters (built
    on the meta device: shapes only, no memory or initialisation; one vocabulary, which
    multi30k's tied embeddings need). The experiment's own head axis, whatever heads a scale's
    cut keeps (sizes/<scale>.yaml; that it keeps the main check's: test_report_experiment_configs)."""
    base = ["experiment=e5_scaling", f"scale={scale}"]
    own = OmegaConf.load(experiment_folders.folder("e5_scaling") / experiment_folders.CONFIG)
    heads = f"model.heads={own.hydra.sweeper.params['model.heads']}"
    jobs = settings(axes(compose_experiment("e5_scaling", scale), [heads]))
    d_models, d_ks, sizes = set(), set(), set()
    for job in jobs:
        cfg = compose_config("train", base + job, tmp_path)
        with torch.device("meta"):
            net = instantiate(cfg.model, key="model", src_vocab_size=50, tgt_vocab_size=50)
        layers = [m for m in net.modules() if isinstance(m, MultiHeadAttention)]
        assert layers and all(a.heads * a.head_dim == a.d_model for a in layers), job
        assert {(a.d_model, a.heads) for a in layers} == {(cfg.model.d_model, cfg.model.heads)}
        assert f"_dk{layers[0].head_dim}" in cfg.variant  # the label names the d_k it runs
        d_models.add(cfg.model.d_model)
        d_ks.add(layers[0].head_dim)
        sizes.add(sum(p.numel() for p in net.parameters()))
    assert len(d_models) == 1 and len(sizes) == 1, (d_models, sizes)
    assert len(d_ks) == 3
    if scale != "smoke":  # docs/comparisons.md: entropy falling as d_k grows (16, 64, 256)
        assert sorted(d_ks) == [16, 64, 256]


def test_multi30k_transformer_is_the_time_to_bleu_recipe(tmp_path):
    """E1's Transformer at `multi30k` is the benchmarked recipe, so issue 7's run stands for it:
    the recipe takes the scale's values rather than writing its own (no group it composes
    changes the model, optimiser, schedule, module settings or batching)."""
    scale = compose_config("train", ["model=transformer", "scale=multi30k"], tmp_path)
    recipe = compose_config("train", ["recipe=transformer_multi30k_cpu"], tmp_path)
    for key in ("model", "optim", "schedule", "module"):
        assert scale[key] == recipe[key], key
    assert scale.warmup_steps == recipe.warmup_steps
    assert scale.data.max_tokens == recipe.data.max_tokens
    assert scale.data.tokenizer == recipe.data.tokenizer


RECIPES = sorted(p.stem for p in (Path(CONF_DIR) / "recipe").glob("*.yaml"))


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_recipe_composes_and_builds_its_callbacks(recipe, tmp_path):
    from omegaconf import OmegaConf

    cfg = compose_config("train", [f"recipe={recipe}"], tmp_path)
    composed = OmegaConf.to_container(cfg, resolve=False)

    def leaves(node: dict, prefix: str = ""):
        for key, value in node.items():
            if isinstance(value, dict):
                yield from leaves(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}", value

    # every value the recipe writes is the one the run gets: no group composed after it
    # (scale, experiment, model size) silently overrides the recipe
    written = OmegaConf.to_container(OmegaConf.load(Path(CONF_DIR) / "recipe" / f"{recipe}.yaml"))
    written.pop("defaults", None)
    for key, value in leaves(written):
        node = composed
        for part in key.split("."):
            node = node[part]
        assert node == value, key
    hydra.utils.instantiate(cfg.schedule)
    hydra.utils.get_class(cfg.model._target_)
    for name, conf in cfg.callbacks.items():
        if conf is None:  # a callback the scale switches off (multi30k: early stopping)
            continue
        callback = instantiate(conf, key=f"callbacks.{name}")
        if getattr(callback, "dirpath", None) is not None:  # checkpoints stay in the run dir
            assert Path(callback.dirpath).is_relative_to(tmp_path), name
        if "minutes" in conf:  # wall-clock marks: the recipe's minutes, in order
            assert callback.marks == sorted(float(m) for m in conf.minutes), name


def test_the_cpu_transformer_recipe_is_what_its_comment_says(tmp_path):
    cfg = compose_config("train", ["recipe=transformer_multi30k_cpu"], tmp_path)
    assert cfg.data.source.name == "multi30k" and cfg.data.max_tokens == 4096
    assert (cfg.model.norm, cfg.model.heads, cfg.model.tie_embeddings) == ("pre", 4, "all")
    assert cfg.optim.lr == 1e-3 and cfg.schedule.warmup_steps == 1000
    assert cfg.trainer.max_time is None  # the scale's time limit is lifted
    assert list(cfg.callbacks.wall_clock.minutes) == [10, 20, 30, 40]


@pytest.mark.parametrize(
    "extra",
    [
        [],
        # E4's follow-up (experiments/e4_norm_warmup/README.md): three axes fixed, one value changed
        [
            "model.norm=post",
            "schedule.linear_warmup=true",
            "model.encoder_layers=6",
            "optim.lr=5e-4",
        ],
        ["data.max_tokens=1024"],  # not an axis: the grid is unchanged
        ["model.norm=pre", "model.d_model=64,128"],  # a new sweep adds an axis
    ],
)
def test_the_grid_with_command_line_overrides_is_the_one_hydras_sweeper_launches(extra):
    """run_real.sh counts a grid's jobs with its OVERRIDES: the count and the jobs must be
    those Hydra's basic sweeper makes of the config's params plus the command line."""
    cfg = compose_experiment("e4_norm_warmup", "multi30k")
    params = cfg.hydra.sweeper.params
    parser = OverridesParser.create()
    launched = parser.parse_overrides([f"{k}={params[k]}" for k in params] + extra)
    (batch,) = BasicSweeper.split_arguments(launched, None)
    grid = axes(cfg, extra)
    assert len(settings(grid)) * max(1, len(seeds(grid))) == len(batch)
    without_seed = {tuple(sorted(o for o in job if not o.startswith(f"{SEED}="))) for job in batch}
    assert without_seed == {tuple(sorted(job)) for job in settings(grid)}


def test_a_comparisons_family_file_sets_that_family_at_that_scale_only(tmp_path, monkeypatch):
    """experiments/<name>/families/<model>_<scale>.yaml (the group experiment_family): read after
    the comparison's config for that model at that scale, and for no other model or scale."""
    folder = tmp_path / "lab" / "my_families"
    (folder / experiment_folders.FAMILIES).mkdir(parents=True)
    (folder / experiment_folders.CONFIG).write_text(
        "# @package _global_\nexperiment_name: my_families\nvariant: ${hydra:runtime.choices.model}\n"
    )
    (folder / experiment_folders.FAMILIES / "luong_smoke.yaml").write_text(
        "# @package _global_\nmodel:\n  attention:\n    scaled: true\nvariant: luong_scaled\n"
    )
    monkeypatch.setenv(experiment_folders.ENV, str(tmp_path / "lab"))

    def composed(model, scale):
        overrides = ["experiment=my_families", f"model={model}", f"scale={scale}"]
        return compose_config("train", overrides, tmp_path)

    luong = composed("luong", "smoke")
    assert luong.model.attention.scaled is True and luong.variant == "luong_scaled"
    elsewhere = composed("luong", "synthetic")
    assert elsewhere.model.attention.scaled is False and elsewhere.variant == "luong"
    assert "attention" not in composed("plain", "smoke").model

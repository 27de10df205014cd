"""The command line as a user meets it: train -> eval -> translate, and one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, run_cli, tiny_overrides

pytestmark = pytest.mark.slow


@pytest.fixture
def trained_run(smoke_run) -> Path:
    return smoke_run[0]


def test_train_writes_the_run_directory(trained_run):
    results = json.loads((trained_run / "results.json").read_text())
    assert results["status"] == "completed"
    assert (trained_run / "checkpoints" / "best.ckpt").is_file()
    assert (trained_run / ".hydra" / "config.yaml").is_file()


def test_eval_scores_a_checkpoint_on_any_split(trained_run, tmp_path):
    ckpt = trained_run / "checkpoints" / "best.ckpt"
    proc = run_cli("eval", f"ckpt_path={ckpt}", "data.split=val", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "eval_results.json").read_text())
    assert results["test"]["split"] == "val" and results["test"]["sentences"] == 12
    assert results["family"] == "bahdanau"
    assert "BLEU" in proc.stdout


def test_eval_of_the_test_split_reproduces_the_training_run(trained_run, tmp_path):
    ckpt = trained_run / "checkpoints" / "best.ckpt"
    proc = run_cli("eval", f"ckpt_path={ckpt}", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    trained = json.loads((trained_run / "results.json").read_text())["test"]
    evaluated = json.loads((tmp_path / "eval_results.json").read_text())["test"]
    assert evaluated["bleu"] == pytest.approx(trained["bleu"])
    assert (tmp_path / "hypotheses.test.txt").read_text() == (
        trained_run / "hypotheses.test.txt"
    ).read_text()


def test_eval_studies_a_checkpoint_with_e8s_decoding_study(trained_run, tmp_path):
    """``eval ... decoding_study=e8``: E8's study of a user's own checkpoint, printed and
    recorded; its beam-2, alpha-1 outputs are the test's (the smoke run's test decoding)."""
    from seq2seq_lab.analysis.decoding_study_record import read_outputs

    ckpt = trained_run / "checkpoints" / "best.ckpt"
    study = ["decoding_study=e8", "decoding_study.widths=[1,2]", "decoding_study.alphas=[0,1]",
             "decoding_study.sentences=null", "decoding_study.exact_sentences=2",
             "decoding_study.exact_nodes=50"]  # fmt: skip
    proc = run_cli("eval", f"ckpt_path={ckpt}", *study, f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((tmp_path / "eval_results.json").read_text())["decoding_study"]
    assert [(r["beam"], r["alpha"]) for r in record["settings"]] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert record["sentences"] == 12 and record["exact"]["sentences"] == 2
    outputs = read_outputs(tmp_path / "decoding_study" / "outputs.json.gz")
    assert outputs["2-1"] == (tmp_path / "hypotheses.test.txt").read_text().splitlines()
    lines = proc.stdout.splitlines()
    assert "decoding_study on 12 sentences (test):" in lines
    assert any(line.startswith("exact search: ") for line in lines)
    bad = run_cli("eval", f"ckpt_path={ckpt}", "decoding_study=e8", "decoding_study.widths=[0]",
                  f"hydra.run.dir={tmp_path / 'bad'}")  # fmt: skip
    assert bad.returncode != 0 and "decoding_study.widths must be integers >= 1" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "bad" / "eval_results.json").exists()


def test_translate_from_stdin_and_file(trained_run, tmp_path):
    ckpt = trained_run / "checkpoints" / "best.ckpt"
    cfg = json.loads((trained_run / "results.json").read_text())["config"]
    assert cfg["data"]["source"]["task"] == "translation"
    sources = ["ka lo mi", "zu"]  # unknown words map to <unk>: still a translation
    proc = run_cli("translate", f"ckpt_path={ckpt}", stdin="\n".join(sources) + "\n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.splitlines()) == 2
    src_file, out_file = tmp_path / "src.txt", tmp_path / "out.txt"
    src_file.write_text("\n".join(sources) + "\n", encoding="utf-8")
    from_stdin = proc.stdout
    proc = run_cli("translate", f"ckpt_path={ckpt}", f"input={src_file}", f"output={out_file}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out_file.read_text(encoding="utf-8") == from_stdin


def test_alignment_recorded_by_training_is_what_the_command_measures(trained_run, tmp_path):
    recorded = json.loads((trained_run / "results.json").read_text())["alignment"]
    assert recorded["split"] == "test" and recorded["sentences"] == 12
    # a run made before training recorded it: the command writes the same record
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    results = json.loads((run / "results.json").read_text())
    del results["alignment"]
    (run / "results.json").write_text(json.dumps(results))
    proc = run_cli("analysis.alignment", str(run), "--write")
    assert proc.returncode == 0, proc.stderr[-3000:]
    header, rule, row = proc.stdout.strip().splitlines()
    assert "H / log S" in header and f"| {run} | bahdanau | " in row
    written = json.loads((run / "results.json").read_text())["alignment"]
    assert written.keys() == recorded.keys()
    for name in ("normalised_entropy", "max_weight", "on_end", "distinct"):
        assert written[name] == pytest.approx(recorded[name], abs=1e-6)
    # without its checkpoint: one line naming the file
    (run / "checkpoints" / "best.ckpt").unlink()
    proc = run_cli("analysis.alignment", str(run))
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "best.ckpt" in proc.stderr


def test_checkpoint_of_another_family_is_refused(trained_run, tmp_path):
    ckpt = trained_run / "checkpoints" / "best.ckpt"
    proc = run_cli("eval", f"ckpt_path={ckpt}", "model=transformer", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 2
    assert "'bahdanau' model" in proc.stderr and "model=transformer" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_checkpoint_is_a_one_line_error(tmp_path):
    proc = run_cli("eval", f"ckpt_path={tmp_path / 'nope.ckpt'}", f"hydra.run.dir={tmp_path}")
    assert proc.returncode == 2 and "no such checkpoint" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_model_lists_the_valid_ones(tmp_path):
    proc = run_cli("train", "model=lstmm", f"hydra.run.dir={tmp_path}")
    assert proc.returncode != 0
    for name in ("bahdanau", "luong", "plain", "transformer"):
        assert name in proc.stderr
    assert "Traceback" not in proc.stderr


def test_heads_not_dividing_d_model_names_the_keys(tmp_path):
    proc = run_cli(
        "train", *tiny_overrides("transformer", "model.heads=3"), f"hydra.run.dir={tmp_path}"
    )
    assert proc.returncode == 2
    assert "model.heads" in proc.stderr and "model.d_model" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads((tmp_path / "results.json").read_text())["status"] == "failed"


@pytest.mark.parametrize(
    "problem,expected",
    [
        ("missing", "test2016.en"),
        ("mismatch", "line"),
        ("empty", "empty"),
        ("utf8", "train.de:2"),
    ],
)
def test_bad_data_files_are_one_line_errors(problem, expected, tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    lines = {"de": ["ein Hund .", "eine Katze ."], "en": ["a dog .", "a cat ."]}
    for split in ("train", "val", "test2016"):
        for lang, text in lines.items():
            (root / f"{split}.{lang}").write_text("\n".join(text) + "\n", encoding="utf-8")
    if problem == "missing":
        (root / "test2016.en").unlink()
    elif problem == "mismatch":
        (root / "train.en").write_text("a dog .\n", encoding="utf-8")
    elif problem == "empty":
        (root / "val.de").write_text("", encoding="utf-8")
    elif problem == "utf8":
        (root / "train.de").write_bytes(b"ein Hund .\neine \xff Katze .\n")
    proc = run_cli(
        "train",
        "data=multi30k",
        f"data.root={root}",
        "model=plain",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"paths.cache_dir={tmp_path / 'cache'}",
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    message = proc.stderr.strip().splitlines()[-1]
    assert message.startswith("error:") and expected in message
    assert str(root) in message
    assert "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- translate input
# Lines str.splitlines() broke apart although they hold one sentence each (issue 20).
BROKEN_BY_SPLITLINES = [
    "ka lo\u2028mi",
    "zu\x85ka",
    "lo\fmi",
    "ka\x1ezu",
    "mi\rlo",
]


def translated_lines(stdout: str) -> list[str]:
    """translate's output lines (each ends in \\n; split on nothing else)."""
    assert stdout.endswith("\n") or stdout == ""
    return stdout.split("\n")[:-1]


def test_translate_keeps_lines_that_splitlines_would_break(trained_run, tmp_path):
    ckpt = trained_run / "checkpoints" / "best.ckpt"
    text = "\n".join(BROKEN_BY_SPLITLINES) + "\n"
    assert len(text.splitlines()) == 10
    proc = run_cli("translate", f"ckpt_path={ckpt}", stdin=text)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(translated_lines(proc.stdout)) == 5
    src_file = tmp_path / "src.txt"
    src_file.write_bytes(text.encode("utf-8"))
    proc_file = run_cli("translate", f"ckpt_path={ckpt}", f"input={src_file}")
    assert proc_file.returncode == 0, proc_file.stderr[-3000:]
    assert proc_file.stdout == proc.stdout


def test_translate_input_that_is_not_utf8_is_a_one_line_error(trained_run, tmp_path):
    ckpt = trained_run / "checkpoints" / "best.ckpt"
    src_file = tmp_path / "latin1.txt"
    src_file.write_bytes("ka lo\nzu mi\nk\u00e4 lo\n".encode("latin-1"))
    proc = run_cli("translate", f"ckpt_path={ckpt}", f"input={src_file}")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"error: {src_file}:3: invalid UTF-8 (byte 0xe4 at column 2); expected UTF-8 text"
    )


@pytest.fixture(scope="module")
def transformer_ckpt(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("cli_transformer")
    proc = run_cli(
        "train",
        *tiny_overrides("transformer", "trainer.max_steps=6", "test=false"),
        f"hydra.run.dir={run_dir}",
        f"paths.cache_dir={tmp_path_factory.mktemp('cli_transformer_cache')}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir / "checkpoints" / "last.ckpt"


def test_translate_gives_one_line_per_line_in_order(transformer_ckpt, tmp_path):
    config = json.loads((transformer_ckpt.parents[1] / "results.json").read_text())["config"]
    max_positions = config["model"]["max_positions"]
    long_line = " ".join(["ka", "lo", "mi", "zu"] * max_positions)  # 4x the position table
    lines = [
        "ka lo mi",
        "",
        long_line,
        "zu \u00e9t\u00e9 \U0001f99c \u4e2d\u6587 qqq-xxx",  # unseen characters and words
        "ka lo\u2028mi zu\u2029ka\x85lo\fmi\x1ezu\rka\vlo",  # line breakers inside a line
        "   ",
        long_line,
        "mi",
    ]
    # outputs of at most 0.1 |x| + 5 tokens: the cut lines keep max_positions tokens (the
    # source table's limit) and the untrained model's searches stay short
    short = ("decoding.max_len_a=0.1", "decoding.max_len_b=5")
    src_file = tmp_path / "src.txt"
    src_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run_cli("translate", f"ckpt_path={transformer_ckpt}", f"input={src_file}", *short)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outputs = translated_lines(proc.stdout)
    assert len(outputs) == len(lines)
    # the user is told, in one line, which lines were cut to the model's limit
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "input lines 3, 7:" in warnings[0]
    assert f"only the first {max_positions - 1} tokens were translated" in warnings[0]
    # in order: the reversed file gives the reversed outputs
    reversed_file = tmp_path / "reversed.txt"
    reversed_file.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    proc = run_cli("translate", f"ckpt_path={transformer_ckpt}", f"input={reversed_file}", *short)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert translated_lines(proc.stdout) == outputs[::-1]
    assert "input lines 2, 6:" in proc.stderr


@pytest.mark.parametrize("command", ["seq2seq-train", "seq2seq-eval", "seq2seq-translate"])
def test_the_console_commands_help_and_complete_as_the_readme_says(command):
    """README: the installed commands, `--help`, and Tab completion through Hydra's."""
    import subprocess
    import sys

    executable = Path(sys.executable).parent / command
    assert executable.is_file(), f"{command} is not installed beside {sys.executable}"
    helped = subprocess.run([executable, "--help"], capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and helped.stdout.startswith(
        f"python -m seq2seq_lab.{command.removeprefix('seq2seq-')} "
    )
    completion = subprocess.run(
        [executable, "-sc", "install=bash"], capture_output=True, text=True, timeout=120
    )
    assert completion.returncode == 0
    assert f"-F hydra_bash_completion {command}" in completion.stdout


@pytest.mark.parametrize(
    "entry,keys",
    [
        ("translate", ["ckpt_path=FILE", "input=FILE", "output=FILE", "n_best=N",
                       "decoding.beam_size=N  1 is greedy search"]),
        ("eval", ["ckpt_path=FILE", "data.split=SPLIT", "decoding.beam_size=N  1 is greedy",
                  "length_probe=", "decoding_study=e8"]),
    ],
)  # fmt: skip
def test_eval_and_translate_help_lists_their_own_keys(entry, keys):
    proc = run_cli(entry, "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    lines = [line.strip() for line in proc.stdout.splitlines()]
    for key in keys:
        assert any(line.startswith(key) for line in lines), (key, proc.stdout)
    assert "== Config groups" not in proc.stdout and "e2_reversal" not in proc.stdout


@pytest.mark.parametrize("entry", ["eval", "translate"])
def test_a_decoding_option_for_eval_or_translate_names_the_keys_to_set(entry, tmp_path):
    proc = run_cli(entry, f"ckpt_path={tmp_path / 'x.ckpt'}", "decoding=greedy", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: decoding=greedy: {entry} chooses no decoding option; set its keys instead: "
        "decoding=greedy sets decoding.beam_size=1 decoding.length_penalty=1.0 "
        "decoding.max_len_a=1.5 decoding.max_len_b=10 decoding.min_len=0"
    ]


def test_seq2seq_report_is_the_report_command(tmp_path):
    """pyproject.toml's seq2seq-report runs what ``python -m seq2seq_lab.report`` does: called
    as the installed script calls it (import its entry point, exit with what it returns)."""
    import subprocess
    import sys

    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["seq2seq-report"].partition(":")
    script = f"import sys; from {module} import {function}; sys.exit({function}())"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)  # fmt: skip

    assert run("--help").stdout == run_cli("report", "--help").stdout != ""
    missing = run(str(tmp_path / "nowhere"))
    assert missing.returncode == run_cli("report", str(tmp_path / "nowhere")).returncode == 2

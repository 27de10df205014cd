"""The command line checked before Hydra runs it: each mistake one line, before any work.

Hydra answers a mistyped key, an unknown option or a malformed override with several lines
(a stack hint, the search path, internal ``_`` configs offered as options), and a value the
Trainer refuses only after the data is prepared. :func:`check_command_line` reads the command
line as Hydra will and raises a ConfigError whose message names the override as typed (the key
and the bad value), what was expected and, for a typo, the nearest valid key or option
(difflib), e.g. ``model.dropuot=0.1: no such key; did you mean model.dropout?``. What it
checks, in order:

1. Hydra's flags and the override grammar, override by override;
2. each group override (``model=...``): an option of the group (its ``_`` bases are not), one
   option per run (a list ``model=[a,b]`` merges configs; a sweep ``model=a,b`` needs ``-m``);
3. the config composed from the group overrides (of a sweep: its first job), then each key
   override applied to it one by one, as Hydra applies them: the key exists (``k=v``), does
   not (``+k=v``), a number or boolean keeps its default's type, a section is not given one
   value; and for a run (not ``--cfg``/``--info``), the Trainer's limits
   (trainer_settings.py). The composed config is returned: the inputs it names are checked
   next (preflight.py: ``check_before_the_run``), still before Hydra makes a directory.

A config that sets a sweep grid (``experiment=e2_reversal``) run without ``-m`` trains one job
of it: :func:`skipped_grid` is the warning that says so, given when the job starts (cli.py).
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.utils import get_args_parser
from hydra.core.global_hydra import GlobalHydra
from hydra.core.object_type import ObjectType
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ChoiceSweep, Override, RangeSweep
from hydra.errors import HydraException, MissingConfigException
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from seq2seq_lab.checkout import CONF_DIR
from seq2seq_lab.errors import ConfigError
from seq2seq_lab.trainer_settings import check_trainer

INTERNAL = "_"  # a config named _<name> is a base others inherit, never an option
_ABSENT = object()


def check_command_line(config_name: str, argv: list[str]) -> DictConfig | None:
    """Raise ConfigError (one line) for the first mistake in ``python -m
    seq2seq_lab.<config_name> ARGV``. Returns the config the command runs (of a sweep: its
    first job), for the checks of its inputs (preflight.py), or None where it runs nothing
    (``--help``, ``--cfg``, ``--info``) or another config than the entry point's."""
    args = _parse_flags(argv)
    if args.help or args.hydra_help or args.shell_completion:
        return None
    if args.config_name or args.config_path or args.config_dir or args.experimental_rerun:
        return None  # another config than the entry point's: Hydra's own checks
    overrides = _parse_overrides(args.overrides)
    command = f"python -m seq2seq_lab.{config_name}"
    runs = not (args.cfg or args.info)
    with initialize_config_dir(CONF_DIR, version_base="1.3", job_name=config_name):
        loader = GlobalHydra.instance().config_loader()
        groups = [o for o in overrides if _is_group(loader, o)]
        for override in groups:
            _check_group_override(loader, override, args.multirun, command, argv)
        keys = [o for o in overrides if o not in groups]
        for override in keys:
            group = _group_meant(loader, override)
            if group:
                raise ConfigError(
                    f"{override.input_line}: no such key or group; did you mean "
                    f"{group}={override.input_line.partition('=')[2]}?"
                )
        if not runs and not keys and not any(o.is_delete() for o in groups):
            return None  # only options chosen, each checked: Hydra prints the config
        if not args.multirun:
            for override in keys:
                if override.is_sweep_override():
                    raise ConfigError(_needs_multirun(override, command, argv))
        cfg = _compose(config_name, [_first_job(o) for o in groups])
        for override in keys:
            _apply(cfg, override)
    if not runs:
        return None
    if "trainer" in cfg:
        check_trainer(cfg.trainer)
    return cfg


def flags_first(argv: list[str]) -> list[str]:
    """``argv`` with Hydra's flags (and their values) before the overrides, the order Hydra's
    parser needs: ``threads=1 -m experiment=e2_reversal`` would otherwise be refused as
    "unrecognized arguments: experiment=e2_reversal", blaming a valid override. The
    overrides keep their order."""
    actions = get_args_parser()._option_string_actions
    flags: list[str] = []
    overrides: list[str] = []
    bare: list[str] = []  # a flag without its value: last, or it would take an override
    tokens = iter(argv)
    for token in tokens:
        action = actions.get(token.partition("=")[0]) if token.startswith("-") else None
        if action is None:
            overrides.append(token)
            continue
        if "=" in token or action.nargs == 0:
            flags.append(token)
            continue
        value = next(tokens, None)  # --cfg job, --info all (optional), -cn NAME
        if value is None or "=" in value or value.startswith("-"):
            bare.append(token)  # --info followed by an override (or nothing): no value
            if value is not None:
                overrides.append(value)
        else:
            flags.extend([token] if value is None else [token, value])
    return flags + overrides + bare


def _parse_flags(argv: list[str]) -> Any:
    """Hydra's own flags (``-m``, ``--cfg job``...), a wrong one answered in one line."""
    parser = get_args_parser()

    def refuse(message: str) -> None:
        raise ConfigError(f"{message}; see --help")

    parser.error = refuse  # type: ignore[method-assign]
    args = parser.parse_args(argv)
    modes = {
        "--run": args.run,
        "-m": args.multirun,
        "--cfg": args.cfg is not None,
        "--info": args.info is not None,
        "--shell-completion": args.shell_completion,
    }
    if sum(map(bool, modes.values())) > 1:
        given = " and ".join(flag for flag, on in modes.items() if on)
        raise ConfigError(f"{given}: expected one of {', '.join(modes)} at a time")
    return args


def _parse_overrides(lines: list[str]) -> list[Override]:
    parser = OverridesParser.create()
    parsed = []
    for line in lines:
        try:
            parsed.extend(parser.parse_overrides([line]))
        except HydraException as error:
            reason = [
                text
                for text in str(error).splitlines()
                if text and not text.startswith(("Error parsing override", "See https"))
            ]
            raise ConfigError(
                f"{line}: not an override ({'; '.join(reason)}); expected key=value, "
                "e.g. model.dropout=0.1, a sweep as key=a,b, a value with spaces or "
                "brackets in quotes"
            ) from None
    return parsed


def _is_group(loader: Any, override: Override) -> bool:
    """A config group override (``model=plain``), not a key (``model.dropout=0.1``); a dict
    value sets keys, as in Hydra."""
    parent, _, name = override.key_or_group.rpartition("/")
    return not isinstance(override.value(), dict) and name in loader.list_groups(parent)


def _group_meant(loader: Any, override: Override) -> str | None:
    """The group a mistyped top-level key names (``modle=luong`` -> ``model``): a group
    whose name is like the key and which has the value as an option. None where the key
    exists as a group, holds a dot, or no such group is near."""
    key = override.key_or_group
    value = override.value()
    if "." in key or "/" in key or not isinstance(value, str) or override.is_delete():
        return None
    groups = [g for g in loader.list_groups("") if value in _options(loader, g)]
    near = difflib.get_close_matches(key, groups, n=1, cutoff=0.6)
    return near[0] if near and key not in loader.list_groups("") else None


def _options(loader: Any, group: str) -> list[str]:
    options = loader.get_group_options(group, ObjectType.CONFIG)
    return [name for name in options if not name.startswith(INTERNAL)]


def _check_group_override(
    loader: Any, override: Override, multirun: bool, command: str, argv: list[str]
) -> None:
    group = override.key_or_group
    value = override.value()
    if isinstance(value, list):
        names = ",".join(str(name) for name in value)
        raise ConfigError(
            f"{override.input_line}: a list merges several {group} configs into one run; "
            f"to run each, write -m {override.get_key_element()}={names}"
        )
    if override.is_sweep_override() and not multirun:
        raise ConfigError(_needs_multirun(override, command, argv))
    if override.is_delete():
        return
    options = _options(loader, group)
    if value is None:  # Hydra takes null for a group in a defaults list, not here
        message = f"{override.input_line}: a group takes one of its options, not null"
        if "none" in options:
            raise ConfigError(f"{message}; did you mean {override.get_key_element()}=none?")
        raise ConfigError(f"{message}; expected one of {', '.join(options)}")
    for name in _values(override) or []:
        if str(name) not in options:
            typed = override.get_key_element()
            raise ConfigError(_unknown_option(group, str(name), options, typed))


def _unknown_option(group: str, name: str, options: list[str], typed: str = "") -> str:
    """``group=name: no such option``, the options listed, and the nearest: an option like it
    (``model=luon`` -> ``model=luong``), or a key of the group's configs that takes the value
    (``model=lstm`` -> ``model.cell=lstm``). ``typed``: the group as the command line names
    it (``decoding@module.test_decoding``)."""
    typed = typed or group
    message = f"{typed}={name}: no such option of {group}; expected one of {', '.join(options)}"
    near = difflib.get_close_matches(name, options, n=1)
    if near:
        return f"{message}; did you mean {typed}={near[0]}?"
    key = _key_taking(group, name)
    return f"{message}; did you mean {key}={name}?" if key else message


def _key_taking(group: str, value: str) -> str | None:
    """The key (``model.cell``) a config of ``group`` in conf/ sets to ``value``, if any."""
    for path in sorted((Path(CONF_DIR) / group).glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "@package" in text:
            continue
        config = OmegaConf.create(text)
        for key in _paths(config):
            node = OmegaConf.select(config, key, throw_on_resolution_failure=False)
            if isinstance(node, str) and node.lower() == value.lower():
                return f"{group.replace('/', '.')}.{key}"
    return None


def _needs_multirun(override: Override, command: str, argv: list[str]) -> str:
    return (
        f"{override.input_line}: several values make a sweep, which runs with -m: "
        f"{_sweep_command(command, argv)}"
    )


def _sweep_command(command: str, argv: list[str]) -> str:
    """The command with -m (a sweep writes under hydra.sweep.dir, never a run directory)."""
    kept = [arg for arg in argv if arg not in ("-m", "--multirun")]
    return f"{command} -m {shlex.join(a for a in kept if not a.startswith('hydra.run.dir='))}"


def _values(override: Override) -> list[Any] | None:
    """An override's values: its one value, each of a choice or range sweep's; None for a
    sweep Hydra's sweeper expands itself (glob, interval)."""
    if not override.is_sweep_override():
        return [override.value()]
    if isinstance(override.value(), (ChoiceSweep, RangeSweep)):
        return list(override.sweep_iterator())
    return None


def _first_job(override: Override) -> str:
    """The override as the first job of a sweep sees it (the override itself if no sweep)."""
    if not override.is_sweep_override():
        return override.input_line
    values = list(override.sweep_string_iterator()) if _values(override) else []
    return f"{override.get_key_element()}={values[0]}" if values else ""


def _compose(config_name: str, lines: list[str]) -> DictConfig:
    try:
        return compose(config_name, [line for line in lines if line], return_hydra_config=True)
    except MissingConfigException as error:  # an option named inside a config, not here
        group, _, name = (error.missing_cfg_file or "").rpartition("/")
        options = [o for o in error.options or [] if not o.startswith(INTERNAL)]
        raise ConfigError(_unknown_option(group, name, options)) from None
    except (HydraException, OmegaConfBaseException) as error:
        unchosen = re.match(r"Could not override '([^']+)'\. No match in the defaults", str(error))
        chosen = [line for line in lines if unchosen and line.startswith(f"{unchosen[1]}=")]
        if chosen:
            raise ConfigError(_keys_not_option(config_name, chosen[0])) from None
        removed = [line for line in lines if line.startswith("~")]
        if removed:  # the other configs name the group removed (``${model}_${scale}``)
            raise ConfigError(
                f"{removed[0]}: this config cannot do without {removed[0][1:].split('=')[0]}; "
                "expected another option of it instead"
            ) from None
        raise ConfigError(f"{' '.join(lines)}: {_first_line(error)}") from None


def _keys_not_option(config_name: str, line: str) -> str:
    """``decoding=greedy`` given to an entry point whose config has keys under ``decoding``
    but no option of the group to choose (translate, eval): the keys the option sets, to
    write instead (``decoding.beam_size=1``)."""
    group, _, name = line.partition("=")
    path = Path(CONF_DIR) / group / f"{name}.yaml"
    message = f"{line}: {config_name} chooses no {group} option"
    if not path.is_file():
        return f"{message}; set its keys instead ({group}.<key>=value)"
    option = OmegaConf.to_container(OmegaConf.load(path))
    keys = [f"{group}.{k}={v}" for k, v in option.items() if k != "defaults"]
    return f"{message}; set its keys instead: {group}={name} sets {' '.join(keys)}"


def _apply(cfg: DictConfig, override: Override) -> None:
    """Apply one key override to ``cfg`` as Hydra does, after checking it against the config
    it applies to (for a sweep, each value's type; its first value is applied)."""
    key = override.key_or_group
    raw = override.input_line.partition("=")[2]
    current = _value(cfg, key)
    if current is _ABSENT and not (override.is_add() or override.is_force_add()):
        raise ConfigError(_unknown_key(cfg, override))
    if override.is_add() and current not in (None, _ABSENT):
        if not isinstance(override.value(), (dict, list)):
            raise ConfigError(
                f"{override.input_line}: {key} exists already ({current}); to change it, "
                f"write {key}={raw}"
            )
    if not (override.is_delete() or override.is_add()) and _is_scalar_default(cfg, key):
        for value in _values(override) or []:
            _check_type(key, raw, current, value)
    if isinstance(current, DictConfig) and not override.is_delete():
        values = _values(override) or []
        # null empties a section (callbacks.early_stopping=null), ${...} may name another;
        # a value may replace a section nothing reads an entry of (trainer.max_time=00:00:05:00
        # for {minutes: 10}: Lightning takes either), not one whose entries other keys read
        if any(not (v is None or isinstance(v, dict) or "${" in str(v)) for v in values) and any(
            ref.startswith(f"{key}.") for _, ref in _references(cfg)
        ):
            raise ConfigError(_section_given_a_value(cfg, override))
    line = _first_job(override)
    if not line:
        return
    try:
        ConfigLoaderImpl._apply_overrides_to_config(
            OverridesParser.create().parse_overrides([line]), cfg
        )
    except (HydraException, OmegaConfBaseException) as error:
        raise ConfigError(f"{override.input_line}: {_first_line(error)}") from None


def _value(cfg: DictConfig, key: str) -> Any:
    """The value at ``key`` (``???`` and a failing interpolation as None), _ABSENT if none."""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    if isinstance(node, ListConfig) and leaf.isdigit():
        return node[int(leaf)] if int(leaf) < len(node) else _ABSENT
    if not isinstance(node, DictConfig) or leaf not in node.keys():
        return _ABSENT
    return OmegaConf.select(node, leaf, throw_on_resolution_failure=False)


def _unknown_key(cfg: DictConfig, override: Override) -> str:
    """``key=value: no such key``, with the nearest existing key: the same name elsewhere
    (``max_steps`` -> ``trainer.max_steps``; the first in the config where several have it),
    else a sibling like it (``model.dropuot`` -> ``model.dropout``) or abbreviating it
    (``checkpoint`` -> ``ckpt_path``), else a name like it elsewhere."""
    key = override.key_or_group
    what = f"{override.input_line}: no such key"
    if override.is_delete():
        what += " to delete"
    parent, _, leaf = key.rpartition(".")
    scope = cfg if key.startswith("hydra.") else {k: v for k, v in cfg.items() if k != "hydra"}
    paths = {path.rpartition(".")[2]: path for path in reversed(list(_paths(scope)))}
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    keys = node.keys() if isinstance(node, DictConfig) else []
    siblings = {str(k): f"{parent}.{k}" if parent else str(k) for k in keys}
    for names, cutoff in ((paths, 1.0), (siblings, 0.6), (siblings, None), (paths, 0.8)):
        if cutoff is None:  # a sibling's abbreviated name (checkpoint -> ckpt_path)
            near = [name for name in names if _abbreviates(name, leaf)][:1]
        else:
            near = difflib.get_close_matches(leaf, list(names), n=1, cutoff=cutoff)
        if near:
            return f"{what}; did you mean {names[near[0]]}?"
    add = "" if override.is_delete() else f"; to add it, write +{override.input_line}"
    return f"{what} under {parent or 'the top level'}{add}"


def _section_given_a_value(cfg: DictConfig, override: Override) -> str:
    """``updates=500`` where ``updates`` is a section (one budget per scale): it would replace
    the section, and every key that reads one of its entries (``trainer.max_steps:
    ${updates.synthetic}``) would then fail after the run started. Names the entry the
    composed config reads and the key reading it, e.g. ``updates.synthetic=500`` or
    ``trainer.max_steps=500``."""
    key = override.key_or_group
    raw = override.input_line.partition("=")[2]
    section = OmegaConf.select(cfg, key)
    entries = ", ".join(str(k) for k in section.keys())
    message = f"{override.input_line}: {key} is a section ({entries}), not one value"
    readers = [(path, ref) for path, ref in _references(cfg) if ref.startswith(f"{key}.")]
    path, reference = readers[0]  # the caller refuses only a section whose entries are read
    return f"{message}; {path} reads {reference} here: write {reference}={raw} or {path}={raw}"


def _references(cfg: DictConfig) -> Iterator[tuple[str, str]]:
    """(key path, referenced key) of every value outside ``hydra`` that is exactly one plain
    interpolation (``trainer.max_steps: ${updates.synthetic}``)."""
    for path in _paths(cfg):
        parent, _, leaf = path.rpartition(".")
        container = OmegaConf.select(cfg, parent) if parent else cfg
        if path.startswith("hydra.") or not isinstance(container, DictConfig):
            continue
        if OmegaConf.is_interpolation(container, leaf):
            text = str(container._get_node(leaf)._value())
            inner = text[2:-1]
            if text == f"${{{inner}}}" and not any(c in inner for c in "${}:"):
                yield path, inner


def _abbreviates(name: str, word: str) -> bool:
    """``name``'s first part is an abbreviation of ``word`` (``ckpt_path`` of
    ``checkpoint``): at least three letters, the same first one, the others in order."""
    short = name.split("_")[0]
    if len(short) < 3 or len(short) >= len(word) or short[0] != word[0]:
        return False
    rest = iter(word[1:])
    return all(letter in rest for letter in short[1:])


def _paths(node: Any, prefix: str = "") -> Iterator[str]:
    """Every dotted key path of a config, without resolving its values."""
    if isinstance(node, DictConfig):
        items = ((str(k), node._get_node(k)) for k in node)
    elif isinstance(node, dict):
        items = ((str(k), v) for k, v in node.items())
    else:
        return
    for name, child in items:
        path = f"{prefix}{name}"
        yield path
        yield from _paths(child, f"{path}.")


def _is_scalar_default(cfg: DictConfig, key: str) -> bool:
    """A key whose default is a plain number or boolean (not null, not an interpolation)."""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    if not isinstance(node, DictConfig) or leaf not in node.keys():
        return False
    if OmegaConf.is_interpolation(node, leaf):
        return False
    return isinstance(node._get_node(leaf)._value(), (bool, int, float))


def _check_type(key: str, raw: str, default: Any, value: Any) -> None:
    """A number or boolean stays one: an integer default takes integers, a float one numbers,
    a boolean one true/false; null and interpolations (``${...}``) pass."""
    if value is None or (isinstance(value, str) and "${" in value):
        return
    if isinstance(default, bool):
        ok, expected = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        expected = "an integer"
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        expected = "a number"
    if not ok:
        shown = str(default).lower() if isinstance(default, bool) else default
        raise ConfigError(f"{key}={raw}: expected {expected} (the default is {shown})")


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def skipped_grid(params: Any, overrides: list[str], command: str, argv: list[str]) -> str | None:
    """The warning for a run without ``-m`` of a config that sets a sweep grid
    (``hydra.sweeper.params``, e.g. ``experiment=e2_reversal``), None if the command line fixes
    every key of the grid: the run trains one job, and the warning gives the grid's command."""
    if not params:
        return None
    fixed = {o.partition("=")[0].lstrip("+~") for o in overrides}
    grid = [f"{k}={v}" for k, v in params.items() if k not in fixed]
    if not grid:
        return None
    source = next(
        (o for o in overrides if o.partition("=")[0] in ("experiment", "hparams_search")),
        "this config",
    )
    return (
        f"{source} is a sweep grid ({' '.join(grid)}) run by -m; without it this trains one "
        f"job, with the defaults. The whole grid: {_sweep_command(command, argv)}"
    )

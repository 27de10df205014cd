"""How a W&B run is found among a comparison's runs: three fields of the run,

    group    = the experiment            ("adhoc" outside one)
    job_type = the variant               (the model family where the run names none)
    name     = experiment/variant/seed=N (outside an experiment: variant/seed=N)

so a workspace that filters one group and groups by job type shows the grid side by side,
the seeds of a variant together (``wandb_workspace.py``).
"""

from __future__ import annotations

from omegaconf import DictConfig

ADHOC_GROUP = "adhoc"  # the group of a run outside any experiment


def run_identity(cfg: DictConfig, family: str) -> dict[str, str]:
    """``group``, ``job_type`` and ``name`` of the run (module docstring); a value set under
    ``logger.wandb`` wins over the derived one."""
    conf = cfg.logger.wandb
    experiment = cfg.get("experiment_name")
    variant = cfg.get("variant") or family
    name = "/".join([*([experiment] if experiment else []), variant, f"seed={cfg.seed}"])
    return {
        "group": conf.get("group") or experiment or ADHOC_GROUP,
        "job_type": conf.get("job_type") or variant,
        "name": conf.get("name") or name,
    }

"""What the gradient diagnostics share: the profile arguments, a trainer built from them (no MLflow run), and the
policy gradients of independent batches. A config or --checkpoint mistake is a UserError or ConfigError, which
`run_script` (tvrl_bench/cli/script.py) prints as one line."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from typing import Iterator

import gin
import torch

from tvrl_bench import registry
from tvrl_bench.cli.script import UserError
from tvrl_bench.config import load_config
from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.trial.build import build_settings


def add_profile_arguments(parser: argparse.ArgumentParser, seed: bool = False) -> None:
    """FILES (presets after the profile), --profile and --gin_bindings; with `seed`, also --seed (the trial seed,
    which `profile_trainer` binds)."""
    parser.add_argument("files", nargs="*", help="gin files after the profile (presets to swap in)")
    parser.add_argument("--profile", default="components/profiles/toy.gin", help="the profile measured (default: the toy profile)")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings, e.g. 'training.trial.prompts_per_step = 16'")
    parser.add_argument("--checkpoint", default=None,
                        help="a trial's run folder (OUT/runs/STUDY/KEY, holding state.pt): measure at its saved weights "
                             "instead of the base's; the profile and files must be the trial's own configuration")
    if seed:
        parser.add_argument("--seed", type=int, default=0, help="the trial seed: prompts drawn and noise (default 0)")


@contextlib.contextmanager
def profile_trainer(args: argparse.Namespace) -> Iterator[Trainer]:
    """A one-thread CPU trainer for the profile, files and bindings in `args`, checkpointing to a scratch folder."""
    torch.set_num_threads(1)
    seed = [f"training.trial.seed = {args.seed}"] if getattr(args, "seed", None) is not None else []
    try:
        settings = build_settings(load_config([args.profile, *args.files], [*args.gin_bindings, *seed]))
    finally:
        gin.clear_config()
    with tempfile.TemporaryDirectory() as folder:
        trainer = Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)
        if args.checkpoint:
            saved = CheckpointDir(args.checkpoint).load()
            if saved is None:
                raise UserError(f"--checkpoint {args.checkpoint}: no state.pt there; pass a trial's run folder "
                                "(OUT/runs/STUDY/KEY)")
            print(f"measuring at the weights of {args.checkpoint}, step {trainer.load_state(saved)}")
        yield trainer


def router_of(args: argparse.Namespace, preset: str) -> CreditRouter:
    """The credit router that `preset` (a components/credit/*.gin file) binds, on top of the profile, files and
    bindings in `args` (so a profile's own router bindings apply); gin's config is cleared afterwards."""
    load_config([args.profile, *args.files, preset], list(args.gin_bindings))
    try:
        return registry.build("CREDIT")
    finally:
        gin.clear_config()


def batch_gradients(trainer: Trainer, batches: int) -> list[list[torch.Tensor]]:
    """Per batch (training steps 0..batches-1, each with its own prompts and noise), the policy-loss gradient of
    every trained parameter at the current weights, no optimizer step; zeros where the loss does not reach one."""
    grads = []
    for step in range(batches):
        batch = trainer.collect(step)
        trainer.optimizer.zero_grad(set_to_none=True)
        for m in range(trainer.s.minibatches):
            trainer.policy_gradient(batch, m)
        grads.append([torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in trainer.parameters])
        print(f"gradient batch {step + 1}/{batches}: norm {float(flatten(grads[-1]).norm()):.4g}", flush=True)
    return grads


def set_weights(params: list[torch.Tensor], start: list[torch.Tensor], step: torch.Tensor) -> None:
    """Set every parameter to its start plus its slice of the flat step vector (in the parameters' order)."""
    offset = 0
    with torch.no_grad():
        for p, p0 in zip(params, start):
            p.copy_(p0 + step[offset:offset + p.numel()].view_as(p))
            offset += p.numel()


def flat_gradient(params: list[torch.Tensor]) -> torch.Tensor:
    """The parameters' accumulated gradients as one vector (zeros where the loss did not reach a parameter)."""
    return flatten([torch.zeros_like(p) if p.grad is None else p.grad for p in params])


def step_directions(g: torch.Tensor) -> dict[str, torch.Tensor]:
    """The two unit-size step directions of a flat gradient g: 'sign' (sign(g), Adam's first step: every weight
    moves by alpha) and 'normalized' (g / rms(g): the gradient itself, moving the weights as far in total)."""
    return {"sign": torch.sign(g), "normalized": g / g.pow(2).mean().sqrt().clamp_min(1e-30)}


def flatten(gradient: list[torch.Tensor]) -> torch.Tensor:
    """One vector of a per-parameter gradient, in the order of the trainer's parameters."""
    return torch.cat([g.reshape(-1) for g in gradient])

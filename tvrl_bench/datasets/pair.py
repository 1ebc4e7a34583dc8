"""`datasets.pair`: train on one prompt set, evaluate on another (e.g. VideoGen-Eval prompts, VBench-2.0 eval)."""

from __future__ import annotations

from tvrl_bench.prompts import PromptSet
from tvrl_bench.registry import register


@register("datasets", "pair")
def pair_prompt_set(train: PromptSet, eval: PromptSet, name: str | None = None) -> PromptSet:
    """The train prompts of one prompt set with the eval prompts of another.

    train / eval: prompt sets (gin: `datasets.pair.train = @datasets.videogen_eval()`); their other splits are
    unused. name: default "<train name>+<eval name>".
    """
    for role, given in (("train", train), ("eval", eval)):
        if not isinstance(given, PromptSet):
            raise TypeError(f"datasets.pair.{role} must be a prompt set (e.g. @datasets.file()), got {type(given).__name__}")
    if not train.train:
        raise ValueError(
            f"datasets.pair: the train prompt set '{train.name}' has no train prompts; set its eval_fraction to 0 "
            "(or its split column) so its prompts train"
        )
    if not eval.eval:
        raise ValueError(
            f"datasets.pair: the eval prompt set '{eval.name}' has no eval prompts; give it an eval split "
            "(datasets.vbench2 puts all its prompts in eval)"
        )
    return PromptSet(name or f"{train.name}+{eval.name}", train.train, eval.eval)

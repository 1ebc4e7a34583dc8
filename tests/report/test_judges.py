"""Pairwise judges on the real toy world (exact evaluator, toy_oracle critic) and a judged study end to end."""

from __future__ import annotations

import random

import av
import gin
import numpy as np
import pandas as pd
import pytest
import torch

from tests.report.helpers import read_rendered
from tvrl_bench import registry
from tvrl_bench.report import regenerate
from tvrl_bench.report.judges import CriticJudge, EvaluatorJudge, judge_label
from tvrl_bench.videoio import read_video
from tvrl_bench.report.winrate import JudgmentStore, judge_study
from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.world import ToyEvaluator, ground_truth_videos, toy_prompt_set


@pytest.fixture(scope="module")
def world():
    """Three eval prompts, their ground-truth videos[3, F, 3, H, W] and the same videos rolled by one prompt."""
    items = toy_prompt_set(n_train=0, n_eval=3).eval
    prompts = [i.prompt for i in items]
    checks = [i.checks for i in items]
    truth = ground_truth_videos(prompts, random.Random(0))
    return prompts, checks, truth, truth.roll(1, dims=0)


def test_evaluator_judge_prefers_the_video_that_matches(world):
    prompts, checks, truth, wrong = world
    judge = EvaluatorJudge(ToyEvaluator())
    for i in range(3):
        left, right = judge.scores(prompts[i], checks[i], truth[i], wrong[i])
        assert left == pytest.approx(1.0) and right < 0.9
        assert judge.judge(prompts[i], checks[i], truth[i], wrong[i]) == "left"
        assert judge.judge(prompts[i], checks[i], wrong[i], truth[i]) == "right"
        assert judge.judge(prompts[i], checks[i], truth[i], truth[i].clone()) == "tie"
    with pytest.raises(TypeError, match="needs an Evaluator"):
        EvaluatorJudge(object())


def test_vlm_judge_over_a_critic(world):
    prompts, checks, truth, wrong = world
    judge = CriticJudge(ToyOracle(), use_checks=True)
    for i in range(3):
        left, right = judge.scores(prompts[i], checks[i], truth[i], wrong[i])
        assert left > right
        assert judge.judge(prompts[i], checks[i], wrong[i], truth[i]) == "right"
    templated = CriticJudge(ToyOracle())
    assert templated.questions("a red circle", ()) == ("Does this video match the prompt: a red circle?",)
    with pytest.raises(ValueError, match="must contain '{prompt}'"):
        CriticJudge(ToyOracle(), question="Is it good?")


def test_judges_are_registered_and_built_by_gin():
    registry.import_components()
    assert {"judges.evaluator", "judges.vlm"} <= set(registry.registered_names())
    gin.parse_config("judges.evaluator.evaluator = @evaluators.toy()\njudges.evaluator.tolerance = 0.01")
    judge = registry.get("judges.evaluator").target()
    assert isinstance(judge.evaluator, ToyEvaluator) and judge.tolerance == 0.01
    assert judge_label(judge) == "judges.evaluator"


def write_mp4(video: torch.Tensor, path) -> None:
    """Lossless H.264 (yuv444p, crf 0) of video[F, 3, H, W] in [0, 1]."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=8, options={"crf": "0"})
        stream.width, stream.height, stream.pix_fmt = video.shape[-1], video.shape[-2], "yuv444p"
        for frame in video:
            array = (frame.permute(1, 2, 0).numpy() * 255).round().astype(np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def test_read_video_round_trip(world, tmp_path):
    _, _, truth, _ = world
    write_mp4(truth[0], tmp_path / "v.mp4")
    back = read_video(tmp_path / "v.mp4")
    assert back.shape == truth[0].shape and back.dtype == torch.float32
    assert (back - truth[0]).abs().max() < 0.02


def test_judge_study_pairs_trials_by_seed_and_prompt_and_stores_judgments(world, new_study, mlflow_store, tmp_path):
    """TVRL samples are the ground truth; GRPO's are another prompt's, except prompt 2 where both are the truth."""
    prompts, checks, truth, wrong = world
    uri, client, _ = mlflow_store
    study = new_study("judged")
    for seed in (0, 1):
        for method, videos in (("TVRL", truth), ("GRPO", wrong)):
            run_id = study.trial({"policy": "toy", "sampler": "sage", "reward": "toy_oracle",
                                  "credit": "window3" if method == "TVRL" else "uniform", "method": method,
                                  "seed": str(seed)}, {"eval/overall": 0.5})
            folder = tmp_path / run_id
            folder.mkdir()
            files, index = {}, []
            for i in range(3):
                video = truth[i] if (method == "TVRL" or i == 2) else videos[i]
                name = f"sample_{i:03d}.mp4"
                write_mp4(video, folder / name)
                files[name] = folder / name
                index.append({"file": name, "index": i, "prompt": prompts[i], "checks": list(checks[i]),
                              "seed": seed})
            study.log_samples(run_id, index, files)
    study.finish()
    store_path = tmp_path / "judgments.sqlite"
    judgments = judge_study(study.study, EvaluatorJudge(ToyEvaluator()), "TVRL", "GRPO", store=store_path,
                            tracking_uri=uri)
    assert len(judgments) == 6
    by_prompt = {(j.prompt, j.seed): j for j in judgments}
    for seed in ("0", "1"):
        assert by_prompt[(prompts[0], seed)].verdict == "win"
        assert by_prompt[(prompts[1], seed)].verdict == "win"
        assert by_prompt[(prompts[2], seed)].verdict == "tie"
    assert {j.left for j in judgments} == {"TVRL", "GRPO"}  # sides are shuffled; the verdict does not depend on it
    assert all(j.judge == "judges.evaluator" and j.run_a and j.run_b for j in judgments)
    with JudgmentStore(store_path) as store:
        assert len(store.frame(study.study)) == 6
    summary = regenerate(study.study, tracking_uri=uri, out_dir=tmp_path / "reports", tables="winrate",
                         judgments=store_path, plots=False)
    _, rows = read_rendered(tmp_path / "reports" / study.study, "winrate", "md")
    low = 100 * 0.025 ** (1 / 4)  # 4 decisive judgments, all won: the exact interval, which still includes 50%
    assert rows == [["TVRL vs GRPO", "66.67", "0.00", "33.33", "100.00 ± 0.00", f"[{low:.2f}, 100.00]†", "6"]]
    assert summary["tables"]["winrate"]["warnings"] == []
    frame = pd.read_csv(tmp_path / "reports" / study.study / "winrate.csv")
    assert frame.loc[0, "95% CI low"] == pytest.approx(low, rel=1e-12)

"""A judged study end to end: trials paired by seed and prompt, judgments stored, the win-rate table rendered."""

from __future__ import annotations


import av
import numpy as np
import pandas as pd
import pytest
import torch

from tests.report.helpers import read_rendered
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.judges import EvaluatorJudge
from tvrl_bench.report import regenerate
from tvrl_bench.report.winrate.judgments import JudgmentStore
from tvrl_bench.report.winrate.pairs import judge_study
from tvrl_bench.videoio import read_video


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


def test_read_video_round_trip(toy_pairs, tmp_path):
    _, _, truth, _ = toy_pairs
    write_mp4(truth[0], tmp_path / "v.mp4")
    back = read_video(tmp_path / "v.mp4")
    assert back.shape == truth[0].shape and back.dtype == torch.float32
    assert (back - truth[0]).abs().max() < 0.02


def test_judge_study_pairs_trials_by_seed_and_prompt_and_stores_judgments(toy_pairs, new_study, mlflow_store, tmp_path):
    """TVRL samples are the ground truth; GRPO's are another prompt's, except prompt 2 where both are the truth."""
    prompts, checks, truth, wrong = toy_pairs
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

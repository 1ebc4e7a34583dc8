"""The study page (reports/<study>/index.html) of studies logged with the MLflow client: the reward-hacking panel's
numbers against scipy's paired t-test, the flag, the probability of improvement and IQM against hand
computations on the logged per-prompt scores, wide_eval/* preferred over eval/*, the step-0 baseline, what the
page says when metrics or artifacts are missing (a real-model study), the CSV files and the parent run's
artifacts. The browser test (study_page/test_browser.py) opens the page of a real sweep."""

from __future__ import annotations

import csv
import json
import re
import statistics

import numpy as np
import pytest
from matplotlib.image import imsave

from tests.report.helpers import paired
from tests.report.study_page.test_hacking import legend
from tvrl_bench.report import regenerate
from tvrl_bench.report.study_page import page_lines

SEEDS = (0, 1, 2)
# per method: (params, final eval/overall by seed, final eval/critic_reward by seed)
METHODS = {
    "base": ({"method": "base", "credit": "window3", "reward": "toy_pattern"},
             {0: 0.40, 1: 0.42, 2: 0.38}, {0: 0.30, 1: 0.33, 2: 0.29}),
    "window3": ({"method": "TVRL", "credit": "window3", "reward": "toy_pattern"},  # critic up, evaluator down
                {0: 0.35, 1: 0.36, 2: 0.31}, {0: 0.52, 1: 0.58, 2: 0.50}),
    "uniform": ({"method": "GRPO", "credit": "uniform", "reward": "toy_pattern"},  # both up alike
                {0: 0.46, 1: 0.47, 2: 0.45}, {0: 0.36, 1: 0.38, 2: 0.34}),
}
PROMPTS = ["a red circle moving left on a black background", "a blue square on a gray background",
           "a green circle moving up on a white background"]


def prompt_scores(label: str, seed: int) -> list[float]:
    """Per-prompt final scores (eval/results.json): fixed numbers with ties across methods."""
    table = {"base": [[0.5, 0.25, 0.5], [0.5, 0.5, 0.25], [0.25, 0.5, 0.5]],
             "window3": [[0.25, 0.25, 0.5], [0.5, 0.25, 0.25], [0.25, 0.25, 0.5]],
             "uniform": [[0.75, 0.5, 0.5], [0.5, 0.75, 0.5], [0.5, 0.5, 0.75]]}
    return table[label][seed]


def log_artifacts(study, client, run_id: str, label: str, seed: int, folder) -> None:
    records = [{"index": i, "prompt": p, "score": s,
                "checks": [{"check": f"Is there a thing {i}?", "category": "object", "answer": "yes" if s > 0.4 else "no",
                            "passed": s > 0.4}]}
               for i, (p, s) in enumerate(zip(PROMPTS, prompt_scores(label, seed)))]
    local = folder / f"{run_id}_results.json"
    local.write_text(json.dumps(records))
    path = folder / "results.json"
    path.write_text(local.read_text())
    client.log_artifact(run_id, str(path), "eval")
    videos = {}
    for i in range(2):
        video = folder / f"sample_{i:03d}.mp4"
        video.write_bytes(f"fake-mp4 {label} seed {seed} prompt {i}".encode())
        videos[f"sample_{i:03d}.mp4"] = video
    study.log_samples(run_id, [{"file": f"sample_{i:03d}.mp4", "index": i, "prompt": PROMPTS[i],
                                "checks": [f"Is there a thing {i}?"], "seed": seed} for i in range(2)], videos)
    if label != "base":
        heat = folder / "step_000001.png"
        imsave(heat, np.full((6, 6), 0.3 if label == "window3" else 0.7), cmap="gray", vmin=0, vmax=1)
        client.log_artifact(run_id, str(heat), "credit")


@pytest.fixture(scope="module")
def page_study(new_study, mlflow_store, tmp_path_factory):
    uri, client, _ = mlflow_store
    scratch = tmp_path_factory.mktemp("page_artifacts")
    study = new_study("page", tables="credit")
    for label, (params, overall, critic) in METHODS.items():
        for seed in SEEDS:
            final = 0 if label == "base" else 4
            curves = None if label == "base" else {
                "eval/overall": {0: METHODS["base"][1][seed], 2: (overall[seed] + METHODS["base"][1][seed]) / 2},
                "eval/critic_reward": {0: METHODS["base"][2][seed]}}
            run_id = study.trial({**params, "seed": seed},
                                 {"eval/overall": overall[seed], "eval/critic_reward": critic[seed]},
                                 final_step=final, curves=curves)
            folder = scratch / f"{label}{seed}"
            folder.mkdir()
            log_artifacts(study, client, run_id, label, seed, folder)
    card = scratch / "critic_card.csv"  # as `tvrl-bench critic-card --study` logs it
    card.write_text("critic,policy,seed,agreement,ece,locality,locality_baseline,critic_mean,evaluator_mean,"
                    "seconds_per_video,inversion,inversion_checks,inversion_vivid,inversion_red,inversion_blue\n"
                    "toy_pattern,base,0,0.9000,0.0500,0.6000,0.2500,0.7000,0.6800,0.0100,0.1,0.2,0.6,0.7,0.1\n"
                    "toy_pattern,base,1,0.8000,0.0700,0.5000,0.2500,0.7200,0.6900,0.0100,0.2,0.3,0.8,0.5,0.3\n"
                    "toy_pattern,trained,0,0.7000,0.1000,0.4000,0.2500,0.9000,0.8000,0.0100,0.9,0.9,0.9,0.9,0.9\n"
                    "toy_other,base,0,0.5000,nan,nan,nan,0.5000,0.6800,0.0200,0.3,nan,nan,,\n")
    client.log_artifact(study.parent_id, str(card))
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False)
    return study, summary, out / study.study


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def scaled(values: dict[int, float]) -> dict[int, float]:
    return {s: 100 * v for s, v in values.items()}


def test_the_page_is_written_with_its_csv_files_and_logged_to_the_parent_run(page_study, mlflow_store):
    study, summary, folder = page_study
    page = summary["page"]
    assert page["path"] == str(folder / "index.html") and page["source"] == "eval"
    for name in ("index.html", "page_hacking.csv", "page_improvement.csv", "page_iqm.csv"):
        assert (folder / name).is_file() and str(folder / name) in summary["files"]
    logged = {f.path for f in mlflow_store[1].list_artifacts(study.parent_id, "reports")}
    assert {"reports/index.html", "reports/page_hacking.csv", "reports/credit.md"} <= logged
    html = (folder / "index.html").read_text()
    assert 'id="table-credit"' in html and "Separated (95% CI excludes 0)" in html  # the table and its answer
    assert "<script" not in html and 'src="http' not in html  # self-contained


def test_the_critic_cards_logged_on_the_parent_run_are_shown_per_critic(page_study):
    html = (page_study[2] / "index.html").read_text()
    section = html[html.index('<section id="critic-cards">'):]
    section = section[:section.index("</section>")]
    rows = re.findall(r'<tr data-critic="([^"]+)">(.*?)</tr>', section)
    assert [name for name, _ in rows] == ["toy_pattern", "toy_other"]  # the study's own critic first
    cells = re.findall(r"<td>(.*?)</td>", rows[0][1])
    # agreement per base seed, on the trained policy, ECE and locality means over the base seeds, the means
    assert cells == ["toy_pattern", "0.900 / 0.800", "0.700", "0.060", "0.550 (0.25)", "0.710 / 0.685",
                     "0.900 / 0.800", "0.0100"]
    # inversion rates, means over the base seeds: reward / checks / vivid pairs / the worst asked colour
    assert re.findall(r'<td class="inversion">(.*?)</td>', rows[0][1]) == ["0.150 / 0.250 / 0.700 / 0.600 (red)"]
    other = re.findall(r"<td>(.*?)</td>", rows[1][1])
    assert other[0] == "toy_other (not in this study)" and other[2:5] == ["n/a", "n/a", "n/a"]
    assert re.findall(r'<td class="inversion">(.*?)</td>', rows[1][1]) == ["0.300 / n/a / n/a / n/a"]
    assert '<a href="#critic-cards">' in html


def test_hacking_panel_numbers_and_the_flag(page_study):
    _, summary, folder = page_study
    rows = {r["method"]: r for r in read_csv(folder / "page_hacking.csv")}
    assert list(rows) == ["uniform", "window3"]  # method (GRPO, TVRL) adds nothing to credit: left out of labels
    _, base_overall, base_critic = METHODS["base"]
    for label, row in rows.items():
        _, overall, critic = METHODS[label]
        for prefix, (treated, baseline) in {"critic": (critic, base_critic), "evaluator": (overall, base_overall)}.items():
            d, lo, hi = paired(scaled(treated), scaled(baseline))
            assert [float(row[f"{prefix}_delta"]), float(row[f"{prefix}_ci_low"]), float(row[f"{prefix}_ci_high"])] \
                == pytest.approx([d, lo, hi])
        gap = paired({s: 100 * (critic[s] - overall[s]) for s in SEEDS},
                     {s: 100 * (base_critic[s] - base_overall[s]) for s in SEEDS})
        assert [float(row["gap"]), float(row["gap_ci_low"]), float(row["gap_ci_high"])] == pytest.approx(list(gap))
        assert row["baseline"] == "the base model" and row["seeds"] == "3"
        # headroom-normalised gains by hand: a rise over the room left (1 - before), a fall over before
        hand = {name: {s: 100 * ((a[s] - b[s]) / (1 - b[s]) if a[s] > b[s] else (a[s] - b[s]) / b[s]) for s in SEEDS}
                for name, a, b in (("critic", critic, base_critic), ("evaluator", overall, base_overall))}
        for name in ("critic", "evaluator"):
            d, lo, hi = paired(hand[name], {s: 0.0 for s in SEEDS})
            assert [float(row[f"{name}_gain{end}"]) for end in ("", "_ci_low", "_ci_high")] == pytest.approx([d, lo, hi])
        assert [float(row[f"gain_gap{end}"]) for end in ("", "_ci_low", "_ci_high")] == \
            pytest.approx(list(paired(hand["critic"], hand["evaluator"])))
        assert row["scale"] == "headroom" and row["efficiency"] == "" and row["false_yes_delta"] == ""
    assert rows["window3"]["flagged"] == "1" and rows["uniform"]["flagged"] == "0"
    assert rows["window3"]["verdict"] == "hacking" and rows["uniform"]["verdict"] == "none"
    (flag,) = summary["page"]["flags"]
    assert flag.startswith("reward hacking? window3: critic gain +") and "while the evaluator gain is -" in flag
    html = (folder / "index.html").read_text()
    assert f'<p class="hacking-flag">⚠ {flag}</p>' in html
    assert re.search(r'<tr class="flagged" data-method="window3">', html)
    assert not re.search(r'<tr class="flagged" data-method="uniform">', html)
    # a gain curve per trained method: both start at 0 at step 0 (logged in the fixture's curves)
    assert set(re.findall(r'<figure class="gain-curve" data-method="([^"]+)">', html)) == {"uniform", "window3"}
    figures = re.findall(r'<figure class="gain-curve".*?</figure>', html)
    assert all(legend(f) == [("#1f77b4", "critic gain (eval/critic_reward)"),
                             ("#ff7f0e", "evaluator gain (eval/overall)")] for f in figures) and len(figures) == 2
    assert page_lines(summary["page"]) == [f"  study page: {folder / 'index.html'} (final scores from eval/*)",
                                           f"  {flag}"]


def hand_improvement(a: str, b: str) -> float:
    """P(A > B) written out: per prompt, every seed of A against every seed of B, ties one half; mean over prompts."""
    per_prompt = []
    for p in range(len(PROMPTS)):
        wins = 0.0
        for sa in SEEDS:
            for sb in SEEDS:
                x, y = prompt_scores(a, sa)[p], prompt_scores(b, sb)[p]
                wins += 1.0 if x > y else 0.5 if x == y else 0.0
        per_prompt.append(wins / (len(SEEDS) ** 2))
    return statistics.fmean(per_prompt)


def test_probability_of_improvement_and_iqm_from_the_per_prompt_scores(page_study):
    _, _, folder = page_study
    pairs = {(r["a"], r["b"]): r for r in read_csv(folder / "page_improvement.csv")}
    assert list(pairs) == [("uniform", "base"), ("window3", "base"), ("window3", "uniform")]
    for (a, b), row in pairs.items():
        assert float(row["p_a_beats_b"]) == pytest.approx(hand_improvement(a, b))
        assert float(row["ci_low"]) <= float(row["p_a_beats_b"]) <= float(row["ci_high"])
        assert (row["seeds_a"], row["seeds_b"], row["tasks"]) == ("3", "3", "3")
        d, lo, hi = paired(scaled(METHODS[a][1]), scaled(METHODS[b][1]))
        assert [float(row["delta_a_minus_b"]), float(row["delta_ci_low"]), float(row["delta_ci_high"])] == \
            pytest.approx([d, lo, hi])
    # uniform vs base by hand: prompt 0 scores {.75, .5, .5} vs {.5, .5, .25}: 6 wins and 2 ties of 9 -> 7/9; the
    # three prompts are the same scores rotated, so P = 7/9
    assert float(pairs[("uniform", "base")]["p_a_beats_b"]) == pytest.approx(7 / 9)
    iqms = {r["method"]: r for r in read_csv(folder / "page_iqm.csv")}
    for label in METHODS:
        scores = sorted(100 * s for seed in SEEDS for s in prompt_scores(label, seed))
        assert float(iqms[label]["iqm"]) == pytest.approx(statistics.fmean(scores[2:7]))  # 9 scores, 2 cut each end


def test_videos_side_by_side_with_verdicts_and_credit_maps(page_study):
    import base64

    _, _, folder = page_study
    html = (folder / "index.html").read_text()
    section = html.split('<section id="videos">')[1].split("</section>")[0]
    assert "seed 0" in section
    for label in METHODS:
        for i in range(2):
            payload = base64.b64encode(f"fake-mp4 {label} seed 0 prompt {i}".encode()).decode()
            assert f'data:video/mp4;base64,{payload}"' in section
    assert section.count('class="prompt"') == 2 and section.count("<video") == 6
    assert section.count('class="pass">✓') + section.count('class="fail">✗') == 6  # one check per video
    credit = html.split('<section id="credit">')[1].split("</section>")[0]
    assert credit.count('class="credit-map"') == 2 and "router uniform" in credit and "router window3" in credit


def test_wide_eval_is_preferred_where_every_trial_has_it(new_study, mlflow_store, tmp_path_factory):
    uri = mlflow_store[0]
    study = new_study("page_wide")
    wide = {"base": ({0: 0.50, 1: 0.52, 2: 0.49}, {0: 0.20, 1: 0.22, 2: 0.21}),
            "window3": ({0: 0.55, 1: 0.58, 2: 0.54}, {0: 0.30, 1: 0.31, 2: 0.29})}
    for label, (params, overall, critic) in METHODS.items():
        if label == "uniform":
            continue
        for seed in SEEDS:
            metrics = {"eval/overall": overall[seed], "eval/critic_reward": critic[seed],
                       "wide_eval/overall": wide[label][0][seed], "wide_eval/critic_reward": wide[label][1][seed]}
            study.trial({**params, "seed": seed}, metrics)
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False, tables="credit")
    assert summary["page"]["source"] == "wide_eval"
    (row,) = read_csv(out / study.study / "page_hacking.csv")
    assert row["source"] == "wide_eval"
    assert float(row["evaluator_delta"]) == pytest.approx(paired(scaled(wide["window3"][0]), scaled(wide["base"][0]))[0])
    html = (out / study.study / "index.html").read_text()
    assert 'data-source="wide_eval"' in html and "Final scores from wide_eval/*" in html
    # one trial without wide_eval: both sides must use one metric, so the page falls back to eval/*
    study.trial({**METHODS["window3"][0], "seed": 3}, {"eval/overall": 0.3, "eval/critic_reward": 0.5})
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False, tables="credit", log_to_mlflow=False)
    assert summary["page"]["source"] == "eval"
    assert "only 6 of 7 trials logged wide_eval/*" in (out / study.study / "index.html").read_text()


def test_a_method_without_a_base_of_its_critic_is_compared_with_its_own_step_zero(new_study, mlflow_store, tmp_path_factory):
    uri = mlflow_store[0]
    study = new_study("page_step0")
    for seed in SEEDS:
        study.trial({**METHODS["base"][0], "seed": seed}, {"eval/overall": 0.4, "eval/critic_reward": 0.3}, final_step=0)
        study.trial({"method": "TVRL", "credit": "window3", "reward": "toy_oracle", "seed": seed},
                    {"eval/overall": 0.50 + 0.01 * seed, "eval/critic_reward": 0.70 + 0.02 * seed}, final_step=4,
                    curves={"eval/overall": {0: 0.40 + 0.02 * seed}, "eval/critic_reward": {0: 0.60}})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False, tables="credit", log_to_mlflow=False)
    (row,) = read_csv(out / study.study / "page_hacking.csv")  # one trained method: named by its credit, not TVRL
    assert row["method"] == "window3" and row["critic"] == "toy_oracle" and row["baseline"] == "its own step-0 evaluation"
    assert float(row["evaluator_delta"]) == pytest.approx(100 * statistics.fmean([0.10 - 0.01 * s for s in SEEDS]))
    assert float(row["critic_delta"]) == pytest.approx(100 * statistics.fmean([0.10 + 0.02 * s for s in SEEDS]))


def test_a_method_that_learns_with_an_overstating_critic_is_flagged_as_overstated_not_hacking(
        new_study, mlflow_store, tmp_path_factory):
    """Both gains above 0, the critic's larger beyond the gap's interval: flagged (the issue's criterion) and graded
    `overstated` (the critic gain exceeds the evaluator gain on the headroom scale), listed after a hacking method."""
    uri = mlflow_store[0]
    study = new_study("page_overstated")
    finals = {"base": ({0: 0.50, 1: 0.52, 2: 0.49}, {0: 0.40, 1: 0.41, 2: 0.39}),
              "uniform": ({0: 0.53, 1: 0.56, 2: 0.52}, {0: 0.47, 1: 0.49, 2: 0.45}),  # +3.3 evaluator, +7 critic
              "window3": ({0: 0.45, 1: 0.46, 2: 0.44}, {0: 0.50, 1: 0.53, 2: 0.51})}  # evaluator down, critic up
    for label, (overall, critic) in finals.items():
        for seed in SEEDS:
            study.trial({**METHODS[label][0], "seed": seed},
                        {"eval/overall": overall[seed], "eval/critic_reward": critic[seed]})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False, tables="credit", log_to_mlflow=False)
    rows = {r["method"]: r for r in read_csv(out / study.study / "page_hacking.csv")}
    assert float(rows["uniform"]["evaluator_ci_low"]) > 0 and float(rows["uniform"]["gap_ci_low"]) > 0
    assert (rows["uniform"]["flagged"], rows["uniform"]["verdict"]) == ("1", "overstated")
    assert (rows["window3"]["flagged"], rows["window3"]["verdict"]) == ("1", "hacking")
    hacking, overstated = summary["page"]["flags"]
    assert hacking.startswith("reward hacking? window3: critic gain +")
    assert overstated.startswith("critic overstates the gain: uniform: critic gain +")
    assert "exceeds the evaluator gain +" in overstated and overstated.endswith("(3 seeds)")
    html = (out / study.study / "index.html").read_text()
    assert f'<p class="hacking-flag">⚠ {hacking}</p>' in html and f'<p class="overstated-flag">△ {overstated}</p>' in html
    assert '<tr class="flagged overstated" data-method="uniform">' in html


def test_a_one_seed_study_says_what_it_cannot_assess(new_study, mlflow_store, tmp_path_factory):
    """One seed, as the quickstart: the gap has no interval, so nothing is flagged and the panel says why; the
    probability of improvement has an interval over the prompts alone, and the page says so."""
    uri, client, _ = mlflow_store
    study = new_study("page_one_seed")
    scratch = tmp_path_factory.mktemp("one_seed")
    for label in ("base", "window3"):
        params, overall, critic = METHODS[label]
        run_id = study.trial({**params, "seed": 0}, {"eval/overall": overall[0], "eval/critic_reward": critic[0]})
        folder = scratch / label
        folder.mkdir()
        log_artifacts(study, client, run_id, label, 0, folder)
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False, tables="credit", log_to_mlflow=False)
    assert summary["page"]["flags"] == []
    (row,) = read_csv(out / study.study / "page_hacking.csv")
    assert row["gap"] != "" and row["gap_ci_low"] == "" and row["flagged"] == "0" and row["verdict"] == ""
    assert row["missing"] == "1 paired seed: the gap needs 2 or more for an interval"
    (pair,) = read_csv(out / study.study / "page_improvement.csv")
    assert (pair["seeds_a"], pair["seeds_b"], pair["tasks"]) == ("1", "1", "3")
    # per prompt window3 vs base (seed 0): .25 < .5, .25 = .25, .5 = .5 -> (0 + 1/2 + 1/2) / 3
    assert float(pair["p_a_beats_b"]) == pytest.approx(1 / 3)
    assert float(pair["ci_low"]) < float(pair["ci_high"])  # the prompts redrawn: an interval, not a point
    html = (out / study.study / "index.html").read_text()
    assert "Reward hacking not assessed" in html and "No method\'s critic gain" not in html
    assert 'id="one-seed"' in html


def test_a_real_model_study_without_critic_rewards_or_artifacts_says_what_is_missing(new_study, mlflow_store,
                                                                                        tmp_path_factory):
    uri = mlflow_store[0]
    study = new_study("page_vbench")
    vbench = ["creativity", "commonsense", "controllability", "human_fidelity", "physics"]
    for method, credit, offset in (("base", "uniform", 0.0), ("GRPO", "uniform", 0.02), ("TVRL", "window3", 0.05)):
        for seed in (0, 1):
            metrics = {"eval/overall": 0.45 + offset + 0.01 * seed}
            metrics.update({f"eval/{c}": 0.4 + offset + 0.01 * k for k, c in enumerate(vbench)})
            study.trial({"method": method, "credit": credit, "reward": "videoalign", "seed": seed,
                         "policy": "hunyuan_video15_480p"}, metrics)
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=uri, out_dir=out, plots=False, tables="credit", log_to_mlflow=False)
    assert summary["page"]["flags"] == []
    folder = out / study.study
    rows = {r["method"]: r for r in read_csv(folder / "page_hacking.csv")}
    assert rows["window3"]["missing"] == "no eval/critic_reward logged: the critic's gain is unknown"
    assert float(rows["window3"]["evaluator_delta"]) == pytest.approx(5.0)
    assert rows["window3"]["critic_delta"] == "" and rows["window3"]["flagged"] == "0"
    html = (folder / "index.html").read_text()
    assert "Reward hacking not assessed" in html
    assert "logged no final sample videos (samples/final/)" in html and "no credit heatmap logged" in html
    assert "No run logged eval/critic_reward." in html
    pairs = read_csv(folder / "page_improvement.csv")
    assert {r["tasks"] for r in pairs} == {"1"}  # no per-prompt scores: one task, the final score per seed
    assert "per seed: one task, the final eval/overall" in html
    iqms = {r["method"]: r for r in read_csv(folder / "page_iqm.csv")}
    assert iqms["base"]["iqm"] == "" and iqms["base"]["missing"] == "2 seeds: the IQM needs 3 or more"


def test_no_page_option(new_study, mlflow_store, tmp_path_factory):
    study = new_study("page_off")
    study.trial({**METHODS["base"][0], "seed": 0}, {"eval/overall": 0.4})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, plots=False, tables="credit",
                         page=False)
    assert summary["page"] is None and not (out / study.study / "index.html").exists()
    assert page_lines(summary["page"]) == []


def test_a_page_that_cannot_be_written_leaves_the_previous_page_and_its_csvs_as_they_were(page_study, mlflow_store,
                                                                                         tmp_path):
    from tvrl_bench.report.files import NotWritten

    study = page_study[0]
    folder = tmp_path / study.study
    folder.mkdir()
    for name in ("index.html", "page_hacking.csv", "page_improvement.csv"):
        (folder / name).write_text(f"previous {name}")
    (folder / "page_iqm.csv").mkdir()  # the one file that cannot be written
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=tmp_path, plots=False, log_to_mlflow=False)
    page = summary["page"]
    assert isinstance(page["error"], NotWritten) and str(folder / "page_iqm.csv") in str(page["error"])
    assert page["rewrite"] == f"tvrl-report --study {study.study} --tracking-uri {mlflow_store[0]} --out {tmp_path}"
    for name in ("index.html", "page_hacking.csv", "page_improvement.csv"):
        assert (folder / name).read_text() == f"previous {name}"
    assert (folder / "credit.md").is_file() and str(folder / "credit.md") in summary["files"]  # the tables are kept
    assert sorted(f.rsplit("/", 1)[1] for f in summary["files"]) == ["credit.csv", "credit.html", "credit.md",
                                                                       "credit.tex"]
    assert page_lines(page) == [] and sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == []


def test_a_lone_trained_method_is_named_by_its_objective_and_credit_everywhere(new_study, mlflow_store, tmp_path_factory):
    """DiffusionNFT with uniform credit carries method=GRPO (derived from the credit); the page calls it by its
    credit and objective in the methods line, the hacking panel, the curves and the CSVs, as its table does."""
    study = new_study("page_lone")
    for seed in SEEDS:
        study.trial({**METHODS["base"][0], "objective": "nft", "seed": seed}, {"eval/overall": 0.4,
                                                                               "eval/critic_reward": 0.3})
        study.trial({"method": "GRPO", "objective": "nft", "credit": "uniform", "reward": "toy_pattern", "seed": seed},
                    {"eval/overall": 0.45, "eval/critic_reward": 0.35 + 0.01 * seed}, final_step=4,
                    curves={"eval/overall": {0: 0.4, 2: 0.42}})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    summary = regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, plots=False, tables="credit",
                         log_to_mlflow=False)
    (row,) = read_csv(out / study.study / "page_hacking.csv")
    assert row["method"] == "uniform-nft"
    assert {r["method"] for r in read_csv(out / study.study / "page_iqm.csv")} == {"base", "uniform-nft"}
    html = (out / study.study / "index.html").read_text()
    assert 'data-method="uniform-nft"' in html and "uniform-nft" in html.split('id="curves"')[1][:20000]
    assert "GRPO" not in html.split('id="table-')[0]  # above the study's own tables: methods line, flags
    assert summary["page"]["path"]


def test_a_nan_metric_reads_as_diverged_not_as_missing(new_study, mlflow_store, tmp_path_factory):
    """A run that logged eval/overall as NaN diverged: the page, its CSVs and the table say so, and leave it out."""
    study = new_study("page_nan")
    for seed in SEEDS:
        study.trial({**METHODS["base"][0], "seed": seed}, {"eval/overall": 0.4, "eval/critic_reward": 0.3})
        study.trial({**METHODS["window3"][0], "seed": seed}, {"eval/overall": float("nan"),
                                                             "eval/critic_reward": 0.5})
        study.trial({**METHODS["uniform"][0], "seed": seed}, {"eval/overall": float("nan") if seed == 0 else 0.45,
                                                             "eval/critic_reward": 0.35})
    study.finish()
    out = tmp_path_factory.mktemp("reports")
    regenerate(study.study, tracking_uri=mlflow_store[0], out_dir=out, plots=False, tables="credit", log_to_mlflow=False)
    folder = out / study.study
    hacking = {r["method"]: r for r in read_csv(folder / "page_hacking.csv")}
    assert hacking["window3"]["missing"] == "diverged: eval/overall is NaN (seeds 0, 1, 2)"
    assert hacking["uniform"]["seeds"] == "2"  # its diverged seed left out
    iqms = {r["method"]: r["missing"] for r in read_csv(folder / "page_iqm.csv")}
    assert iqms["uniform"] == "2 seeds (1 diverged: eval/overall is NaN): the IQM needs 3 or more"
    pairs = {(r["a"], r["b"]): r for r in read_csv(folder / "page_improvement.csv")}
    assert pairs["window3", "base"]["p_a_beats_b"] == ""
    html = (folder / "index.html").read_text()
    assert "4 runs diverged (eval/overall logged as NaN): left out of the comparisons below" in html
    assert '<td class="verdict">diverged: eval/overall is NaN (seeds 0, 1, 2)</td>' in html
    table = (folder / "credit.md").read_text()
    # The table reads the wide evaluation, falling back to eval/* when no run logged one: NaN there is NaN here.
    assert "the table reads each trial's own evaluation (eval/*)" in table
    # ... and the notes name the metric the runs logged as NaN (eval/overall), not the one the table reads
    assert "Diverged: 4 runs logged eval/overall as NaN; left out of its cells." in table
    assert "runs with credit=window3 diverged: 3 logged 'eval/overall' as NaN" in table
    assert "no metric" not in table and "no eval/overall logged" not in html


def test_a_diverged_wide_evaluation_still_counts_as_logged():
    import pandas as pd

    from tvrl_bench.report.study_page.methods import choose_source

    trials = pd.DataFrame({"run_id": ["a", "b"], "metrics.wide_eval/overall": [0.5, float("nan")],
                           "nan_metrics": [(), ("wide_eval/overall",)]})
    assert choose_source(trials).prefix == "wide_eval"
    trials["nan_metrics"] = [(), ()]  # b never logged one: both read eval/*
    assert choose_source(trials).prefix == "eval"

"""The annotation page: one self-contained HTML document (inline CSS and JS, no build step, no external files).

The page is the same for every annotator and every study: it reads its API base from its own URL (/a/<token>/),
asks the server for the annotator's state and items, and shows one prompt with two videos played in sync.
Keys: ← left is better, → right is better, ↓ or space: tie, Backspace: back to the previous pair, P: play/pause.
A vote is sent as JSON; the page moves on only when the server answered that it is saved.
"""

from __future__ import annotations

PAGE_HTML = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Blind video comparison</title>
<style>
  :root { --fg: #1d2330; --muted: #667085; --accent: #2f6fde; --ok: #1b7f4b; --bad: #b42318; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
         background: #f4f6fa; }
  header { display: flex; align-items: center; justify-content: space-between; padding: 12px 24px;
           background: #fff; border-bottom: 1px solid #e3e7ef; }
  header h1 { font-size: 18px; margin: 0; font-weight: 600; }
  #progress-text { font-variant-numeric: tabular-nums; color: var(--muted); margin-right: 12px; }
  progress { width: 180px; height: 10px; vertical-align: middle; }
  main { max-width: 1100px; margin: 0 auto; padding: 20px 24px; }
  .question { color: var(--muted); margin: 0 0 4px; }
  #prompt { font-size: 22px; font-weight: 600; margin: 0 0 16px; min-height: 1.4em; }
  .videos { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
  figure { margin: 0; background: #fff; border: 2px solid #e3e7ef; border-radius: 10px; padding: 10px;
           text-align: center; }
  figure.chosen { border-color: var(--accent); box-shadow: 0 0 0 3px #2f6fde33; }
  figcaption { font-weight: 600; margin-bottom: 6px; }
  video { display: block; width: 100%; height: min(46vh, 440px); object-fit: contain; background: #000;
          border-radius: 6px; image-rendering: pixelated; }
  .transport { display: flex; align-items: center; gap: 12px; margin: 14px 0; }
  #seek { flex: 1; }
  .choices { display: grid; grid-template-columns: 1fr 1fr 1fr; gap: 14px; margin-top: 8px; }
  button { font: inherit; padding: 12px 10px; border-radius: 8px; border: 1px solid #c9d0dd; background: #fff;
           cursor: pointer; }
  button:hover:not(:disabled) { border-color: var(--accent); }
  button:disabled { opacity: .5; cursor: default; }
  button.chosen { background: var(--accent); border-color: var(--accent); color: #fff; }
  kbd { font: 13px ui-monospace, monospace; border: 1px solid #c9d0dd; border-bottom-width: 2px; border-radius: 4px;
        padding: 0 5px; background: #fafbfd; color: var(--fg); }
  button.chosen kbd { color: var(--fg); }
  .small { font-size: 13px; color: var(--muted); }
  #status { min-height: 1.5em; margin-top: 12px; }
  #status.ok { color: var(--ok); }
  #status.error { color: var(--bad); font-weight: 600; }
  #finished { display: none; text-align: center; padding: 48px 0; }
  body.finished #finished { display: block; }
  body.finished #task { display: none; }
</style>
</head>
<body>
<header>
  <h1>Which video matches the prompt better?</h1>
  <div>
    <span id="progress-text">0 / 0</span><progress id="progress" max="1" value="0"></progress>
    <button id="back" type="button" tabindex="-1" title="Back to the previous pair (Backspace)">&larr; Back <kbd>Backspace</kbd></button>
  </div>
</header>
<main>
  <section id="task">
    <p class="question">Prompt</p>
    <p id="prompt"></p>
    <div class="videos">
      <figure id="fig-left"><figcaption>Left</figcaption><video id="left" muted playsinline preload="auto"></video></figure>
      <figure id="fig-right"><figcaption>Right</figcaption><video id="right" muted playsinline preload="auto"></video></figure>
    </div>
    <div class="transport">
      <button id="play" type="button" tabindex="-1" title="Play / pause both (P)">Pause</button>
      <input id="seek" type="range" min="0" max="1" step="0.001" value="0" tabindex="-1" aria-label="Position in both videos">
      <span class="small" id="time">0.0 s</span>
    </div>
    <div class="choices">
      <button id="choose-left" type="button" tabindex="-1" data-choice="left"><kbd>&larr;</kbd> Left is better</button>
      <button id="choose-tie" type="button" tabindex="-1" data-choice="tie"><kbd>&darr;</kbd> / <kbd>Space</kbd> Tie</button>
      <button id="choose-right" type="button" tabindex="-1" data-choice="right">Right is better <kbd>&rarr;</kbd></button>
    </div>
    <p class="small">Judge how well each video shows what the prompt says. The two videos play together; <kbd>P</kbd>
      pauses both, the slider moves both. Your vote is saved before the next pair appears.</p>
  </section>
  <section id="finished">
    <h2>All pairs judged. Thank you!</h2>
    <p>You may close this page, or press <kbd>Backspace</kbd> / Back to change your last vote.</p>
  </section>
  <p id="status" role="status"></p>
</main>
<script>
"use strict";
(function () {
  const base = window.location.pathname.replace(/\/+$/, "");
  const $ = (id) => document.getElementById(id);
  const L = $("left"), R = $("right"), seek = $("seek");
  const choiceButtons = Array.from(document.querySelectorAll("button[data-choice]"));
  let item = null, total = 0, busy = false, current = 0;

  function setStatus(text, kind) {
    const s = $("status");
    s.textContent = text;
    s.className = kind || "";
  }

  async function api(path, options) {
    let response;
    try {
      response = await fetch(base + "/api/" + path, Object.assign({ cache: "no-store" }, options || {}));
    } catch (err) {
      throw new Error("the server cannot be reached");
    }
    let body = null;
    try { body = await response.json(); } catch (err) { body = null; }
    if (!response.ok) {
      throw new Error((body && body.error) || ("HTTP " + response.status));
    }
    return body;
  }

  function showProgress(state) {
    total = state.total;
    $("progress-text").textContent = state.done + " / " + state.total;
    $("progress").max = Math.max(1, state.total);
    $("progress").value = state.done;
  }

  function setBusy(value) {
    busy = value;
    choiceButtons.forEach((b) => { b.disabled = value; });
    $("back").disabled = value || current === 0;
  }

  function markChoice(choice) {
    choiceButtons.forEach((b) => b.classList.toggle("chosen", b.dataset.choice === choice));
    $("fig-left").classList.toggle("chosen", choice === "left");
    $("fig-right").classList.toggle("chosen", choice === "right");
  }

  // ---- synchronised playback: one clock (the left video), the right one follows ----
  let wantPlaying = true;

  function playBoth() {
    wantPlaying = true;
    $("play").textContent = "Pause";
    return Promise.all([L.play(), R.play()]).catch(() => {});
  }

  function pauseBoth() {
    wantPlaying = false;
    $("play").textContent = "Play";
    L.pause(); R.pause();
  }

  function seekBoth(t) {
    L.currentTime = t; R.currentTime = t;
  }

  function restartBoth() {
    seekBoth(0);
    if (wantPlaying) playBoth();
  }

  [L, R].forEach((v) => {
    v.addEventListener("ended", restartBoth);  // loop both together from the start
  });

  function ready(video) {
    return new Promise((resolve) => {
      if (video.readyState >= 2) { resolve(); return; }
      video.addEventListener("loadeddata", () => resolve(), { once: true });
      video.addEventListener("error", () => resolve(), { once: true });
    });
  }

  function tick() {
    if (!L.paused && !R.paused && Math.abs(L.currentTime - R.currentTime) > 0.08) {
      R.currentTime = L.currentTime;
    }
    if (!L.paused && R.paused && wantPlaying && !R.ended) { R.play().catch(() => {}); }
    const d = L.duration;
    if (d && isFinite(d) && document.activeElement !== seek) { seek.value = String(L.currentTime / d); }
    $("time").textContent = L.currentTime.toFixed(1) + " s";
    window.requestAnimationFrame(tick);
  }
  window.requestAnimationFrame(tick);

  seek.addEventListener("input", () => {
    const d = L.duration;
    if (d && isFinite(d)) seekBoth(Number(seek.value) * d);
  });
  $("play").addEventListener("click", (e) => { e.currentTarget.blur(); (L.paused ? playBoth : pauseBoth)(); });

  // ---- items and votes ----
  async function show(position) {
    if (position >= total) {
      current = total;
      item = null;
      pauseBoth();
      L.removeAttribute("src"); R.removeAttribute("src"); L.load(); R.load();
      document.body.classList.add("finished");
      $("back").disabled = total === 0;
      return;
    }
    document.body.classList.remove("finished");
    const next = await api("item/" + position);
    item = next;
    current = position;
    showProgress(next);
    $("prompt").textContent = next.prompt;
    markChoice(next.choice);
    L.src = base + "/v/" + next.left;
    R.src = base + "/v/" + next.right;
    await Promise.all([ready(L), ready(R)]);
    seekBoth(0);
    if (wantPlaying) await playBoth();
    $("back").disabled = busy || position === 0;
  }

  async function vote(choice) {
    if (busy || !item) return;
    setBusy(true);
    setStatus("Saving\u2026", "");
    try {
      const state = await api("vote", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ position: item.position, pair: item.pair, choice: choice }),
      });
      showProgress(state);
      setStatus("Saved.", "ok");
      await show(state.next);
    } catch (err) {
      setStatus("Not saved: " + err.message + ". Your vote was not recorded; try again.", "error");
    } finally {
      setBusy(false);
    }
  }

  async function back() {
    if (busy || current === 0) return;
    setBusy(true);
    try {
      await show(current - 1);
      setStatus("Back to the previous pair: vote again to change it.", "");
    } catch (err) {
      setStatus("Could not go back: " + err.message, "error");
    } finally {
      setBusy(false);
    }
  }

  choiceButtons.forEach((b) => b.addEventListener("click", (e) => { e.currentTarget.blur(); vote(b.dataset.choice); }));
  $("back").addEventListener("click", (e) => { e.currentTarget.blur(); back(); });

  const keys = { ArrowLeft: "left", ArrowRight: "right", ArrowDown: "tie", " ": "tie" };
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key in keys) {
      e.preventDefault();
      if (!e.repeat) vote(keys[e.key]);
    } else if (e.key === "Backspace") {
      e.preventDefault();
      if (!e.repeat) back();
    } else if (e.key === "p" || e.key === "P") {
      e.preventDefault();
      (L.paused ? playBoth : pauseBoth)();
    }
  }, true);

  async function start() {
    setBusy(true);
    try {
      const state = await api("state");
      showProgress(state);
      await show(state.next);
      setStatus(state.done ? "Welcome back: continuing where you stopped." : "", "");
    } catch (err) {
      setStatus("Cannot load your pairs: " + err.message, "error");
    } finally {
      setBusy(false);
    }
  }
  start();
})();
</script>
</body>
</html>
"""

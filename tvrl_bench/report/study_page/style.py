"""The study page's stylesheet (inlined in the page, so it stays one file)."""

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #222; }
p, li { max-width: 95em; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
nav a { margin-right: 1em; } .meta { color: #555; font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { padding: 0.25em 0.7em; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
tbody tr:last-child td { border-bottom: 2px solid #222; }
tr.group-start td { border-top: 1px solid #999; }
td.missing { color: #b00; } td.ns { color: #777; }
.notes { font-size: 0.85em; color: #444; } .answer { margin: 0.3em 0; max-width: 75em; }
.flags { margin: 0.8em 0; } .study-table { overflow-x: auto; }
.hacking-flag { background: #fdecea; border-left: 4px solid #c62828; padding: 0.4em 0.7em; margin: 0.3em 0; }
.overstated-flag { background: #fff8e1; border-left: 4px solid #f9a825; padding: 0.4em 0.7em; margin: 0.3em 0; }
.no-flag { background: #edf7ed; border-left: 4px solid #2e7d32; padding: 0.4em 0.7em; }
tr.flagged td { background: #fdecea; font-weight: 600; } tr.flagged.overstated td { background: #fff8e1; }
.curves { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.legend span { display: inline-block; margin-right: 1.2em; font-size: 0.9em; }
.legend i { display: inline-block; width: 14px; height: 4px; margin-right: 4px; vertical-align: middle; }
.prompt { margin: 1em 0; } .prompt-text { font-weight: 600; }
.videos, .maps { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; } figcaption { font-size: 0.85em; max-width: 240px; }
video { width: 200px; height: 200px; image-rendering: pixelated; background: #000; }
.maps img { max-width: 460px; border: 1px solid #ddd; }
#improvement-table td:nth-child(2) { text-align: left; }
ul.verdicts { list-style: none; padding: 0; margin: 0.2em 0; }
.pass { color: #2e7d32; } .fail { color: #c62828; }
.muted { color: #777; }
#hacking-table td.verdict { white-space: normal; max-width: 18em; text-align: left; }
#hacking-table td:nth-child(2), #hacking-table td:nth-child(3), #hacking-table th:nth-child(2),
#hacking-table th:nth-child(3) { text-align: left; }
#hacking-table { font-size: 0.85em; } #hacking-table th { white-space: normal; } #hacking-table td { padding: 0.25em 0.5em; }
""".strip()

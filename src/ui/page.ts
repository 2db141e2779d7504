// The page and its style sheet. The scripts are plain ES modules in
// src/ui/client/ (compiled to dist/ui/client/ by the build); nothing is
// fetched from any other host.

const STATES: [string, string][] = [
  ['ready', 'Ready'],
  ['progressing', 'Progressing'],
  ['waiting', 'Waiting on dependencies'],
  ['failed', 'Failed'],
  ['suspended', 'Suspended'],
  ['missing', 'Not found'],
  ['unknown', 'Not in the cache'],
];

const legend = STATES.map(([s, text]) => `<li><span class="swatch s-${s}" aria-hidden="true"></span>${text}</li>`).join('');

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>syncprims</title>
<link rel="stylesheet" href="/app.css">
<script type="module" src="/client/app.js"></script>
</head>
<body>
<header>
  <h1>syncprims</h1>
  <p id="live" role="status" aria-live="polite">connecting…</p>
</header>
<main>
  <section class="graph-section" aria-labelledby="graph-h">
    <div class="toolbar">
      <h2 id="graph-h">Dependency graph</h2>
      <label for="ns">Namespace</label>
      <select id="ns"></select>
    </div>
    <ul class="legend" aria-label="Legend">${legend}<li><span class="line cycle" aria-hidden="true"></span>cycle</li><li><span class="line unmet" aria-hidden="true"></span>dependency not met</li></ul>
    <div id="cycles"></div>
    <p class="hint">An arrow points from a sync to a sync it depends on; dependencies are on the left.</p>
    <div id="graph" class="graph"></div>
  </section>
  <div class="panels">
    <section id="detail-section" aria-labelledby="detail-h"><h2 id="detail-h">Selected sync</h2><div id="detail"><p>Select a sync in the graph or in a list.</p></div></section>
    <section id="fleets-section" aria-labelledby="fleets-h"><h2 id="fleets-h">FleetSyncs</h2><div id="fleets"></div></section>
    <section aria-labelledby="notready-h"><h2 id="notready-h">Not ready</h2><div id="notready"></div></section>
    <section aria-labelledby="clusters-h"><h2 id="clusters-h">Remote clusters</h2><div id="clusters"></div></section>
  </div>
</main>
</body>
</html>
`;

export const PAGE_CSS = `
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1a1a1a; background: #fafafa; }
body { margin: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
header { display: flex; align-items: baseline; gap: 1rem; padding: .5rem 1rem; background: #263238; color: #fff; flex-wrap: wrap; }
header h1 { font-size: 1.2rem; margin: 0; }
header p { margin: 0; font-size: .9rem; }
main { padding: .5rem 1rem 2rem; }
h2 { font-size: 1.05rem; margin: .75rem 0 .5rem; }
h3 { font-size: .95rem; margin: .75rem 0 .25rem; }
.toolbar { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; }
.toolbar h2 { margin-right: 1rem; }
select, button { font: inherit; }
.legend { list-style: none; padding: 0; margin: .25rem 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: .85rem; }
.legend li { display: flex; align-items: center; gap: .35rem; }
.swatch { display: inline-block; width: 1rem; height: .8rem; border: 2px solid; border-radius: 3px; }
.line { display: inline-block; width: 1.5rem; border-top: 3px solid #555; }
.line.cycle { border-top-color: #c62828; }
.line.unmet { border-top: 3px dashed #8a5a00; }
.hint { font-size: .85rem; color: #444; margin: .25rem 0; }
.cycle-list { color: #8e0000; font-weight: 600; margin: .25rem 0; }
.graph { position: relative; overflow: auto; border: 1px solid #bbb; background: #fff; min-height: 4rem; max-height: 70vh; }
.graph svg { position: absolute; left: 0; top: 0; pointer-events: none; }
.graph .edge { fill: none; stroke: #555; stroke-width: 1.5; }
.graph .edge.unmet { stroke: #8a5a00; stroke-dasharray: 6 4; }
.graph .edge.cycle { stroke: #c62828; stroke-width: 2.5; }
.graph .edge-label { font-size: 11px; fill: #333; }
.node { position: absolute; width: 190px; height: 46px; box-sizing: border-box; border: 2px solid; border-radius: 6px; padding: 2px 6px; text-align: left; cursor: pointer; overflow: hidden; line-height: 1.2; }
.node .name { display: block; font-size: 13px; font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.node .state { display: block; font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.node[aria-pressed="true"] { outline: 3px solid #0d47a1; outline-offset: 2px; }
.node:focus-visible { outline: 3px solid #0d47a1; outline-offset: 2px; }
.node.on-cycle { box-shadow: 0 0 0 3px #c62828; }
.s-ready { background: #d4edda; border-color: #2e7d32; color: #1b5e20; }
.s-progressing { background: #fff3cd; border-color: #b28704; color: #4d3800; }
.s-waiting { background: #e3f2fd; border-color: #1565c0; color: #0d3c78; }
.s-failed { background: #f8d7da; border-color: #c62828; color: #7f0000; }
.s-suspended { background: #eceff1; border-color: #546e7a; color: #263238; }
.s-missing { background: #fff; border-color: #616161; border-style: dashed; color: #424242; }
.s-unknown { background: #eee; border-color: #616161; border-style: dashed; color: #424242; }
.panels { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(30rem, 100%), 1fr)); gap: 0 1.5rem; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { text-align: left; padding: .2rem .4rem; border-bottom: 1px solid #ddd; vertical-align: top; overflow-wrap: anywhere; }
th { background: #eceff1; white-space: nowrap; }
#detail-section, #fleets-section { grid-column: 1 / -1; min-width: 0; }
.panels > section { min-width: 0; }
.linkish .part { white-space: nowrap; }
.not-ready table { table-layout: fixed; }
.not-ready th:nth-child(1) { width: 37%; }
.not-ready th:nth-child(2) { width: 20%; }
.not-ready th:nth-child(4) { width: 4.5rem; }
.not-ready td { overflow: hidden; overflow-wrap: normal; }
.not-ready .linkish { display: block; max-width: 100%; }
.not-ready .part { display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; }
.not-ready .badge { max-width: 100%; box-sizing: border-box; }
.not-ready .reason { display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
td time { white-space: nowrap; }
ul.plain { list-style: none; margin: 0; padding: 0; }
.fleet-message { font-size: .85rem; margin: .25rem 0; }
.fleet td { overflow-wrap: normal; }
.fleet ul.plain li { white-space: nowrap; max-width: 24rem; overflow: hidden; text-overflow: ellipsis; }
.fleet tr.failing { background: #fdf0f1; }
.fleet .problem { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 3; overflow: hidden; }
.fleet .problem strong { color: #7f0000; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .8rem; }
.table-scroll { overflow-x: auto; }
td.nowrap { white-space: nowrap; overflow-wrap: normal; }
.table-scroll:focus-visible { outline: 3px solid #0d47a1; outline-offset: 2px; }
.badge { display: inline-block; padding: 0 .35rem; border: 1px solid; border-radius: 3px; font-size: .8rem; }
.linkish { background: none; border: none; padding: 0; color: #0d47a1; text-decoration: underline; cursor: pointer; text-align: left; }
.rollout tr.current { background: #fff3cd; font-weight: 600; }
.rollout .current-mark { color: #4d3800; }
.unreachable { color: #7f0000; font-weight: 600; }
.reachable { color: #1b5e20; font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .75rem; font-size: .85rem; margin: .25rem 0; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  main { padding: .5rem; }
  .panels { grid-template-columns: 1fr; }
  .graph { max-height: 60vh; }
}
`;

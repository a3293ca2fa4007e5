// The dashboard's inline stylesheet and script (kept in C++ so the core ships one binary).
// The script lays out the view model of html_view.cpp; it only writes text with textContent
// and attributes with setAttribute.
#include "render/html_assets.h"

namespace attnprof::render {

const char* const kDashboardCss = R"attnprof_css(
:root { --fg: #1d2330; --muted: #667085; --line: #d0d5dd; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 16px 24px; background: #1d2330; color: #fff; }
header h1 { margin: 0; font-size: 20px; }
header p { margin: 4px 0 0; color: #c7ccd6; }
#app { padding: 16px 24px; max-width: 1280px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin: 0 0 16px; overflow-x: auto; }
.card h2 { margin: 0 0 4px; font-size: 17px; }
.sub, .note, .files { color: var(--muted); margin: 2px 0 8px; }
.files { word-break: break-all; }
.kpis { display: flex; flex-wrap: wrap; gap: 12px; }
.kpi { min-width: 150px; padding: 8px 12px; border: 1px solid var(--line); border-radius: 6px; }
.kpi-v { font-size: 20px; font-weight: 600; }
.kpi-l { color: var(--muted); font-size: 12px; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 6px 0; font-size: 12px; color: var(--muted); }
.legend-item { display: inline-flex; align-items: center; gap: 5px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; }
svg.chart { display: block; margin: 6px 0; font-size: 11px; }
svg .lbl { fill: var(--fg); }
svg .strong { font-weight: 600; }
svg .val, svg .tick { fill: var(--muted); }
svg .cell-t { fill: #fff; font-size: 10px; pointer-events: none; }
svg .cell, svg .bar, svg .heat, svg circle, svg .node { cursor: pointer; }
svg .cell:hover, svg .heat:hover { stroke: #1d2330; stroke-width: 1.5; }
svg .axis { stroke: #98a2b3; }
svg .limit { stroke: #d64541; stroke-dasharray: 5 4; }
svg .oom { stroke-dasharray: 3 3; }
svg .limit-lbl { fill: #d64541; font-size: 11px; }
table.grid { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
table.grid th, table.grid td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
table.grid th { background: #f2f4f7; }
.changed { font-weight: 600; }
.changed.worse { color: #d64541; }
.changed.better { color: #2e9d4f; }
.detail { background: #f8f9fb; border: 1px solid var(--line); border-radius: 6px; padding: 8px; white-space: pre-wrap; font-size: 12px; max-height: 260px; overflow: auto; }
#tip { position: fixed; display: none; z-index: 10; max-width: 640px; padding: 8px 10px; background: rgba(29,35,48,.95); color: #fff; border-radius: 6px; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; pointer-events: none; }
.tabs { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }
.tab { border: 1px solid var(--line); background: #fff; border-radius: 6px; padding: 4px 10px; cursor: pointer; }
.tab.active { background: #1d2330; color: #fff; }
ol.findings { padding-left: 20px; }
p.verified { font-weight: 600; }
p.verdict-confirmed { color: #1a7f37; }
p.verdict-changes_results { color: #b42318; }
.finding p { margin: 2px 0 6px; }
.sev { display: inline-block; min-width: 56px; margin-right: 8px; padding: 0 6px; border-radius: 4px; background: #e9ecef; font-size: 12px; text-align: center; }
.sev-high .sev { background: #d64541; color: #fff; }
.sev-medium .sev { background: #e8952f; color: #fff; }
.gain { margin-left: 8px; color: #2e9d4f; font-weight: 600; }
code { font: 12px ui-monospace, Menlo, Consolas, monospace; }
.card h3 { margin: 12px 0 4px; font-size: 14px; }
.why { font-style: italic; }
.warn { color: #d64541; }
.maps { display: flex; flex-wrap: wrap; gap: 8px 24px; }
.swatch.dashed { height: 3px; }
svg .grid { stroke: #eef0f3; }
svg .mark-lbl { font-size: 11px; }
svg .toggle { cursor: pointer; fill: var(--muted); font-size: 12px; }
svg .on-color { fill: #fff; }
svg .cell-mark { fill: #fff; font-size: 10px; font-weight: 700; pointer-events: none; }
svg .roof-lbl, svg .bw-lbl { font-size: 11px; }
.verdict { display: inline-block; margin: 4px 0 8px; padding: 2px 10px; border-radius: 4px; font-weight: 600; color: #fff; }
.verdict.regression { background: #d64541; }
.verdict.ok { background: #2e9d4f; }
svg .rank-cell.disagree { stroke: #1d2330; stroke-width: 2; }
svg .rank-mark { fill: #1d2330; font-size: 10px; font-weight: 700; pointer-events: none; }
svg a.rank-link text, a.rank-link { fill: #3b6fd8; color: #3b6fd8; text-decoration: underline; }
)attnprof_css";

const char* const kDashboardJs = R"attnprof_js(
// attnprof dashboard: lays out the view model embedded as JSON (see html_view.cpp).
// Untrusted strings (kernel, module, file names) only ever reach the page through
// textContent or setAttribute; nothing here parses HTML.
(() => {
  'use strict';
  const t0 = performance.now();
  const DATA = JSON.parse(document.getElementById('attnprof-data').textContent);
  const SVGNS = 'http://www.w3.org/2000/svg';
  const COLORS = { fused: '#2e9d4f', fallback: '#e8952f', eager: '#d64541', absent: '#e9ecef', unknown: '#b8c0cc', '': '#adb5bd' };
  const SERIES = ['#3b6fd8', '#d64541', '#2e9d4f', '#8e44ad', '#e8952f', '#16a2b8', '#6c757d'];
  const COMPONENT_LABEL = { qk: 'QK\u1d40', mask: 'mask', softmax: 'softmax', dropout: 'dropout', av: 'AV', fused: 'fused' };

  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const svg = (tag, attrs, text) => {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const fmtUs = (us) => {
    if (us === null || us === undefined) return 'n/a';
    if (us >= 1e6) return (us / 1e6).toFixed(2) + ' s';
    if (us >= 1e3) return (us / 1e3).toFixed(2) + ' ms';
    return us.toFixed(1) + ' \u00b5s';
  };
  const fmtBytes = (b) => {
    if (b === null || b === undefined || b < 0) return 'n/a';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return b.toFixed(i === 0 ? 0 : 1) + ' ' + units[i];
  };
  const pct = (x) => (100 * x).toFixed(1) + '%';
  const shorten = (s, n) => (s.length > n ? '\u2026' + s.slice(s.length - n + 1) : s);

  // --- tooltip + detail panel -----------------------------------------------------------
  const tip = el('div', { id: 'tip', role: 'tooltip' });
  document.body.appendChild(tip);
  const hoverable = (node, linesFn) => {
    node.addEventListener('mousemove', (ev) => {
      tip.textContent = linesFn().join('\n');
      tip.style.display = 'block';
      const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      const y = Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
      tip.style.left = Math.max(0, x) + 'px';
      tip.style.top = Math.max(0, y) + 'px';
    });
    node.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  };

  const section = (id, title, sub) => {
    const s = el('section', { id, class: 'card', 'data-section': id });
    s.appendChild(el('h2', null, title));
    if (sub) s.appendChild(el('p', { class: 'sub' }, sub));
    return s;
  };
  const table = (headers, rows, cls) => {
    const t = el('table', { class: cls || 'grid' });
    const head = el('tr');
    for (const h of headers) head.appendChild(el('th', null, h));
    t.appendChild(el('thead')).appendChild(head);
    const body = t.appendChild(el('tbody'));
    for (const r of rows) {
      const tr = body.appendChild(el('tr'));
      for (const c of r) {
        if (c instanceof Node) tr.appendChild(el('td')).appendChild(c);
        else tr.appendChild(el('td', null, c));
      }
    }
    return t;
  };
  const swatch = (cls) => el('span', { class: 'swatch', style: 'background:' + (COLORS[cls] || COLORS['']) });
  const legend = () => {
    const d = el('div', { class: 'legend' });
    for (const [cls, label] of [['fused', 'fused kernel'], ['fallback', 'fallback (unfused SDPA math)'],
                                ['eager', 'eager (model code)'], ['absent', 'no kernel'],
                                ['unknown', 'device time unknown (kernels not recorded, e.g. graph capture)']]) {
      const item = d.appendChild(el('span', { class: 'legend-item' }));
      item.appendChild(swatch(cls));
      item.appendChild(document.createTextNode(label));
    }
    return d;
  };

  // --- charts -----------------------------------------------------------------------------
  // Horizontal bars: items [{label, value, color, lines}].
  const barChart = (items, fmt, opts) => {
    const o = opts || {};
    const rowH = 18, labelW = 150, width = 760, barW = width - labelW - 110;
    const max = Math.max(o.max || 0, ...items.map((i) => i.value), 1e-12);
    const s = svg('svg', { class: 'chart', width, height: items.length * rowH + 8, 'data-chart': o.name || 'bars' });
    items.forEach((it, i) => {
      const y = i * rowH + 4;
      s.appendChild(svg('text', { x: labelW - 6, y: y + 12, 'text-anchor': 'end', class: 'lbl' }, it.label));
      const w = Math.max(1, (barW * it.value) / max);
      const bar = s.appendChild(svg('rect', { x: labelW, y, width: w, height: rowH - 4, fill: it.color || SERIES[0], class: 'bar' }));
      s.appendChild(svg('text', { x: labelW + w + 6, y: y + 12, class: 'val' }, fmt(it.value)));
      if (it.lines) hoverable(bar, () => it.lines);
    });
    if (o.limit !== undefined && o.limit > 0) {
      const x = labelW + (barW * o.limit) / max;
      s.appendChild(svg('line', { x1: x, x2: x, y1: 0, y2: items.length * rowH + 8, class: 'limit' }));
    }
    return s;
  };

  // Line chart: series [{name, xs, ys, color}], optional hline {y,label}, vlines [{x,label,color}].
  const lineChart = (cfg) => {
    const W = 760, H = 300, L = 80, R = 20, T = 16, B = 40;
    const xsAll = cfg.series.flatMap((s) => s.xs).concat((cfg.vlines || []).map((v) => v.x)).filter((x) => x >= 0);
    const ysAll = cfg.series.flatMap((s) => s.ys).concat(cfg.hline ? [cfg.hline.y] : []).filter((y) => y !== null && y >= 0);
    const s = svg('svg', { class: 'chart', width: W, height: H, 'data-chart': cfg.name });
    if (!xsAll.length || !ysAll.length) return s;
    const logX = Math.min(...xsAll) > 0 && Math.max(...xsAll) / Math.min(...xsAll) >= 8;
    const fx = logX ? Math.log2 : (x) => x;
    const x0 = fx(Math.min(...xsAll)), x1 = fx(Math.max(...xsAll));
    const y1 = Math.max(...ysAll) * 1.05 || 1;
    const px = (x) => L + (x1 === x0 ? 0.5 : (fx(x) - x0) / (x1 - x0)) * (W - L - R);
    const py = (y) => T + (1 - y / y1) * (H - T - B);
    s.appendChild(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
    s.appendChild(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
    for (let i = 0; i <= 4; i++) {
      const y = (y1 * i) / 4;
      s.appendChild(svg('text', { x: L - 6, y: py(y) + 4, 'text-anchor': 'end', class: 'tick' }, cfg.fmtY(y)));
    }
    const ticks = [...new Set(cfg.series.flatMap((se) => se.xs))].sort((a, b) => a - b);
    for (const x of ticks) s.appendChild(svg('text', { x: px(x), y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, x));
    s.appendChild(svg('text', { x: (W + L) / 2, y: H - 4, 'text-anchor': 'middle', class: 'lbl' }, cfg.xLabel));
    if (cfg.hline) {
      s.appendChild(svg('line', { x1: L, x2: W - R, y1: py(cfg.hline.y), y2: py(cfg.hline.y), class: 'limit' }));
      s.appendChild(svg('text', { x: W - R - 4, y: py(cfg.hline.y) - 4, 'text-anchor': 'end', class: 'limit-lbl' }, cfg.hline.label));
    }
    for (const v of cfg.vlines || []) {
      s.appendChild(svg('line', { x1: px(v.x), x2: px(v.x), y1: T, y2: H - B, class: 'oom', stroke: v.color }));
      s.appendChild(svg('text', { x: px(v.x) + 4, y: T + 12, class: 'limit-lbl', fill: v.color }, v.label));
    }
    cfg.series.forEach((se) => {
      const pts = se.xs.map((x, i) => [x, se.ys[i]]).filter((p) => p[1] !== null && p[1] >= 0);
      s.appendChild(svg('polyline', { points: pts.map((p) => px(p[0]) + ',' + py(p[1])).join(' '), fill: 'none', stroke: se.color, 'stroke-width': 2 }));
      for (const p of pts) {
        const c = s.appendChild(svg('circle', { cx: px(p[0]), cy: py(p[1]), r: 3.5, fill: se.color }));
        hoverable(c, () => [se.name, cfg.xLabel + ' = ' + p[0], cfg.fmtY(p[1])]);
      }
    });
    const lg = el('div', { class: 'legend' });
    for (const se of cfg.series) {
      const item = lg.appendChild(el('span', { class: 'legend-item' }));
      item.appendChild(el('span', { class: 'swatch', style: 'background:' + se.color }));
      item.appendChild(document.createTextNode(se.name));
    }
    const wrap = el('div');
    wrap.appendChild(s);
    wrap.appendChild(lg);
    return wrap;
  };

  // --- sections -----------------------------------------------------------------------------
  const summarySection = (run) => {
    const sm = run.summary;
    const s = section('summary', 'Summary', [run.device, run.arch].filter((x) => x).join(' \u00b7 ') || 'device unknown');
    const kpis = s.appendChild(el('div', { class: 'kpis' }));
    const kpi = (label, value) => {
      const k = kpis.appendChild(el('div', { class: 'kpi' }));
      k.appendChild(el('div', { class: 'kpi-v' }, value));
      k.appendChild(el('div', { class: 'kpi-l' }, label));
    };
    // No call with a recorded device time: the time shares are unknown, not 0% (device_time_unknown).
    const allUnknown = sm.time_unknown;
    kpi('attention calls', sm.calls);
    kpi('fused calls', sm.fused_calls + ' / ' + sm.calls);
    kpi('fused share of attention time', allUnknown ? 'unknown' : pct(sm.fused_time_fraction));
    kpi(sm.has_gpu ? 'attention device time' : 'attention CPU time', allUnknown ? 'unknown' : fmtUs(sm.attention_us));
    if (sm.unknown_time_calls > 0) kpi('calls with unknown device time (not in the times)', sm.unknown_time_calls + ' / ' + sm.calls);
    if (sm.has_gpu) kpi('attention share of GPU time', allUnknown ? 'unknown' : pct(sm.attention_share));
    kpi('peak memory', fmtBytes(sm.peak_bytes));
    if (run.files.length) s.appendChild(el('p', { class: 'files' }, 'sources: ' + run.files.join(', ')));
    for (const a of run.assumptions) s.appendChild(el('p', { class: 'note' }, 'assumed: ' + a));
    for (const m of run.missing) s.appendChild(el('p', { class: 'note' }, 'missing: ' + m));
    return s;
  };

  const callLines = (run, id) => {
    const c = run.calls.find((x) => x.id === id);
    if (!c) return [];
    const lines = ['call ' + c.id + ': ' + c.backend + (c.library ? ' (' + c.library + ')' : '') + ' ' + c.direction,
                   '  ' + c.shape + ' \u00b7 ' + (c.unknown ? 'device time unknown' : fmtUs(c.us)) + (c.tflops > 0 ? ' \u00b7 ' + (c.tflops_upper_bound ? '\u2264 ' : '') + c.tflops.toFixed(1) + ' TFLOP/s' : '')];
    if (c.backend_op || c.op) lines.push('  op: ' + (c.backend_op || c.op));
    for (const w of c.why) lines.push('  ' + w);
    return lines;
  };

  const cellLines = (run, row, cell) => {
    const lines = ['L' + row.layer + ' ' + COMPONENT_LABEL[cell.component] + (row.module ? '  ' + row.module : ''),
                   cell.cls === 'absent' ? 'no kernel in this component'
                     : cell.cls === 'unknown' ? 'device time unknown: the kernels were not recorded' : cell.cls + ' \u00b7 ' + fmtUs(cell.us)];
    for (const k of cell.kernels) lines.push('  ' + k.name + '  \u00d7' + k.count + '  ' + fmtUs(k.us));
    const ids = cell.calls.length ? cell.calls : row.cells.flatMap((c) => c.calls).filter((v, i, a) => a.indexOf(v) === i);
    for (const id of ids.slice(0, 4)) lines.push(...callLines(run, id));
    if (ids.length > 4) lines.push('  \u2026 ' + (ids.length - 4) + ' more calls');
    return lines;
  };

  const mapSection = (run) => {
    const s = section('activation-map', 'Activation map',
      'Layers \u00d7 attention components, coloured by the backend that ran. Hover for kernels, shapes and why; click to pin.');
    if (!run.map.length) {
      s.appendChild(el('p', { class: 'note' }, 'No attention calls were found in this trace.'));
      return s;
    }
    s.appendChild(legend());
    const comps = DATA.components;
    const cw = 92, ch = run.map.length > 40 ? 14 : 22, L = 260, T = 24;
    const m = svg('svg', { id: 'activation-map-svg', class: 'chart', width: L + comps.length * cw + 120, height: T + run.map.length * ch + 6 });
    comps.forEach((c, j) => m.appendChild(svg('text', { x: L + j * cw + cw / 2, y: 16, 'text-anchor': 'middle', class: 'lbl' }, COMPONENT_LABEL[c])));
    const detail = el('pre', { id: 'detail', class: 'detail' }, 'Click a cell to pin its details here.');
    run.map.forEach((row, i) => {
      const y = T + i * ch;
      const label = (row.layer < 0 ? 'L?' : 'L' + row.layer) + (row.module ? '  ' + shorten(row.module, 30) : '');
      m.appendChild(svg('text', { x: L - 8, y: y + ch * 0.7, 'text-anchor': 'end', class: 'lbl' }, label));
      row.cells.forEach((cell, j) => {
        const r = m.appendChild(svg('rect', { x: L + j * cw + 1, y: y + 1, width: cw - 2, height: ch - 2, rx: 3,
          fill: COLORS[cell.cls], class: 'cell', 'data-layer': row.layer, 'data-component': cell.component, 'data-class': cell.cls }));
        hoverable(r, () => cellLines(run, row, cell));
        r.addEventListener('click', () => { detail.textContent = cellLines(run, row, cell).join('\n'); });
        if (cell.us > 0 && ch >= 18) m.appendChild(svg('text', { x: L + j * cw + cw / 2, y: y + ch * 0.7, 'text-anchor': 'middle', class: 'cell-t' }, fmtUs(cell.us)));
      });
      m.appendChild(svg('text', { x: L + comps.length * cw + 8, y: y + ch * 0.7, class: 'val' }, (row.us === null ? 'unknown' : fmtUs(row.us)) + ' ' + row.backends.join('/')));
    });
    s.appendChild(m);
    s.appendChild(detail);
    return s;
  };

  const memorySection = (run) => {
    const s = section('memory', 'Memory per layer and per head', 'Peak memory allocated during each layer\u2019s attention; per-head split from the layer\u2019s heads.');
    s.appendChild(barChart(run.memory.map((r) => ({ label: 'L' + r.layer, value: r.peak_bytes, color: r.disproportionate ? COLORS.eager : SERIES[0],
      lines: ['L' + r.layer, 'peak ' + fmtBytes(r.peak_bytes), 'per query head ' + fmtBytes(r.bytes_per_q_head), 'per KV head ' + fmtBytes(r.bytes_per_kv_head)] })),
      fmtBytes, { name: 'memory' }));
    s.appendChild(table(['layer', 'peak', 'per query head', 'per KV head', 'disproportionate'],
      run.memory.map((r) => ['L' + r.layer, fmtBytes(r.peak_bytes), fmtBytes(r.bytes_per_q_head), fmtBytes(r.bytes_per_kv_head), r.disproportionate ? 'yes' : ''])));
    return s;
  };

  const adviceSection = (run) => {
    const s = section('advice', 'Backend advice', 'Measured with each backend forced; PyTorch\u2019s own pick vs the fastest.');
    s.appendChild(table(['shape', 'PyTorch picked', 'fastest', 'gain', 'code'],
      run.advice.map((r) => [r.shape, r.heuristic, r.fastest, r.gain > 0 ? r.gain.toFixed(2) + '\u00d7' : '', el('code', null, r.code)])));
    return s;
  };

  const verificationSection = (run) => {
    const v = run.verification;
    const s = section('verification', 'Verified fixes', v.line);
    s.appendChild(table(v.columns, v.rows));
    return s;
  };

  const findingsSection = (run) => {
    const s = section('findings', 'Findings', run.findings.length ? 'Ranked by severity, with the fix.' : 'No findings.');
    const list = s.appendChild(el('ol', { class: 'findings' }));
    for (const f of run.findings) {
      const li = list.appendChild(el('li', { class: 'finding sev-' + f.severity.replace(/[^a-z]/g, '') }));
      li.appendChild(el('span', { class: 'sev' }, f.severity));
      li.appendChild(el('strong', null, f.title));
      if (f.gain > 0) li.appendChild(el('span', { class: 'gain' }, '~' + f.gain.toFixed(1) + '\u00d7'));
      li.appendChild(el('p', null, f.detail));
      if (f.verified) li.appendChild(el('p', { class: 'verified verdict-' + f.verdict.replace(/[^a-z_]/g, '') }, f.verified));
      const meta = [f.rule ? 'rule ' + f.rule : '', f.layers.length ? 'layers ' + f.layers.join(', ') : ''].filter((x) => x).join(' \u00b7 ');
      if (meta) li.appendChild(el('p', { class: 'note' }, meta));
    }
    return s;
  };

  // --- multi-run ------------------------------------------------------------------------------
  const runsSection = (cmp, onPick) => {
    const s = section('runs', 'Runs', 'Several Reports side by side; the first is the baseline. Pick a run to show its details below.');
    const ratioText = (x) => (x === null ? 'n/a' : x.toFixed(2) + '\u00d7');
    const tabs = s.appendChild(el('div', { class: 'tabs', role: 'tablist' }));
    cmp.runs.forEach((r, i) => {
      const b = tabs.appendChild(el('button', { class: i === 0 ? 'tab active' : 'tab', 'data-run': i, type: 'button' }, r.label));
      b.addEventListener('click', () => {
        for (const other of tabs.children) other.classList.remove('active');
        b.classList.add('active');
        onPick(i);
      });
    });
    s.appendChild(table(['run', 'calls', 'fused share', 'attention time', 'vs baseline', 'peak memory'],
      cmp.runs.map((r) => [r.label, String(r.calls), pct(r.fused_time_fraction), (r.time_unknown ? 'unknown' : fmtUs(r.attention_us)), ratioText(r.ratio), fmtBytes(r.peak_bytes)])));
    s.appendChild(lineChart({ name: 'runs-layers', xLabel: 'layer', fmtY: fmtUs,
      series: cmp.runs.map((r, i) => ({ name: r.label, xs: r.layers.map((l) => l.layer), ys: r.layers.map((l) => l.us), color: SERIES[i % SERIES.length] })) }));
    const reg = section('regressions', 'Per-layer comparison', 'Attention time per layer against the baseline run; a backend class change is marked.');
    const rows = cmp.layers.map((layer, li) => {
      const cells = ['L' + layer];
      cmp.runs.forEach((r, i) => {
        const l = r.layers[li];
        const td = el('span', { class: l.changed ? 'changed ' + (l.better ? 'better' : 'worse') : '' },
          (l.unknown ? 'unknown' : fmtUs(l.us)) + (i > 0 ? ' (' + ratioText(l.ratio) + ')' : '') + (l.cls ? ' ' + l.cls : ''));
        cells.push(td);
      });
      return cells;
    });
    reg.appendChild(table(['layer', ...cmp.runs.map((r) => r.label)], rows));
    return [s, reg];
  };

)attnprof_js";

}  // namespace attnprof::render

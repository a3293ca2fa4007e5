// The dashboard sections drawn as hand-written SVG charts (model graph, roofline, scaling,
// heads, what-if, diff) and the page layout. Spliced into the script of html_assets.cpp, inside
// the same function, so they share its helpers (el, svg, section, hoverable, fmt*); like it,
// they put strings on the page only with textContent and setAttribute.
#include "render/html_assets.h"

namespace attnprof::render {

const char* const kDashboardSectionsJs = R"attnprof_js(
  // --- shared chart pieces -------------------------------------------------------------------
  const why = (s, text) => { s.appendChild(el('p', { class: 'note why' }, text)); return s; };
  const fmtTflops = (t) => (t >= 100 ? t.toFixed(0) : t >= 1 ? t.toFixed(1) : t.toPrecision(2)) + ' TFLOP/s';
  const fmtCount = (x) => (x >= 1e15 ? (x / 1e15).toFixed(2) + ' P' : x >= 1e12 ? (x / 1e12).toFixed(2) + ' T'
    : x >= 1e9 ? (x / 1e9).toFixed(2) + ' G' : x >= 1e6 ? (x / 1e6).toFixed(2) + ' M' : x.toFixed(0) + ' ');
  const legendOf = (items) => {
    const lg = el('div', { class: 'legend' });
    for (const [color, label, dashed] of items) {
      const item = lg.appendChild(el('span', { class: 'legend-item' }));
      item.appendChild(el('span', { class: 'swatch' + (dashed ? ' dashed' : ''), style: 'background:' + color }));
      item.appendChild(document.createTextNode(label));
    }
    return lg;
  };
  const decades = (lo, hi) => {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(Math.pow(10, e));
    return out;
  };

  // An x-y chart with a log or linear x axis and a linear or log y axis. cfg: name, xRange,
  // yRange, logX, logY, xTicks, fmtX, fmtY, xLabel, yLabel. Returns {root, px, py, add}.
  const xyChart = (cfg) => {
    const W = 760, H = 320, L = 86, R = 24, T = 18, B = 44;
    const root = svg('svg', { class: 'chart', width: W, height: H, 'data-chart': cfg.name });
    const [x0, x1] = cfg.xRange, [y0, y1] = cfg.yRange;
    const fx = cfg.logX ? Math.log10 : (v) => v, fy = cfg.logY ? Math.log10 : (v) => v;
    const span = (a, b) => (b === a ? 1 : b - a);
    const px = (x) => L + ((fx(x) - fx(x0)) / span(fx(x0), fx(x1))) * (W - L - R);
    const py = (y) => T + (1 - (fy(y) - fy(y0)) / span(fy(y0), fy(y1))) * (H - T - B);
    root.appendChild(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
    root.appendChild(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
    const yTicks = cfg.logY ? decades(y0, y1).filter((y) => y >= y0 && y <= y1) : [0, 1, 2, 3, 4].map((i) => y0 + ((y1 - y0) * i) / 4);
    for (const y of yTicks) {
      root.appendChild(svg('line', { x1: L, x2: W - R, y1: py(y), y2: py(y), class: 'grid' }));
      root.appendChild(svg('text', { x: L - 6, y: py(y) + 4, 'text-anchor': 'end', class: 'tick' }, cfg.fmtY(y)));
    }
    for (const x of cfg.xTicks) {
      root.appendChild(svg('line', { x1: px(x), x2: px(x), y1: T, y2: H - B, class: 'grid' }));
      root.appendChild(svg('text', { x: px(x), y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, cfg.fmtX(x)));
    }
    root.appendChild(svg('text', { x: (W + L) / 2, y: H - 6, 'text-anchor': 'middle', class: 'lbl' }, cfg.xLabel));
    root.appendChild(svg('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'lbl',
      transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')' }, cfg.yLabel));
    const inside = (x, y) => x >= x0 && x <= x1 && y >= y0 && y <= y1;
    const line = (pts, attrs) => root.appendChild(svg('polyline', Object.assign({
      points: pts.filter((p) => inside(p[0], p[1])).map((p) => px(p[0]).toFixed(1) + ',' + py(p[1]).toFixed(1)).join(' '),
      fill: 'none' }, attrs)));
    const vline = (x, label, attrs) => {
      if (x < x0 || x > x1) return;
      root.appendChild(svg('line', Object.assign({ x1: px(x), x2: px(x), y1: T, y2: H - B }, attrs)));
      const right = px(x) > W * 0.7;  // labels near the right edge grow leftwards
      root.appendChild(svg('text', { x: px(x) + (right ? -4 : 4), y: T + 12 + (attrs.row || 0) * 13, 'text-anchor': right ? 'end' : 'start',
        class: 'mark-lbl', fill: attrs.stroke || '' }, label));
    };
    const hline = (y, label, attrs) => {
      if (y < y0 || y > y1) return;
      root.appendChild(svg('line', Object.assign({ x1: L, x2: W - R, y1: py(y), y2: py(y) }, attrs)));
      root.appendChild(svg('text', { x: W - R - 4, y: py(y) - 4, 'text-anchor': 'end', class: 'limit-lbl' }, label));
    };
    const point = (x, y, attrs, lines) => {
      if (!inside(x, y)) return null;
      const c = root.appendChild(svg('circle', Object.assign({ cx: px(x), cy: py(y), r: 4 }, attrs)));
      hoverable(c, () => lines);
      return c;
    };
    return { root, px, py, line, vline, hline, point };
  };
  const rangeOf = (values, pad) => {
    const v = values.filter((x) => x !== null && x !== undefined && isFinite(x));
    return [Math.min(...v) / pad, Math.max(...v) * pad];
  };
  const pow2Ticks = (lo, hi) => {
    const out = [];
    for (let x = Math.pow(2, Math.ceil(Math.log2(lo))); x <= hi; x *= 2) out.push(x);
    return out.length > 9 ? out.filter((_, i) => i % 2 === 0) : out;
  };

  // --- model graph: a collapsible module tree --------------------------------------------------
  const treeSection = (run) => {
    const s = section('model-graph', 'Model graph',
      'The module tree of the attention calls. Attention modules are coloured by backend; bars and labels give each module\u2019s share of attention time. Click \u25be/\u25b8 to fold a branch, click a module for its kernels, shapes and why.');
    if (!run.tree.length)
      return why(s, 'The trace has no module paths (profile with with_stack=True and with_modules=True, or use attnprof.profile).');
    const detail = el('pre', { id: 'tree-detail', class: 'detail' }, 'Click an attention module to see its calls here.');
    const folded = new Set();
    const hasChildren = (i) => i + 1 < run.tree.length && run.tree[i + 1].path.startsWith(run.tree[i].path + '.');
    const hidden = (n) => [...folded].some((p) => n.path.startsWith(p + '.'));
    const holder = el('div');
    const moduleLines = (n) => {
      const lines = [n.path, (n.us === null ? 'device time unknown' : fmtUs(n.us) + ', ' + pct(n.share) + ' of attention time') +
        (n.attention ? ' \u00b7 ' + n.calls + ' call(s) \u00b7 ' + n.cls : '')];
      for (const id of n.call_ids.slice(0, 6)) {
        lines.push(...callLines(run, id));
        const call = run.calls.find((c) => c.id === id);
        for (const k of call ? call.kernels : []) lines.push('    kernel [' + k.component + '] ' + k.name + '  ' + fmtUs(k.us));
      }
      if (n.call_ids.length > 6) lines.push('  \u2026 ' + (n.call_ids.length - 6) + ' more calls');
      return lines;
    };
    const draw = () => {
      const shown = run.tree.map((n, i) => [n, i]).filter(([n]) => !hidden(n));
      const rowH = 22, barX = 560, barW = 180;
      const t = svg('svg', { id: 'model-graph-svg', class: 'chart', width: 900, height: shown.length * rowH + 8 });
      const yOf = new Map();
      shown.forEach(([n, i], row) => {
        const x = 10 + n.depth * 18, y = row * rowH + 4;
        yOf.set(n.path, y);
        const parent = n.path.includes('.') ? n.path.slice(0, n.path.lastIndexOf('.')) : null;
        if (parent !== null && yOf.has(parent)) {
          const py = yOf.get(parent) + 16;
          t.appendChild(svg('polyline', { points: (x - 10) + ',' + py + ' ' + (x - 10) + ',' + (y + 9) + ' ' + (x - 2) + ',' + (y + 9), fill: 'none', class: 'axis' }));
        }
        const g = t.appendChild(svg('g', { class: n.attention ? 'node attention' : 'node', 'data-path': n.path, 'data-class': n.cls,
          'data-share': n.share === null ? 'unknown' : n.share }));
        if (hasChildren(i)) {
          const tg = g.appendChild(svg('text', { x: x - 1, y: y + 13, class: 'toggle', 'data-toggle': n.path }, folded.has(n.path) ? '\u25b8' : '\u25be'));
          tg.addEventListener('click', (ev) => { ev.stopPropagation(); folded.has(n.path) ? folded.delete(n.path) : folded.add(n.path); draw(); });
        }
        const boxX = x + 12;
        const fill = n.attention ? COLORS[n.cls] : '#f2f4f7';
        g.appendChild(svg('rect', { x: boxX, y, width: Math.min(barX - boxX - 8, 10 + 7 * n.name.length), height: 17, rx: 4, fill,
          stroke: n.attention ? 'none' : '#d0d5dd', class: 'box' }));
        g.appendChild(svg('text', { x: boxX + 5, y: y + 13, class: n.attention ? 'lbl strong on-color' : 'lbl' }, n.name));
        if (n.share !== null) g.appendChild(svg('rect', { x: barX, y: y + 3, width: Math.max(1, barW * n.share), height: 11, fill: COLORS[n.cls] || COLORS[''], class: 'share' }));
        g.appendChild(svg('text', { x: barX + barW + 8, y: y + 13, class: 'val' },
          (n.share === null ? 'time unknown' : pct(n.share) + ' \u00b7 ' + fmtUs(n.us)) + (n.attention ? ' \u00b7 ' + n.cls : '')));
        hoverable(g, () => moduleLines(n).slice(0, 2));
        g.addEventListener('click', () => { detail.textContent = moduleLines(n).join('\n'); });
      });
      holder.replaceChildren(t);
    };
    draw();
    s.appendChild(legend());
    s.appendChild(holder);
    s.appendChild(detail);
    return s;
  };

  // --- roofline: every call on the GPU's roofline (log-log) ----------------------------------
  const rooflineSection = (run) => {
    const s = section('roofline', 'Roofline', 'Executed TFLOP/s of each attention call (masked-out tiles a kernel still runs included) against its arithmetic intensity (executed FLOPs per byte of minimum HBM traffic), on the roofline of the GPU; the tooltip gives the useful rate and the bound verdict.');
    const rf = run.roofline_calls;
    if (!rf) return why(s, run.why.roofline);
    const ys = rf.points.map((p) => p.tflops).concat(rf.roofs.flatMap((r) => r.points.map((p) => p[1])));
    const [ylo, yhi] = rangeOf(ys, 2);
    const c = xyChart({ name: 'roofline', xRange: rf.x_range, yRange: [Math.pow(10, Math.floor(Math.log10(ylo))), Math.pow(10, Math.ceil(Math.log10(yhi)))],
      logX: true, logY: true, xTicks: decades(rf.x_range[0], rf.x_range[1]), fmtX: (x) => String(x), fmtY: (y) => String(y),
      xLabel: 'arithmetic intensity (FLOP/byte)', yLabel: 'TFLOP/s' });
    rf.roofs.forEach((r, i) => {
      c.line(r.points, { stroke: '#1d2330', 'stroke-width': 1.5, class: 'roof', 'data-dtype': r.dtype, 'data-peak': r.peak_tflops });
      c.root.appendChild(svg('text', { x: c.px(r.points[2][0]) - 6, y: c.py(r.peak_tflops) - 5 - 12 * i, 'text-anchor': 'end', class: 'lbl roof-lbl' },
        r.dtype + ' peak ' + fmtTflops(r.peak_tflops) + ' \u00b7 ridge ' + r.ridge.toFixed(0) + ' FLOP/B'));
    });
    c.root.appendChild(svg('text', { x: c.px(rf.x_range[0]) + 8, y: c.py(rf.roofs.length ? rf.roofs[0].points[0][1] : ylo) - 8, class: 'lbl bw-lbl' },
      'HBM ' + (rf.bandwidth_gbs / 1000).toFixed(2) + ' TB/s'));
    for (const p of rf.points)
      c.point(p.intensity, p.tflops, { fill: COLORS[p.cls], class: 'call', 'data-call': p.id, 'data-layer': p.layer,
        'data-intensity': p.intensity, 'data-tflops': p.tflops },
        ['call ' + p.id + ' \u00b7 L' + p.layer + ' \u00b7 ' + p.backend + ' ' + p.dtype,
         'executed ' + (p.upper_bound ? '\u2264 ' : '') + fmtTflops(p.tflops) + ' \u00b7 useful ' + (p.upper_bound ? '\u2264 ' : '') + fmtTflops(p.useful_tflops) + ' (' + pct(p.peak_fraction) + ' of peak)',
         p.intensity.toFixed(1) + ' FLOP/byte \u00b7 ' + (p.bound ? p.bound + '-bound \u00b7 ' : '') + fmtUs(p.us)]);
    s.appendChild(c.root);
    s.appendChild(el('p', { class: 'note' }, rf.gpu + ': ' + rf.points.length + ' call(s); ' + rf.ceilings + ' (docs/cost.md).'));
    return s;
  };

  // --- spread: time, TFLOP/s and bandwidth per shape group ------------------------------------
  const spreadSection = (run) => {
    const s = section('spread', 'Spread per shape group', 'Calls of one backend, library, shape, mask, direction and phase: how far their device time, useful TFLOP/s and bandwidth scatter, and where the slowest ran.');
    const sp = run.spread;
    if (!sp) return why(s, run.why.spread);
    s.appendChild(table(sp.header, sp.rows));
    for (const n of sp.notes) s.appendChild(el('p', { class: 'note' }, n));
    return s;
  };

  // --- scaling: time(S) and memory(S), fits, S^2 dominance, budget, OOM ------------------------
  const scalingSection = (run) => {
    const s = section('scaling', run.scaling && run.scaling.predicted ? 'Scaling with sequence length (predicted)' : 'Scaling with sequence length',
      'Dots are measured (or predicted) points, dashed lines the fitted c0 + c1\u00b7S + c2\u00b7S\u00b2; dotted markers show where the S\u00b2 term takes over; the red lines are the memory budget and the predicted OOM length.');
    const sc = run.scaling;
    if (!sc) return why(s, run.why.scaling);
    if (sc.predicted) {
      s.appendChild(el('p', { class: 'sub' }, 'Predicted from the model config' + (run.device ? ' for ' + run.device : '') + '; nothing was run.'));
      for (const a of run.assumptions) s.appendChild(el('p', { class: 'note' }, 'assumed: ' + a));
    }
    const color = (i) => SERIES[i % SERIES.length];
    const chart = (key, fitKey, fmt, yLabel, name, extra) => {
      // Marks far beyond the measured lengths would squash the points: they are listed instead.
      const near = (se, x) => x > 0 && x >= Math.min(...se.lengths) / 16 && x <= Math.max(...se.lengths) * 16;
      const marks = (se) => [se.oom_tokens, se[fitKey] ? se[fitKey].quadratic_from : -1].filter((x) => near(se, x));
      const far = sc.series.filter((se) => extra && extra.oom && se.oom_tokens > 0 && !near(se, se.oom_tokens))
        .map((se) => se.backend + ' OOM above S = ' + se.oom_tokens + ' (off the chart)');
      const lengths = sc.series.flatMap((se) => se.lengths.concat(marks(se)));
      const [xlo, xhi] = rangeOf(lengths, 1.15);
      const ys = sc.series.flatMap((se) => se[key].concat(se[fitKey] ? se[fitKey].curve.map((p) => p[1]) : []))
        .concat(extra && extra.y > 0 ? [extra.y] : []).filter((y) => y > 0);
      if (!ys.length) return null;
      const c = xyChart({ name, xRange: [xlo, xhi], yRange: [0, Math.max(...ys) * 1.08], logX: true, logY: false,
        xTicks: pow2Ticks(xlo, xhi), fmtX: String, fmtY: fmt, xLabel: 'sequence length S (tokens)', yLabel });
      if (extra && extra.y > 0) c.hline(extra.y, extra.label, { class: 'limit budget', 'data-bytes': extra.y });
      sc.series.forEach((se, i) => {
        const fit = se[fitKey];
        if (fit && fit.curve.length) c.line(fit.curve, { stroke: color(i), 'stroke-width': 1.5, 'stroke-dasharray': '6 4', class: 'fit', 'data-backend': se.backend });
        if (fit && fit.quadratic_from > 0) c.vline(fit.quadratic_from, se.backend + ': S\u00b2 dominates from ' + fit.quadratic_from,
          { stroke: color(i), 'stroke-dasharray': '2 3', class: 'quad', 'data-backend': se.backend, 'data-s': fit.quadratic_from, row: i });
        se.lengths.forEach((S, j) => {
          const y = se[key][j];
          if (y === null || y === undefined || y < 0) return;
          c.point(S, y, { fill: color(i), class: 'measured', 'data-backend': se.backend, 'data-s': S, 'data-value': y },
            [se.backend + ' \u00b7 S = ' + S, fmt(y)]);
        });
        if (extra && extra.oom && se.oom_tokens > 0)
          c.vline(se.oom_tokens, se.backend + ' OOM above S = ' + se.oom_tokens, { stroke: COLORS.eager, class: 'oom', 'data-backend': se.backend, 'data-s': se.oom_tokens, row: sc.series.length + i });
      });
      const wrap = el('div');
      wrap.appendChild(c.root);
      wrap.appendChild(legendOf(sc.series.map((se, i) => [color(i), se.backend + ' (' + (se[fitKey] && se[fitKey].growth ? se[fitKey].growth : 'no fit') + ')'])));
      for (const line of far) wrap.appendChild(el('p', { class: 'note far-mark' }, line));
      return wrap;
    };
    const hasTime = sc.series.some((se) => se.time_us.some((t) => t > 0));
    if (hasTime) s.appendChild(chart('time_us', 'time_fit', fmtUs, 'attention time', 'scaling-time'));
    if (sc.series.some((se) => se.forward_pass_time_us.length))
      s.appendChild(chart('forward_pass_time_us', null, fmtUs, 'whole forward pass (not only attention)', 'scaling-pass'));
    const budget = sc.budget_for_pass_bytes > 0 ? { y: sc.budget_for_pass_bytes, oom: true,
      label: 'budget ' + fmtBytes(sc.budget_bytes) + (sc.baseline_bytes > 0 ? ' less ' + fmtBytes(sc.baseline_bytes) + ' before the pass' : '') + ' (' + sc.budget_source + ')' } : { oom: true };
    const mem = chart('peak_bytes', 'memory_fit', fmtBytes, 'peak memory of the pass', 'scaling-memory', budget);
    if (mem) s.appendChild(mem);
    s.appendChild(table(['backend', 'time growth', 'memory growth', 'S\u00b2 dominates (memory)', 'largest S that fits', 'how'],
      sc.series.map((se) => [se.backend, se.time_fit ? se.time_fit.growth : '', se.memory_fit ? se.memory_fit.growth : '',
        se.memory_fit && se.memory_fit.quadratic_from > 0 ? 'S \u2265 ' + se.memory_fit.quadratic_from : 'never',
        se.oom_tokens > 0 ? String(se.oom_tokens) + (se.oom_low > 0 ? ' (' + se.oom_low + '..' + se.oom_high + ')' : '') : 'n/a',
        [se.oom_method, se.oom_note, se.measured_oom_tokens > 0 ? 'measured: S \u2264 ' + se.measured_oom_tokens + ' ran' : se.measured_oom_note].filter((x) => x).join('; ')])));
    return s;
  };

  // --- heads: layer x head heat maps, candidates, sliding-window waste --------------------------
  const ACTION_MARK = { prune: 'P', streaming_kv: 'S', block_sparse: 'B' };
  const headHeatmap = (h, key, title) => {
    const cw = Math.max(12, Math.min(28, Math.floor(640 / Math.max(1, h.heads)))), ch = 16, L = 50, T = 20;
    const s = svg('svg', { class: 'chart heatmap', width: L + h.heads * cw + 16, height: T + h.layers * ch + 8, 'data-chart': 'heads-' + key });
    s.appendChild(svg('text', { x: L, y: 13, class: 'lbl' }, title));
    for (let l = 0; l < h.layers; l++) s.appendChild(svg('text', { x: L - 6, y: T + l * ch + 12, 'text-anchor': 'end', class: 'tick' }, 'L' + l));
    for (const c of h.cells) {
      const raw = c[key];
      const v = raw === null || raw === undefined ? null : Math.max(0, Math.min(1, raw));
      const x = L + c.head * cw, y = T + c.layer * ch;
      const r = s.appendChild(svg('rect', { x, y, width: cw - 1, height: ch - 1, class: 'heat' + (c.candidates.length ? ' candidate' : ''),
        fill: v === null ? COLORS.absent : 'hsl(215,70%,' + (95 - 60 * v) + '%)', 'data-layer': c.layer, 'data-head': c.head,
        'data-value': v === null ? '' : raw }));
      if (c.candidates.length) {
        r.setAttribute('stroke', '#d64541');
        r.setAttribute('stroke-width', 2);
        s.appendChild(svg('text', { x: x + cw / 2, y: y + 12, 'text-anchor': 'middle', class: 'cell-mark' }, c.candidates.map((a) => ACTION_MARK[a] || '?').join('')));
      }
      hoverable(r, () => ['L' + c.layer + ' head ' + c.head + ' (KV head ' + c.kv_head + ') \u00b7 ' + (c.kind || 'kind unknown'),
        title + ': ' + (v === null ? 'n/a' : raw.toFixed(3)), 'entropy ' + c.entropy.toFixed(3) + ' \u00b7 sink mass ' + c.sink_mass.toFixed(3) +
        (c.locality !== null ? ' \u00b7 local mass ' + c.locality.toFixed(3) : ''), c.candidates.length ? 'candidate: ' + c.candidates.join(', ') : '']);
    }
    return s;
  };
  const headsSection = (run) => {
    const s = section('heads', 'Heads: utilisation and sparsity', 'Layer \u00d7 head maps per statistic (darker = higher); outlined cells are candidates (P prune, S streaming KV cache, B block-sparse).');
    const h = run.heads;
    if (!h) return why(s, run.why.heads);
    if (h.untrained) s.appendChild(el('p', { class: 'note warn' }, 'weights look untrained: ' + h.untrained));
    if (h.note) s.appendChild(el('p', { class: 'note' }, h.note));
    if (h.cells.length) {
      const maps = s.appendChild(el('div', { class: 'maps' }));
      maps.appendChild(headHeatmap(h, 'entropy', 'normalised entropy'));
      maps.appendChild(headHeatmap(h, 'sink_mass', 'sink mass (first ' + h.sink_tokens + ' tokens)'));
      if (h.locality_window > 0) maps.appendChild(headHeatmap(h, 'locality', 'locality: mass within ' + h.locality_window + ' tokens'));
      maps.appendChild(headHeatmap(h, 'coverage90', 'blocks holding 90% of mass (block ' + h.block_size + ')'));
    } else {
      why(s, 'No per-head statistics: they need Q/K (attnprof heads FILE.safetensors).');
    }
    if (h.candidates.length)
      s.appendChild(table(['layer', 'head', 'action', 'why', 'KV bytes/token freed', 'speed-up'],
        h.candidates.map((c) => ['L' + c.layer, String(c.head), c.action, c.reason, c.kv_bytes_per_token > 0 ? fmtBytes(c.kv_bytes_per_token) : '',
          c.expected_speedup > 0 ? c.expected_speedup.toFixed(2) + '\u00d7' : ''])));
    else if (h.cells.length) s.appendChild(el('p', { class: 'note' }, 'No head is a pruning, streaming-KV or block-sparse candidate.'));
    if (h.window.length) {
      s.appendChild(el('h3', null, 'Sliding-window waste per layer'));
      s.appendChild(barChart(h.window.map((w) => ({ label: 'L' + w.layer + ' ' + w.backend, value: Math.max(0, w.wasted),
        color: w.skips ? COLORS.fused : COLORS.eager, lines: ['L' + w.layer + ' call ' + w.call_id + ' \u00b7 ' + w.backend + ' \u00b7 mask ' + w.mask + ' (' + w.mask_kind + ')',
          'masked share ' + (w.masked_fraction >= 0 ? pct(w.masked_fraction) : 'unknown (\u2265 ' + pct(Math.max(0, w.masked_fraction_min)) + ')'),
          'FLOPs spent on masked scores ' + pct(w.wasted), w.verdict] })), pct, { name: 'window-waste', max: 1 }));
      s.appendChild(table(['layer', 'backend', 'mask', 'kind', 'window', 'masked', 'wasted FLOPs', 'verdict'],
        h.window.map((w) => ['L' + w.layer, w.backend, w.mask, w.mask_kind, w.window > 0 ? w.window + ' (' + w.window_source + ')' : 'unknown',
          w.masked_fraction >= 0 ? pct(w.masked_fraction) : 'unknown', pct(w.wasted), w.verdict])));
    }
    for (const n of h.notes) s.appendChild(el('p', { class: 'note' }, n));
    return s;
  };

  // --- steps and phases: how much of each engine step is attention, prefill against decode ----
  const stepsSection = (run) => {
    const s = section('steps', 'Steps and phases', 'Each forward of the model or the serving engine: its phase, attention time against the GPU time of the step, and the time per phase.');
    const st = run.steps;
    if (!st) return why(s, run.why.steps);
    s.appendChild(el('p', { class: 'sub' }, st.line + (st.scope ? ' \u00b7 ' + st.scope : '')));
    if (st.bars.length > 1)
      s.appendChild(barChart(st.bars.map((b) => ({ label: 'step ' + b.index + (b.phase ? ' ' + b.phase : ''), value: b.attention_us,
        color: b.phase === 'decode' ? SERIES[1] : b.phase === 'prefill' ? SERIES[0] : COLORS.fused,
        lines: ['step ' + b.index + (b.phase ? ' (' + b.phase + ')' : ''), 'attention ' + b.attention_us.toFixed(1) + ' us',
          'overhead ' + b.overhead_us.toFixed(1) + ' us', 'GPU time of the step ' + b.gpu_us.toFixed(1) + ' us'] })),
        (v) => v.toFixed(1) + ' us', { name: 'step-attention' }));
    if (st.rows.length > 1)
      s.appendChild(table(['step', 'marker', 'phase', 'tokens', 'calls', 'attention', 'overhead', 'GPU time', 'share'], st.rows));
    if (st.more > 0) s.appendChild(el('p', { class: 'note' }, '\u2026 ' + st.more + ' more steps (JSON Report: steps)'));
    if (st.phases.length)
      s.appendChild(table(['phase', 'steps', 'calls', 'time', 'share', 'useful TFLOP/s', 'backends', 'kernels'], st.phases));
    return s;
  };

  // --- what-if: the request-length distribution against the window ----------------------------
  const whatifSection = (run) => {
    const s = section('whatif', 'What if: sliding window', 'Requests per length (powers of two) with the window marked, and attention FLOPs and KV cache under full vs sliding-window attention.');
    const w = run.whatif;
    if (!w) return why(s, run.why.whatif);
    s.appendChild(el('p', { class: 'sub' }, (w.model || 'model') + ' \u00b7 window ' + w.window + (w.global_tokens > 0 ? ' + ' + w.global_tokens + ' global tokens' : '') +
      ' \u00b7 ' + fmtCount(w.requests).trim() + ' requests, mean ' + w.mean_tokens.toFixed(0) + ' tokens \u00b7 ' + pct(w.covered_share) + ' fit in the window'));
    s.appendChild(barChart(w.histogram.map((b) => ({ label: b.from + '\u2013' + b.to, value: b.requests,
      color: b.within_window ? COLORS.fused : SERIES[0], lines: [b.from + '\u2013' + b.to + ' tokens: ' + b.requests + ' requests',
        b.within_window ? 'within the window: unchanged' : 'longer than the window: keys beyond it are dropped'] })),
      (v) => fmtCount(v).trim(), { name: 'whatif-lengths' }));
    s.appendChild(legendOf([[COLORS.fused, 'requests within the window'], [SERIES[0], 'requests longer than the window']]));
    s.appendChild(barChart([
      { label: 'FLOPs full', value: w.full_flops, color: SERIES[1], lines: ['attention FLOPs, full: ' + fmtCount(w.full_flops) + 'FLOP'] },
      { label: 'FLOPs window', value: w.window_flops, color: COLORS.fused, lines: ['attention FLOPs, window: ' + fmtCount(w.window_flops) + 'FLOP', 'saving ' + pct(w.flops_saving)] }],
      (v) => fmtCount(v) + 'FLOP', { name: 'whatif-flops' }));
    s.appendChild(barChart([
      { label: 'KV full', value: w.full_kv_bytes, color: SERIES[1], lines: ['KV cache summed over requests, full: ' + fmtBytes(w.full_kv_bytes)] },
      { label: 'KV window', value: w.window_kv_bytes, color: COLORS.fused, lines: ['KV cache, window: ' + fmtBytes(w.window_kv_bytes), 'saving ' + pct(w.memory_saving)] }],
      fmtBytes, { name: 'whatif-kv' }));
    s.appendChild(table(['', 'full attention', 'sliding window', 'saving'], [
      ['attention FLOPs (all requests)', fmtCount(w.full_flops) + 'FLOP', fmtCount(w.window_flops) + 'FLOP', pct(w.flops_saving)],
      ['KV cache (summed over requests)', fmtBytes(w.full_kv_bytes), fmtBytes(w.window_kv_bytes), pct(w.memory_saving)],
      ['KV cache of the longest request', fmtBytes(w.max_full_kv_bytes), fmtBytes(w.max_window_kv_bytes), '']]));
    return s;
  };

  // --- diff: per-layer backend and time change, regression causes ------------------------------
  const metricText = (m, fmt) => (m && m.known ? fmt(m.before) + ' \u2192 ' + fmt(m.after) + (m.before ? ' (' + (m.relative >= 0 ? '+' : '') + (100 * m.relative).toFixed(1) + '%)' : '') : 'unknown');
  // Two fleets rank by rank (diff_to_json "ranks"): the ranks the gate names or whose backend
  // changed, and the stragglers the candidate added.
  const diffRanks = (k) => {
    const box = el('div', { class: 'diff-ranks' });
    box.appendChild(el('h3', null, 'Ranks'));
    box.appendChild(el('p', { class: 'note' }, k.ranks_before + ' \u2192 ' + k.ranks_after + ' ranks analysed; fleet median ' +
      metricText(k.median_us, fmtUs) + (k.median_us.regression ? ' (regression)' : '')));
    const changesOf = (rank) => k.backend_changes.filter((c) => c.rank === rank).map((c) => c.layers_text + ': ' + c.before + ' \u2192 ' + c.after).join('; ');
    const rows = k.ranks.filter((r) => r.device_time_us.regression || changesOf(r.rank)).map((r) => {
      const worst = r.layers.find((l) => l.layer === r.worst_layer);
      return ['rank ' + r.rank, metricText(r.device_time_us, fmtUs), r.device_time_us.regression ? 'yes' : '',
        worst ? 'L' + worst.layer + ' ' + fmtUs(worst.before_us) + ' \u2192 ' + fmtUs(worst.after_us) : '', changesOf(r.rank)];
    });
    if (rows.length) box.appendChild(table(['rank', 'attention time', 'regression', 'most grown layer', 'backend changes'], rows));
    for (const st of k.new_stragglers)
      box.appendChild(el('p', { class: 'note' }, 'new straggler: rank ' + st.rank + (st.layer < 0 ? ' overall' : ' in L' + st.layer) + ' at ' + st.over_median.toFixed(2) + '\u00d7 the median'));
    return box;
  };
  const diffPair = (p, index) => {
    const s = section(index ? 'diff-' + index : 'diff', 'Diff' + (p.name ? ': ' + p.name : ''), p.baseline + ' \u2192 ' + p.candidate);
    s.appendChild(el('p', { class: 'verdict ' + (p.regression ? 'regression' : 'ok'), 'data-regression': p.regression },
      p.regression ? 'Regression' : 'No regression'));
    if (p.reasons.length) {
      const ul = s.appendChild(el('ul', { class: 'reasons' }));
      for (const r of p.reasons) ul.appendChild(el('li', null, r));
    }
    const pctOf = (v) => v.toFixed(1) + '%';
    s.appendChild(table(['metric', 'baseline \u2192 candidate', 'gated', 'regression'], [
      ['attention device time', metricText(p.attention_device_time_us, fmtUs), p.attention_device_time_us.gated ? 'yes' : '', p.attention_device_time_us.regression ? 'yes' : ''],
      ['fused share of time', metricText(p.fused_time_pct, pctOf), p.fused_time_pct.gated ? 'yes' : '', p.fused_time_pct.regression ? 'yes' : ''],
      ['TFLOP/s', metricText(p.tflops, (v) => v.toFixed(1)), p.tflops.gated ? 'yes' : '', p.tflops.regression ? 'yes' : ''],
      ['peak memory', metricText(p.peak_bytes, fmtBytes), p.peak_bytes.gated ? 'yes' : '', p.peak_bytes.regression ? 'yes' : '']]));
    if (p.ranks) s.appendChild(diffRanks(p.ranks));
    // Per-layer time, baseline and candidate side by side.
    const rowH = 18, L = 70, W = 760, barW = W - L - 200;
    const times = p.layers.flatMap((l) => [l.in_baseline ? l.device_time_us.before : 0, l.in_candidate ? l.device_time_us.after : 0]);
    const max = Math.max(1e-9, ...times);
    const c = svg('svg', { class: 'chart', width: W, height: p.layers.length * (2 * rowH + 6) + 8, 'data-chart': 'diff-layers' });
    p.layers.forEach((l, i) => {
      const y = i * (2 * rowH + 6) + 4;
      c.appendChild(svg('text', { x: L - 8, y: y + rowH + 2, 'text-anchor': 'end', class: 'lbl' }, 'L' + l.layer));
      [['before', l.in_baseline, l.backend_before, SERIES[6]], ['after', l.in_candidate, l.backend_after, l.backend_changed ? COLORS.eager : SERIES[0]]].forEach(([side, present, backend, color], k) => {
        // Without device-time samples on both sides (graph capture) the verdict holds no value: unknown, not 0.
        const timed = present && l.device_time_us.known;
        const v = l.device_time_us[side];
        const yy = y + k * rowH;
        const w = timed ? Math.max(1, (barW * v) / max) : 0;
        const shown = !present ? 'absent' : timed ? fmtUs(v) : 'time unknown';
        const bar = c.appendChild(svg('rect', { x: L, y: yy, width: w, height: rowH - 3, fill: color,
          class: 'bar diff-bar', 'data-layer': l.layer, 'data-side': side, 'data-us': timed ? v : '', 'data-backend': backend }));
        c.appendChild(svg('text', { x: L + w + 6, y: yy + 12, class: 'val' },
          shown + ' \u00b7 ' + (backend || '?') + (k === 1 && l.backend_changed ? '  (was ' + (l.backend_before || 'absent') + ')' : '')));
        hoverable(bar, () => ['L' + l.layer + ' ' + (l.module || ''), side + ': ' + (backend || 'absent') + ' \u00b7 ' + shown, ...l.input_changes, l.fallback_explanation || '']);
      });
    });
    s.appendChild(el('h3', null, 'Per layer'));
    s.appendChild(legendOf([[SERIES[6], 'baseline'], [SERIES[0], 'candidate, same backend'], [COLORS.eager, 'candidate, backend changed']]));
    s.appendChild(c);
    s.appendChild(table(['layer', 'module', 'backend', 'time', 'fused share', 'inputs changed'],
      p.layers.map((l) => ['L' + l.layer, l.module, el('span', { class: l.backend_changed ? 'changed worse' : '' }, (l.backend_before || 'absent') + ' \u2192 ' + (l.backend_after || 'absent')),
        metricText(l.device_time_us, fmtUs), metricText(l.fused_time_pct, pctOf), l.input_changes.join('; ')])));
    if (p.backend_changes.length) {
      s.appendChild(el('h3', null, 'Backend changes'));
      const ul = s.appendChild(el('ul', { class: 'changes' }));
      for (const b of p.backend_changes) ul.appendChild(el('li', null, b.layers_text + ': ' + b.before + ' \u2192 ' + b.after + (b.explanation ? ' \u2014 ' + b.explanation : '')));
    }
    const causes = [...p.causes.inputs.map((x) => 'input: ' + x), ...p.causes.environment.map((x) => 'environment: ' + x)];
    const code = p.causes.code;
    if (code) {
      if (code.note) causes.push('code: ' + code.note);
      for (const cm of code.commits) causes.push('commit ' + cm.hash.slice(0, 12) + ' ' + cm.subject + (cm.files.length ? ' (' + cm.files.join(', ') + ')' : ''));
    }
    s.appendChild(el('h3', null, 'What changed'));
    if (causes.length) {
      const ul = s.appendChild(el('ul', { class: 'causes' }));
      for (const x of causes) ul.appendChild(el('li', null, x));
    } else {
      s.appendChild(el('p', { class: 'note' }, 'No change of inputs, environment or code was recorded between the two runs.'));
    }
    for (const n of p.notes) s.appendChild(el('p', { class: 'note' }, n));
    return s;
  };
  const diffSections = () => {
    const d = DATA.diff;
    if (!d) return [why(section('diff', 'Diff'), DATA.diff_why)];
    if (!d.pairs.length) return [why(section('diff', 'Diff'), 'No pair of runs to compare' + (d.unmatched.length ? ': unmatched ' + d.unmatched.join(', ') : '.'))];
    const out = d.pairs.map(diffPair);
    if (d.unmatched.length) out.push(why(section('diff-unmatched', 'Unmatched files'), d.unmatched.join(', ')));
    return out;
  };

  // --- ranks: a fleet's ranks against each other (html_view.cpp ranks_view) --------------------
  // A layer's time over its median across ranks as a colour: blue below, pale at the median,
  // red from 1.5x (the scale is the page's; the ratios are the view's).
  const mixHex = (a, b, t) => '#' + [1, 3, 5].map((i) => Math.round(parseInt(a.slice(i, i + 2), 16) * (1 - t) +
    parseInt(b.slice(i, i + 2), 16) * t).toString(16).padStart(2, '0')).join('');
  const heatColor = (ratio) => (ratio === null || ratio === undefined ? COLORS.unknown
    : mixHex('#f4f6f8', ratio >= 1 ? '#d64541' : '#3b6fd8', Math.min(1, Math.abs(ratio - 1) / 0.5)));
  // A rank's own dashboard where the fleet wrote one (--out-dir); the view says which paths may be followed.
  const rankReportHref = (k, rank) => {
    const row = k.rows.find((r) => r.rank === rank);
    return row ? row.report_href : null;
  };
  const rankCell = (k, rank) => {
    const href = rankReportHref(k, rank);
    return href ? el('a', { href, class: 'rank-link' }, 'rank ' + rank) : el('span', null, 'rank ' + rank);
  };
  const rankCellLines = (k, row, cell, j) => {
    const median = k.heat.medians[j];
    const lines = ['rank ' + row.rank + ' \u00b7 L' + cell.layer + (cell.backend ? ' \u00b7 ' + cell.backend : '')];
    if (cell.absent) lines.push('no attention call in this layer');
    else if (cell.us === null) lines.push('device time unknown (kernels not recorded)');
    else lines.push(fmtUs(cell.us) + (cell.ratio === null ? '' : ' = ' + cell.ratio.toFixed(2) + '\u00d7 the layer median ' + fmtUs(median)));
    if (cell.disagree) lines.push('differs from most ranks in: ' + cell.disagree.join(', '));
    return lines;
  };
  const rankHeatMap = (k) => {
    const h = k.heat, L = 96, T = 24;
    const cw = Math.max(6, Math.min(36, Math.floor(760 / Math.max(1, h.layers.length))));
    const ch = h.rows.length > 64 ? 8 : 18;
    const labelEvery = Math.max(1, Math.ceil(28 / cw)), rowLabelEvery = Math.max(1, Math.ceil(14 / ch));
    const m = svg('svg', { id: 'rank-heat', class: 'chart', 'data-chart': 'rank-heat', width: L + h.layers.length * cw + 12, height: T + h.rows.length * ch + 6 });
    h.layers.forEach((layer, j) => {
      if (j % labelEvery === 0) m.appendChild(svg('text', { x: L + j * cw + cw / 2, y: 16, 'text-anchor': 'middle', class: 'lbl' }, 'L' + layer));
    });
    h.rows.forEach((row, i) => {
      const y = T + i * ch;
      // Short rows label every other rank (the slowest always); each cell's tooltip names its rank.
      if (i % rowLabelEvery === 0 || row.rank === k.slowest) {
        const label = svg('text', { x: L - 8, y: y + Math.max(ch * 0.75, 7), 'text-anchor': 'end', class: 'lbl' + (row.rank === k.slowest ? ' strong' : '') }, 'rank ' + row.rank);
        const href = rankReportHref(k, row.rank);
        if (href) m.appendChild(svg('a', { href, class: 'rank-link' })).appendChild(label);
        else m.appendChild(label);
      }
      row.cells.forEach((cell, j) => {
        const x = L + j * cw;
        const r = m.appendChild(svg('rect', { x: x + 0.5, y: y + 0.5, width: cw - 1, height: ch - 1,
          fill: cell.absent ? COLORS.absent : heatColor(cell.ratio), class: 'heat rank-cell' + (cell.disagree ? ' disagree' : ''),
          'data-rank': row.rank, 'data-layer': cell.layer, 'data-ratio': cell.ratio === null ? '' : cell.ratio.toFixed(3),
          'data-disagree': (cell.disagree || []).join(',') }));
        hoverable(r, () => rankCellLines(k, row, cell, j));
        if (cell.disagree && ch >= 12 && cw >= 10) m.appendChild(svg('text', { x: x + cw / 2, y: y + ch * 0.75, 'text-anchor': 'middle', class: 'rank-mark' }, '!'));
      });
    });
    return m;
  };
  const ranksSection = (run) => {
    const k = run.ranks;
    const s = section('ranks', 'Ranks', k.line + '.');
    // Beyond 64 ranks the heat map and the table carry the times; a bar per rank would be pages long.
    if (k.rows.length && k.rows.length <= 64)
      s.appendChild(barChart(k.rows.map((r) => ({ label: 'rank ' + r.rank, value: r.unknown ? 0 : r.us, color: r.rank === k.slowest ? COLORS.eager : SERIES[0],
        lines: [r.file, r.unknown ? 'device time unknown' : fmtUs(r.us), 'fused share ' + pct(r.fused)] })), fmtUs, { name: 'ranks' }));
    if (k.heat.layers.length) {
      s.appendChild(el('h3', null, 'Layer time per rank'));
      s.appendChild(legendOf([[heatColor(0.5), 'half the layer\u2019s median or faster'], [heatColor(1), 'at the median'],
        [heatColor(1.5), '1.5\u00d7 the median or slower'], [COLORS.unknown, 'device time unknown'], [COLORS.absent, 'no call in this layer']]));
      s.appendChild(el('p', { class: 'note' }, 'Outlined cells marked ! ran something else than most ranks (backend, kernel, shape, mask or dtype); hover for the time, its ratio and the backend.'));
      s.appendChild(rankHeatMap(k));
    }
    if (k.rows.length) {
      // The own-Report column shows where each rank's dashboard is, also where the page cannot follow it (s3://).
      const own = k.rows.some((r) => r.report_html);
      s.appendChild(table(['rank', 'file', 'device', 'attention time', '\u00d7 median', 'fused share', 'calls', 'backends', ...(own ? ['own Report'] : [])],
        k.rows.map((r) => [rankCell(k, r.rank), r.file, r.device, r.unknown ? 'unknown' : fmtUs(r.us),
          r.over_median === null ? '' : r.over_median.toFixed(2) + '\u00d7', pct(r.fused), String(r.calls), r.backends,
          ...(own ? [r.report_html] : [])])));
    }
    if (k.stragglers.rows.length) {
      s.appendChild(el('h3', null, 'Stragglers'));
      s.appendChild(table(k.stragglers.columns, k.stragglers.rows.map((cells, i) => [rankCell(k, k.stragglers.ranks[i]), ...cells.slice(1)])));
    }
    if (k.disagreements.length) {
      s.appendChild(el('h3', null, 'Ranks that ran something else than most ranks'));
      const ul = s.appendChild(el('ul', { class: 'disagreements' }));
      for (const line of k.disagreements) ul.appendChild(el('li', null, line));
    }
    if (k.groups.rows.length) {
      s.appendChild(el('h3', null, 'Process groups'));
      s.appendChild(table(k.groups.columns, k.groups.rows));
    }
    if (k.failed.length) {
      s.appendChild(el('h3', null, 'Failed ranks'));
      s.appendChild(table(['file', 'error'], k.failed));
    }
    return s;
  };

  // A core section drawn when the run has its data, else its one-line reason.
  const drawnOrWhy = (key, draw, title) => (run) => (run[key] ? draw(run) : why(section(key, title), run.why[key]));
)attnprof_js";

const char* const kDashboardPageJs = R"attnprof_js(
  // --- page: the sections the command asked for, in page order ------------------------------
  const RUN_SECTIONS = {
    'summary': summarySection,
    'steps': stepsSection,
    'activation-map': mapSection,
    'model-graph': treeSection,
    'roofline': rooflineSection,
    'spread': spreadSection,
    'memory': drawnOrWhy('memory', memorySection, 'Memory per layer and per head'),
    'scaling': scalingSection,
    'heads': headsSection,
    'advice': drawnOrWhy('advice', adviceSection, 'Backend advice'),
    'ranks': drawnOrWhy('ranks', ranksSection, 'Ranks'),
    'whatif': whatifSection,
    'verification': drawnOrWhy('verification', verificationSection, 'Verified fixes'),
    'findings': findingsSection,
  };
  const app = document.getElementById('app');
  const runBox = el('div', { id: 'run' });
  const showRun = (i) => {
    const run = DATA.runs[i];
    runBox.replaceChildren();
    runBox.setAttribute('data-run', i);
    for (const id of DATA.sections) {
      if (id === 'diff') for (const s of diffSections()) runBox.appendChild(s);
      else if (RUN_SECTIONS[id]) runBox.appendChild(RUN_SECTIONS[id](run));
    }
  };
  if (DATA.comparison) for (const s of runsSection(DATA.comparison, showRun)) app.appendChild(s);
  app.appendChild(runBox);
  if (DATA.runs.length) showRun(0);
  else if (DATA.diff) for (const s of diffSections()) app.appendChild(s);
  else app.appendChild(el('p', { class: 'note' }, 'No report to show.'));
  window.attnprofRenderMs = performance.now() - t0;
  document.body.setAttribute('data-ready', '1');
})();
)attnprof_js";

}  // namespace attnprof::render

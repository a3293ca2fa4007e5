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
        title + ': ' + (v === null ? 'n/a' : fixed(raw, 3)), 'entropy ' + fixed(c.entropy, 3) + ' \u00b7 sink mass ' + fixed(c.sink_mass, 3) +
        (c.locality !== null ? ' \u00b7 local mass ' + fixed(c.locality, 3) : ''), c.candidates.length ? 'candidate: ' + c.candidates.join(', ') : '']);
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
        h.candidates.map((c) => ['L' + c.layer, String(c.head), c.action, c.reason, c.kv_bytes_per_token > 0 ? bytesText(c.kv_bytes_per_token) : '',
          c.expected_speedup > 0 ? estimatedRatioText(c.expected_speedup) : ''])));
    else if (h.cells.length) s.appendChild(el('p', { class: 'note' }, 'No head is a pruning, streaming-KV or block-sparse candidate.'));
    if (h.window.length) {
      s.appendChild(el('h3', null, 'Sliding-window waste per layer'));
      s.appendChild(barChart(h.window.map((w) => ({ label: 'L' + w.layer + ' ' + w.backend, value: Math.max(0, w.wasted),
        color: w.skips ? COLORS.fused : COLORS.eager, lines: ['L' + w.layer + ' call ' + w.call_id + ' \u00b7 ' + w.backend + ' \u00b7 mask ' + w.mask + ' (' + w.mask_kind + ')',
          'masked share ' + (w.masked_fraction >= 0 ? percentText(w.masked_fraction) : 'unknown (\u2265 ' + percentText(Math.max(0, w.masked_fraction_min)) + ')'),
          'FLOPs spent on masked scores ' + percentText(w.wasted), w.verdict] })), percentText, { name: 'window-waste', max: 1 }));
      s.appendChild(table(['layer', 'backend', 'mask', 'kind', 'window', 'masked', 'wasted FLOPs', 'verdict'],
        h.window.map((w) => ['L' + w.layer, w.backend, w.mask, w.mask_kind, w.window > 0 ? w.window + ' (' + w.window_source + ')' : FORMAT.unknown,
          w.masked_fraction >= 0 ? percentText(w.masked_fraction) : FORMAT.unknown, percentText(w.wasted), w.verdict])));
    }
    for (const n of h.notes) s.appendChild(el('p', { class: 'note' }, n));
    return s;
  };

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

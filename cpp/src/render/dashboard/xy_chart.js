  // --- shared chart pieces -------------------------------------------------------------------
  const why = (s, text) => { s.appendChild(el('p', { class: 'note why' }, text)); return s; };
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
    const [x0, x1] = cfg.xRange, [y0, y1] = cfg.yRange;
    const yTicks = cfg.logY ? decades(y0, y1).filter((y) => y >= y0 && y <= y1) : [0, 1, 2, 3, 4].map((i) => y0 + ((y1 - y0) * i) / 4);
    // The left margin holds the widest tick label ("1000.0 TFLOP/s") beside the rotated axis label.
    const W = 760, H = 320, R = 24, T = 18, B = 44;
    const L = Math.max(86, 34 + 6.2 * Math.max(...yTicks.map((y) => String(cfg.fmtY(y)).length)));
    const root = svg('svg', { class: 'chart', width: W, height: H, 'data-chart': cfg.name });
    const fx = cfg.logX ? Math.log10 : (v) => v, fy = cfg.logY ? Math.log10 : (v) => v;
    const span = (a, b) => (b === a ? 1 : b - a);
    const px = (x) => L + ((fx(x) - fx(x0)) / span(fx(x0), fx(x1))) * (W - L - R);
    const py = (y) => T + (1 - (fy(y) - fy(y0)) / span(fy(y0), fy(y1))) * (H - T - B);
    root.appendChild(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
    root.appendChild(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
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
    const tenth = (v) => Math.round(v * 10) / 10;  // a point's coordinate, short enough for the attribute
    const line = (pts, attrs) => root.appendChild(svg('polyline', Object.assign({
      points: pts.filter((p) => inside(p[0], p[1])).map((p) => tenth(px(p[0])) + ',' + tenth(py(p[1]))).join(' '),
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

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
      const lines = [n.path, (n.us === null ? 'device time unknown' : timeText(n.us) + ', ' + percentText(n.share) + ' of attention time') +
        (n.attention ? ' \u00b7 ' + n.calls + ' call(s) \u00b7 ' + n.cls : '')];
      for (const id of n.call_ids.slice(0, 6)) {
        lines.push(...callLines(run, id));
        const call = run.calls.find((c) => c.id === id);
        for (const k of call ? call.kernels : []) lines.push('    kernel [' + k.component + '] ' + k.name + '  ' + timeText(k.us));
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
          (n.share === null ? 'time unknown' : percentText(n.share) + ' \u00b7 ' + timeText(n.us)) + (n.attention ? ' \u00b7 ' + n.cls : '')));
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

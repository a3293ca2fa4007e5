  const callLines = (run, id) => {
    const c = run.calls.find((x) => x.id === id);
    if (!c) return [];
    const lines = ['call ' + c.id + ': ' + c.backend + (c.library ? ' (' + c.library + ')' : '') + ' ' + c.direction,
                   '  ' + c.shape + ' \u00b7 ' + (c.unknown ? 'device time unknown' : timeText(c.us)) + (c.tflops > 0 ? ' \u00b7 ' + (c.tflops_upper_bound ? '\u2264 ' : '') + flopsText(c.tflops) : '')];
    if (c.backend_op || c.op) lines.push('  op: ' + (c.backend_op || c.op));
    for (const w of c.why) lines.push('  ' + w);
    return lines;
  };

  const cellLines = (run, row, cell) => {
    const lines = ['L' + row.layer + ' ' + COMPONENT_LABEL[cell.component] + (row.module ? '  ' + row.module : ''),
                   cell.cls === 'absent' ? 'no kernel in this component'
                     : cell.cls === 'unknown' ? 'device time unknown: the kernels were not recorded' : cell.cls + ' \u00b7 ' + timeText(cell.us)];
    for (const k of cell.kernels) lines.push('  ' + k.name + '  \u00d7' + k.count + '  ' + timeText(k.us));
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
        if (cell.us > 0 && ch >= 18) m.appendChild(svg('text', { x: L + j * cw + cw / 2, y: y + ch * 0.7, 'text-anchor': 'middle', class: 'cell-t' }, timeText(cell.us)));
      });
      m.appendChild(svg('text', { x: L + comps.length * cw + 8, y: y + ch * 0.7, class: 'val' }, (row.us === null ? FORMAT.unknown : timeText(row.us)) + ' ' + row.backends.join('/')));
    });
    s.appendChild(m);
    s.appendChild(detail);
    return s;
  };

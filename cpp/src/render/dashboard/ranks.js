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
    else lines.push(timeText(cell.us) + (cell.ratio === null ? '' : ' = ' + ratioText(cell.ratio) + ' the layer median ' + timeText(median)));
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
          'data-rank': row.rank, 'data-layer': cell.layer, 'data-ratio': cell.ratio === null ? '' : fixed(cell.ratio, 3),
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
        lines: [r.file, r.unknown ? 'device time unknown' : timeText(r.us), 'fused share ' + percentText(r.fused)] })), timeText, { name: 'ranks' }));
    if (k.heat.layers.length) {
      s.appendChild(el('h3', null, 'Layer time per rank'));
      s.appendChild(legendOf([[heatColor(0.5), 'half the layer\u2019s median or faster'], [heatColor(1), 'at the median'],
        [heatColor(1.5), ratioText(1.5) + ' the median or slower'], [COLORS.unknown, 'device time unknown'], [COLORS.absent, 'no call in this layer']]));
      s.appendChild(el('p', { class: 'note' }, 'Outlined cells marked ! ran something else than most ranks (backend, kernel, shape, mask or dtype); hover for the time, its ratio and the backend.'));
      s.appendChild(rankHeatMap(k));
    }
    if (k.rows.length) {
      // The own-Report column shows where each rank's dashboard is, also where the page cannot follow it (s3://).
      const own = k.rows.some((r) => r.report_html);
      s.appendChild(table(['rank', 'file', 'device', 'attention time', 'over median', 'fused share', 'calls', 'backends', ...(own ? ['own Report'] : [])],
        k.rows.map((r) => [rankCell(k, r.rank), r.file, r.device, r.unknown ? FORMAT.unknown : timeText(r.us),
          r.over_median === null ? '' : ratioText(r.over_median), percentText(r.fused), String(r.calls), r.backends,
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

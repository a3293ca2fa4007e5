  // --- multi-run ------------------------------------------------------------------------------
  const runsSection = (cmp, onPick) => {
    const s = section('runs', 'Runs', 'Several Reports side by side; the first is the baseline. Pick a run to show its details below.');
    const runRatioText = (x) => (x === null ? 'n/a' : ratioText(x));  // null: no time to compare with
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
      cmp.runs.map((r) => [r.label, String(r.calls), percentText(r.fused_time_fraction), (r.time_unknown ? FORMAT.unknown : timeText(r.attention_us)), runRatioText(r.ratio), bytesText(r.peak_bytes)])));
    s.appendChild(lineChart({ name: 'runs-layers', xLabel: 'layer', fmtY: timeText,
      series: cmp.runs.map((r, i) => ({ name: r.label, xs: r.layers.map((l) => l.layer), ys: r.layers.map((l) => l.us), color: SERIES[i % SERIES.length] })) }));
    const reg = section('regressions', 'Per-layer comparison', 'Attention time per layer against the baseline run; a backend class change is marked.');
    const rows = cmp.layers.map((layer, li) => {
      const cells = ['L' + layer];
      cmp.runs.forEach((r, i) => {
        const l = r.layers[li];
        const td = el('span', { class: l.changed ? 'changed ' + (l.better ? 'better' : 'worse') : '' },
          (l.unknown ? FORMAT.unknown : timeText(l.us)) + (i > 0 ? ' (' + runRatioText(l.ratio) + ')' : '') + (l.cls ? ' ' + l.cls : ''));
        cells.push(td);
      });
      return cells;
    });
    reg.appendChild(table(['layer', ...cmp.runs.map((r) => r.label)], rows));
    return [s, reg];
  };


  // --- diff: per-layer backend and time change, regression causes ------------------------------
  const metricText = (m, fmt) => (m && m.known ? fmt(m.before) + ' \u2192 ' + fmt(m.after) + (m.before ? ' (' + (m.relative >= 0 ? '+' : '') + percentText(m.relative) + ')' : '') : 'unknown');
  // Two fleets rank by rank (the diff section's "ranks"): the ranks the gate names or whose backend
  // changed, and the stragglers the candidate added.
  const diffRanks = (k) => {
    const box = el('div', { class: 'diff-ranks' });
    box.appendChild(el('h3', null, 'Ranks'));
    box.appendChild(el('p', { class: 'note' }, k.ranks_before + ' \u2192 ' + k.ranks_after + ' ranks analysed; fleet median ' +
      metricText(k.median_us, timeText) + (k.median_us.regression ? ' (regression)' : '')));
    const changesOf = (rank) => k.backend_changes.filter((c) => c.rank === rank).map((c) => c.layers_text + ': ' + c.before + ' \u2192 ' + c.after).join('; ');
    const rows = k.ranks.filter((r) => r.device_time_us.regression || changesOf(r.rank)).map((r) => {
      const worst = r.layers.find((l) => l.layer === r.worst_layer);
      return ['rank ' + r.rank, metricText(r.device_time_us, timeText), r.device_time_us.regression ? 'yes' : '',
        worst ? 'L' + worst.layer + ' ' + timeText(worst.before_us) + ' \u2192 ' + timeText(worst.after_us) : '', changesOf(r.rank)];
    });
    if (rows.length) box.appendChild(table(['rank', 'attention time', 'regression', 'most grown layer', 'backend changes'], rows));
    for (const st of k.new_stragglers)
      box.appendChild(el('p', { class: 'note' }, 'new straggler: rank ' + st.rank + (st.layer < 0 ? ' overall' : ' in L' + st.layer) + ' at ' + ratioText(st.over_median) + ' the median'));
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
    const pctOf = (v) => percentText(v / 100);  // the verdict's shares are percentages
    s.appendChild(table(['metric', 'baseline \u2192 candidate', 'gated', 'regression'], [
      ['attention device time', metricText(p.attention_device_time_us, timeText), p.attention_device_time_us.gated ? 'yes' : '', p.attention_device_time_us.regression ? 'yes' : ''],
      ['fused share of time', metricText(p.fused_time_pct, pctOf), p.fused_time_pct.gated ? 'yes' : '', p.fused_time_pct.regression ? 'yes' : ''],
      ['TFLOP/s', metricText(p.tflops, flopsText), p.tflops.gated ? 'yes' : '', p.tflops.regression ? 'yes' : ''],
      ['peak memory', metricText(p.peak_bytes, bytesText), p.peak_bytes.gated ? 'yes' : '', p.peak_bytes.regression ? 'yes' : '']]));
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
        const shown = !present ? 'absent' : timed ? timeText(v) : 'time unknown';
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
        metricText(l.device_time_us, timeText), metricText(l.fused_time_pct, pctOf), l.input_changes.join('; ')])));
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
  // The run's diff section: attnprof diff's verdicts, or a later run's comparison with the first.
  const diffSections = (run) => {
    const d = run.diff;
    if (!d) return [why(section('diff', 'Diff'), run.why.diff)];
    if (!d.pairs.length) return [why(section('diff', 'Diff'), 'No pair of runs to compare' + (d.unmatched.length ? ': unmatched ' + d.unmatched.join(', ') : '.'))];
    const out = d.pairs.map(diffPair);
    if (d.unmatched.length) out.push(why(section('diff-unmatched', 'Unmatched files'), d.unmatched.join(', ')));
    return out;
  };

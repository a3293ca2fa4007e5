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
    if (hasTime) s.appendChild(chart('time_us', 'time_fit', timeText, 'attention time', 'scaling-time'));
    if (sc.series.some((se) => se.forward_pass_time_us.length))
      s.appendChild(chart('forward_pass_time_us', null, timeText, 'whole forward pass (not only attention)', 'scaling-pass'));
    const budget = sc.budget_for_pass_bytes > 0 ? { y: sc.budget_for_pass_bytes, oom: true,
      label: 'budget ' + bytesText(sc.budget_bytes) + (sc.baseline_bytes > 0 ? ' less ' + bytesText(sc.baseline_bytes) + ' before the pass' : '') + ' (' + sc.budget_source + ')' } : { oom: true };
    const mem = chart('peak_bytes', 'memory_fit', bytesText, 'peak memory of the pass', 'scaling-memory', budget);
    if (mem) s.appendChild(mem);
    s.appendChild(table(['backend', 'time growth', 'memory growth', 'S\u00b2 dominates (memory)', 'largest S that fits', 'how'],
      sc.series.map((se) => [se.backend, se.time_fit ? se.time_fit.growth : '', se.memory_fit ? se.memory_fit.growth : '',
        se.memory_fit && se.memory_fit.quadratic_from > 0 ? 'S \u2265 ' + se.memory_fit.quadratic_from : 'never',
        se.oom_tokens > 0 ? String(se.oom_tokens) + (se.oom_low > 0 ? ' (' + se.oom_low + '..' + se.oom_high + ')' : '') : 'n/a',
        [se.oom_method, se.oom_note, se.measured_oom_tokens > 0 ? 'measured: S \u2264 ' + se.measured_oom_tokens + ' ran' : se.measured_oom_note].filter((x) => x).join('; ')])));
    return s;
  };

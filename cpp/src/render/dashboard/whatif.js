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

  // --- what-if: the request-length distribution against the window ----------------------------
  const whatifSection = (run) => {
    const s = section('whatif', 'What if: sliding window', 'Requests per length (powers of two) with the window marked, and attention FLOPs and KV cache under full vs sliding-window attention.');
    const w = run.whatif;
    if (!w) return why(s, run.why.whatif);
    s.appendChild(el('p', { class: 'sub' }, (w.model || 'model') + ' \u00b7 window ' + w.window + (w.global_tokens > 0 ? ' + ' + w.global_tokens + ' global tokens' : '') +
      ' \u00b7 ' + w.requests + ' requests, mean ' + fixed(w.mean_tokens, 0) + ' tokens \u00b7 ' + percentText(w.covered_share) + ' fit in the window'));
    s.appendChild(barChart(w.histogram.map((b) => ({ label: b.from + '\u2013' + b.to, value: b.requests,
      color: b.within_window ? COLORS.fused : SERIES[0], lines: [b.from + '\u2013' + b.to + ' tokens: ' + b.requests + ' requests',
        b.within_window ? 'within the window: unchanged' : 'longer than the window: keys beyond it are dropped'] })),
      String, { name: 'whatif-lengths' }));
    s.appendChild(legendOf([[COLORS.fused, 'requests within the window'], [SERIES[0], 'requests longer than the window']]));
    s.appendChild(barChart([
      { label: 'FLOPs full', value: w.full_flops, color: SERIES[1], lines: ['attention FLOPs, full: ' + flopCountText(w.full_flops)] },
      { label: 'FLOPs window', value: w.window_flops, color: COLORS.fused, lines: ['attention FLOPs, window: ' + flopCountText(w.window_flops), 'saving ' + percentText(w.flops_saving)] }],
      flopCountText, { name: 'whatif-flops' }));
    s.appendChild(barChart([
      { label: 'KV full', value: w.full_kv_bytes, color: SERIES[1], lines: ['KV cache summed over requests, full: ' + bytesText(w.full_kv_bytes)] },
      { label: 'KV window', value: w.window_kv_bytes, color: COLORS.fused, lines: ['KV cache, window: ' + bytesText(w.window_kv_bytes), 'saving ' + percentText(w.memory_saving)] }],
      bytesText, { name: 'whatif-kv' }));
    s.appendChild(table(['', 'full attention', 'sliding window', 'saving'], [
      ['attention FLOPs (all requests)', flopCountText(w.full_flops), flopCountText(w.window_flops), percentText(w.flops_saving)],
      ['KV cache (summed over requests)', bytesText(w.full_kv_bytes), bytesText(w.window_kv_bytes), percentText(w.memory_saving)],
      ['KV cache of the longest request', bytesText(w.max_full_kv_bytes), bytesText(w.max_window_kv_bytes), '']]));
    return s;
  };

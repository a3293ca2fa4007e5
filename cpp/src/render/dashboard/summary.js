  // --- sections -----------------------------------------------------------------------------
  const summarySection = (run) => {
    const sm = run.summary;
    const s = section('summary', 'Summary', [run.device, run.arch].filter((x) => x).join(' \u00b7 ') || 'device unknown');
    const kpis = s.appendChild(el('div', { class: 'kpis' }));
    const kpi = (label, value) => {
      const k = kpis.appendChild(el('div', { class: 'kpi' }));
      k.appendChild(el('div', { class: 'kpi-v' }, value));
      k.appendChild(el('div', { class: 'kpi-l' }, label));
    };
    // No call with a recorded device time: the time shares are unknown, not 0% (device_time_unknown).
    const allUnknown = sm.time_unknown;
    kpi('attention calls', sm.calls);
    kpi('fused calls', sm.fused_calls + ' / ' + sm.calls);
    kpi('fused share of attention time', allUnknown ? FORMAT.unknown : percentText(sm.fused_time_fraction));
    kpi(sm.has_gpu ? 'attention device time' : 'attention CPU time', allUnknown ? FORMAT.unknown : timeText(sm.attention_us));
    if (sm.unknown_time_calls > 0) kpi('calls with unknown device time (not in the times)', sm.unknown_time_calls + ' / ' + sm.calls);
    if (sm.has_gpu) kpi('attention share of GPU time', allUnknown ? FORMAT.unknown : percentText(sm.attention_share));
    kpi('peak memory', bytesText(sm.peak_bytes));
    if (run.files.length) s.appendChild(el('p', { class: 'files' }, 'sources: ' + run.files.join(', ')));
    for (const a of run.assumptions) s.appendChild(el('p', { class: 'note' }, 'assumed: ' + a));
    for (const m of run.missing) s.appendChild(el('p', { class: 'note' }, 'missing: ' + m));
    return s;
  };

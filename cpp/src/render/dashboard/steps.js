  // --- steps and phases: how much of each engine step is attention, prefill against decode ----
  const stepsSection = (run) => {
    const s = section('steps', 'Steps and phases', 'Each forward of the model or the serving engine: its phase, attention time against the GPU time of the step, and the time per phase.');
    const st = run.steps;
    if (!st) return why(s, run.why.steps);
    s.appendChild(el('p', { class: 'sub' }, st.line + (st.scope ? ' \u00b7 ' + st.scope : '')));
    if (st.bars.length > 1)
      s.appendChild(barChart(st.bars.map((b) => ({ label: 'step ' + b.index + (b.phase ? ' ' + b.phase : ''), value: b.attention_us,
        color: b.phase === 'decode' ? SERIES[1] : b.phase === 'prefill' ? SERIES[0] : COLORS.fused,
        lines: ['step ' + b.index + (b.phase ? ' (' + b.phase + ')' : ''), 'attention ' + timeText(b.attention_us),
          'overhead ' + timeText(b.overhead_us), 'GPU time of the step ' + timeText(b.gpu_us)] })),
        timeText, { name: 'step-attention' }));
    if (st.rows.length > 1)
      s.appendChild(table(['step', 'marker', 'phase', 'tokens', 'calls', 'attention', 'overhead', 'GPU time', 'share'], st.rows));
    if (st.more > 0) s.appendChild(el('p', { class: 'note' }, '\u2026 ' + st.more + ' more steps (JSON Report: steps)'));
    if (st.phases.length)
      s.appendChild(table(['phase', 'steps', 'calls', 'time', 'share', 'useful TFLOP/s', 'backends', 'kernels'], st.phases));
    return s;
  };

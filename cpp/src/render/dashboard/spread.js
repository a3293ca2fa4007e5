  // --- spread: time, TFLOP/s and bandwidth per shape group ------------------------------------
  const spreadSection = (run) => {
    const s = section('spread', 'Spread per shape group', 'Calls of one backend, library, shape, mask, direction and phase: how far their device time, useful TFLOP/s and bandwidth scatter, and where the slowest ran.');
    const sp = run.spread;
    if (!sp) return why(s, run.why.spread);
    s.appendChild(table(sp.header, sp.rows));
    for (const n of sp.notes) s.appendChild(el('p', { class: 'note' }, n));
    return s;
  };

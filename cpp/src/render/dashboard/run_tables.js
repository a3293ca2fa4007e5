  const memorySection = (run) => {
    const s = section('memory', 'Memory per layer and per head', 'Peak memory allocated during each layer\u2019s attention; per-head split from the layer\u2019s heads.');
    s.appendChild(barChart(run.memory.map((r) => ({ label: 'L' + r.layer, value: r.peak_bytes, color: r.disproportionate ? COLORS.eager : SERIES[0],
      lines: ['L' + r.layer, 'peak ' + bytesText(r.peak_bytes), 'per query head ' + bytesText(r.bytes_per_q_head), 'per KV head ' + bytesText(r.bytes_per_kv_head)] })),
      bytesText, { name: 'memory' }));
    s.appendChild(table(['layer', 'peak', 'per query head', 'per KV head', 'disproportionate'],
      run.memory.map((r) => ['L' + r.layer, bytesText(r.peak_bytes), bytesText(r.bytes_per_q_head), bytesText(r.bytes_per_kv_head), r.disproportionate ? 'yes' : ''])));
    return s;
  };

  const adviceSection = (run) => {
    const s = section('advice', 'Backend advice', 'Measured with each backend forced; PyTorch\u2019s own pick vs the fastest.');
    s.appendChild(table(['shape', 'PyTorch picked', 'fastest', 'gain', 'code'],
      run.advice.map((r) => [r.shape, r.heuristic, r.fastest, r.gain > 0 ? ratioText(r.gain) : '', el('code', null, r.code)])));
    return s;
  };

  const verificationSection = (run) => {
    const v = run.verification;
    const s = section('verification', 'Verified fixes', v.line);
    s.appendChild(table(v.columns, v.rows));
    return s;
  };

  const findingsSection = (run) => {
    const s = section('findings', 'Findings', run.findings.length ? 'Ranked by severity, with the fix.' : 'No findings.');
    const list = s.appendChild(el('ol', { class: 'findings' }));
    for (const f of run.findings) {
      const li = list.appendChild(el('li', { class: 'finding sev-' + f.severity.replace(/[^a-z]/g, '') }));
      li.appendChild(el('span', { class: 'sev' }, f.severity));
      li.appendChild(el('strong', null, f.title));
      if (f.gain > 0) li.appendChild(el('span', { class: 'gain' }, estimatedRatioText(f.gain)));
      li.appendChild(el('p', null, f.detail));
      if (f.verified) li.appendChild(el('p', { class: 'verified verdict-' + f.verdict.replace(/[^a-z_]/g, '') }, f.verified));
      const meta = [f.rule ? 'rule ' + f.rule : '', f.layers.length ? 'layers ' + f.layers.join(', ') : ''].filter((x) => x).join(' \u00b7 ');
      if (meta) li.appendChild(el('p', { class: 'note' }, meta));
    }
    return s;
  };

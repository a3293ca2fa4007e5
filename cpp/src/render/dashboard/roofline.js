  // --- roofline: every call on the GPU's roofline (log-log) ----------------------------------
  const rooflineSection = (run) => {
    const s = section('roofline', 'Roofline', 'Executed TFLOP/s of each attention call (masked-out tiles a kernel still runs included) against its arithmetic intensity (executed FLOPs per byte of minimum HBM traffic), on the roofline of the GPU; the tooltip gives the useful rate and the bound verdict.');
    const rf = run.roofline_calls;
    if (!rf) return why(s, run.why.roofline);
    const ys = rf.points.map((p) => p.tflops).concat(rf.roofs.flatMap((r) => r.points.map((p) => p[1])));
    const [ylo, yhi] = rangeOf(ys, 2);
    const c = xyChart({ name: 'roofline', xRange: rf.x_range, yRange: [Math.pow(10, Math.floor(Math.log10(ylo))), Math.pow(10, Math.ceil(Math.log10(yhi)))],
      logX: true, logY: true, xTicks: decades(rf.x_range[0], rf.x_range[1]), fmtX: (x) => String(x), fmtY: flopsText,
      xLabel: 'arithmetic intensity (FLOP/byte)', yLabel: 'executed FLOP/s' });
    rf.roofs.forEach((r, i) => {
      c.line(r.points, { stroke: '#1d2330', 'stroke-width': 1.5, class: 'roof', 'data-dtype': r.dtype, 'data-peak': r.peak_tflops });
      c.root.appendChild(svg('text', { x: c.px(r.points[2][0]) - 6, y: c.py(r.peak_tflops) - 5 - 12 * i, 'text-anchor': 'end', class: 'lbl roof-lbl' },
        r.dtype + ' peak ' + flopsText(r.peak_tflops) + ' \u00b7 ridge ' + fixed(r.ridge, 0) + ' FLOP/B'));
    });
    c.root.appendChild(svg('text', { x: c.px(rf.x_range[0]) + 8, y: c.py(rf.roofs.length ? rf.roofs[0].points[0][1] : ylo) - 8, class: 'lbl bw-lbl' },
      'HBM ' + fixed(rf.bandwidth_gbs / 1000, 2) + ' TB/s'));
    for (const p of rf.points)
      c.point(p.intensity, p.tflops, { fill: COLORS[p.cls], class: 'call', 'data-call': p.id, 'data-layer': p.layer,
        'data-intensity': p.intensity, 'data-tflops': p.tflops },
        ['call ' + p.id + ' \u00b7 L' + p.layer + ' \u00b7 ' + p.backend + ' ' + p.dtype,
         'executed ' + (p.upper_bound ? '\u2264 ' : '') + flopsText(p.tflops) + ' \u00b7 useful ' + (p.upper_bound ? '\u2264 ' : '') + flopsText(p.useful_tflops) + ' (' + percentText(p.peak_fraction) + ' of peak)',
         fixed(p.intensity, 1) + ' FLOP/byte \u00b7 ' + (p.bound ? p.bound + '-bound \u00b7 ' : '') + timeText(p.us)]);
    s.appendChild(c.root);
    s.appendChild(el('p', { class: 'note' }, rf.gpu + ': ' + rf.points.length + ' call(s); ' + rf.ceilings + ' (docs/cost.md).'));
    return s;
  };

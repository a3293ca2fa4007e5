  // --- numbers: one formatter per quantity, read from FORMAT (text_format.h's spelling rules,
  // html_view.h format_spec_view), so the page spells a value as the text and Markdown do.
  // A value the Report does not know arrives as null (JSON has no NaN) and reads FORMAT.unknown.

  // printf's %.Nf, which fmt (text_format.cpp) follows and toFixed does not quite: an exact tie
  // goes to the even digit (toFixed rounds it up), a negative zero keeps its sign, and a number
  // from 1e21 up is written out, not in exponent form. toFixed(100) is the exact binary value
  // for any number that can tie (one of at least 0.5 / 10^digits ends its binary fraction above 2^-100).
  const fixed = (v, digits) => {
    if (typeof v !== 'number' || !isFinite(v)) return FORMAT.unknown;
    const sign = v < 0 || Object.is(v, -0) ? '-' : '';
    const a = Math.abs(v);
    if (a >= 2 ** 53) return sign + BigInt(a).toString() + (digits > 0 ? '.' + '0'.repeat(digits) : '');
    const exact = a.toFixed(100), point = exact.indexOf('.');
    const down = exact.slice(0, digits > 0 ? point + 1 + digits : point);
    const tie = /^50*$/.test(exact.slice(point + 1 + digits));
    return sign + (tie && '02468'.includes(down[down.length - 1]) ? down : a.toFixed(digits));
  };

  const rounded = (x, digits) => Math.round(x * 10 ** digits) / 10 ** digits;
  // The value in the first unit in which, rounded to that unit's decimals, it stays below the
  // unit's next_at (quantity_text in text_format.cpp).
  const quantityText = (q) => (value) => {
    if (typeof value !== 'number' || !isFinite(value)) return FORMAT.unknown;
    const v = value * q.scale, magnitude = Math.abs(v);
    let i = magnitude === 0 ? q.zero_unit : 0;
    while (i + 1 < q.units.length && rounded(magnitude / q.units[i].size, q.units[i].digits) >= q.units[i].next_at) i++;
    const u = q.units[i];
    return q.prefix + fixed(v / u.size, u.digits) + u.suffix;
  };
  const QUANTITY_TEXT = Object.fromEntries(Object.entries(FORMAT.quantities).map(([name, q]) => [name, quantityText(q)]));
  const bytesText = QUANTITY_TEXT.bytes;      // bytes
  const timeText = QUANTITY_TEXT.time;        // microseconds
  const flopsText = QUANTITY_TEXT.flops;      // TFLOP/s
  const flopCountText = QUANTITY_TEXT.flop_count;  // FLOPs
  const percentText = QUANTITY_TEXT.percent;  // a fraction: 0.123 is 12.3%
  const ratioText = QUANTITY_TEXT.ratio;      // measured: 1.25x
  const estimatedRatioText = QUANTITY_TEXT.estimated_ratio;  // modelled: ~1.3x

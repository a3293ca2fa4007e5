  // --- tooltip + detail panel -----------------------------------------------------------
  const tip = el('div', { id: 'tip', role: 'tooltip' });
  document.body.appendChild(tip);
  const hoverable = (node, linesFn) => {
    node.addEventListener('mousemove', (ev) => {
      tip.textContent = linesFn().join('\n');
      tip.style.display = 'block';
      const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      const y = Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
      tip.style.left = Math.max(0, x) + 'px';
      tip.style.top = Math.max(0, y) + 'px';
    });
    node.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  };

  const section = (id, title, sub) => {
    const s = el('section', { id, class: 'card', 'data-section': id });
    s.appendChild(el('h2', null, title));
    if (sub) s.appendChild(el('p', { class: 'sub' }, sub));
    return s;
  };
  const table = (headers, rows, cls) => {
    const t = el('table', { class: cls || 'grid' });
    const head = el('tr');
    for (const h of headers) head.appendChild(el('th', null, h));
    t.appendChild(el('thead')).appendChild(head);
    const body = t.appendChild(el('tbody'));
    for (const r of rows) {
      const tr = body.appendChild(el('tr'));
      for (const c of r) {
        if (c instanceof Node) tr.appendChild(el('td')).appendChild(c);
        else tr.appendChild(el('td', null, c));
      }
    }
    return t;
  };
  const swatch = (cls) => el('span', { class: 'swatch', style: 'background:' + (COLORS[cls] || COLORS['']) });
  const legend = () => {
    const d = el('div', { class: 'legend' });
    for (const [cls, label] of [['fused', 'fused kernel'], ['fallback', 'fallback (unfused SDPA math)'],
                                ['eager', 'eager (model code)'], ['absent', 'no kernel'],
                                ['unknown', 'device time unknown (kernels not recorded, e.g. graph capture)']]) {
      const item = d.appendChild(el('span', { class: 'legend-item' }));
      item.appendChild(swatch(cls));
      item.appendChild(document.createTextNode(label));
    }
    return d;
  };

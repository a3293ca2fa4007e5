// attnprof dashboard: lays out the view model embedded as JSON (see html_view.cpp).
// Untrusted strings (kernel, module, file names) only ever reach the page through
// textContent or setAttribute; nothing here parses HTML.
(() => {
  'use strict';
  const t0 = performance.now();
  const DATA = JSON.parse(document.getElementById('attnprof-data').textContent);
  const FORMAT = DATA.format;  // how numbers are spelled (format.js)
  const SVGNS = 'http://www.w3.org/2000/svg';
  const COLORS = { fused: '#2e9d4f', fallback: '#e8952f', eager: '#d64541', absent: '#e9ecef', unknown: '#b8c0cc', '': '#adb5bd' };
  const SERIES = ['#3b6fd8', '#d64541', '#2e9d4f', '#8e44ad', '#e8952f', '#16a2b8', '#6c757d'];
  const COMPONENT_LABEL = { qk: 'QK\u1d40', mask: 'mask', softmax: 'softmax', dropout: 'dropout', av: 'AV', fused: 'fused' };

  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const svg = (tag, attrs, text) => {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const shorten = (s, n) => (s.length > n ? '\u2026' + s.slice(s.length - n + 1) : s);

// Runs the dashboard's number formatters (cpp/src/render/dashboard/format.js) outside the page,
// for dashboard_format_test.cpp: `node format_agreement.js FORMAT_JS CASES_JSON`, where
// CASES_JSON is {"format": the page's DATA.format, "cases": [[quantity, value], ...]} and a
// value is a number, null (the page's NaN) or "Infinity" / "-Infinity"; prints the texts as one
// JSON array, in the order of the cases.
'use strict';
const fs = require('fs');

const [formatJs, casesJson] = process.argv.slice(2);
const { format, cases } = JSON.parse(fs.readFileSync(casesJson, 'utf8'));
// format.js is a list of declarations inside the page's one function, which defines FORMAT.
const quantityText = new Function('FORMAT', fs.readFileSync(formatJs, 'utf8') + '\nreturn QUANTITY_TEXT;')(format);
const valueOf = (v) => (typeof v === 'string' ? Number(v) : v);
process.stdout.write(JSON.stringify(cases.map(([quantity, value]) => quantityText[quantity](valueOf(value)))));

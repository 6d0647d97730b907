import type { ReportData } from './collect.js';

/** JSON that is safe inside a <script> element (no `</script>` or `<!--` can close it early). */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * One self-contained HTML file: the report's data as embedded JSON and the bundled page script
 * (Observable Plot included) inline, so it opens offline, from disk, with no request.
 */
/** The report's content security policy: inline script and style only, images as data URLs. */
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

export function renderReportHtml(data: ReportData, pageScript: string): string {
  const title = `dtdr evaluation report · ${data.datasets.map((d) => d.name).join(', ')}`;
  const escape = (s: string) =>
    s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${escape(title)}</title>
<style>
  :root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; background: #fff; }
  body { margin: 0 auto; max-width: 1400px; padding: 1rem 1.5rem 3rem; }
  h1 { font-size: 1.5rem; margin: .5rem 0; }
  h2 { border-bottom: 2px solid #e3e7ef; padding-bottom: .25rem; margin-top: 2rem; }
  .meta { color: #5a6474; font-size: .9rem; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr)); gap: 1rem; }
  figure.chart { margin: 0; padding: .75rem; border: 1px solid #e3e7ef; border-radius: 8px; background: #fbfcfe; }
  figure.chart h3 { margin: 0 0 .5rem; font-size: 1rem; }
  figcaption { color: #5a6474; font-size: .8rem; margin-top: .4rem; }
  table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0 1rem; width: 100%; }
  th, td { border-bottom: 1px solid #e3e7ef; padding: .3rem .5rem; text-align: left; vertical-align: top; }
  table.metrics td:not(:first-child), table.metrics th:not(:first-child) {
    text-align: right; font-variant-numeric: tabular-nums;
  }
  table.misses td:first-child { min-width: 20rem; max-width: 36rem; }
</style>
</head>
<body>
<header><h1>dtdr evaluation report</h1>
<p class="meta">Next-tool retrieval, scored step by step with the ground-truth history, on the test plans of each
dataset. Written by <code>dtdr eval --report</code>.</p></header>
<main></main>
<script type="application/json" id="report-data">${scriptSafeJson(data)}</script>
<script>${pageScript.replace(/<\/script/gi, '<\\/script')}</script>
</body>
</html>
`;
}

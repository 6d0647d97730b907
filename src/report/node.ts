/** Writes the HTML report (Node): the page bundle built beside this file, an atomic write. */
import { existsSync, readFileSync } from 'node:fs';
import { DtdrError } from '../core/base/errors.js';
import { checkWritablePath, writeFileAtomically } from '../storage/file.js';
import type { ReportData } from './collect.js';
import { renderReportHtml } from './html.js';

/** dist/report/page.bundle.js beside the compiled module; from a source checkout, the built one. */
function pageBundleUrl(): URL {
  for (const candidate of ['./page.bundle.js', '../../dist/report/page.bundle.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(url)) return url;
  }
  throw new DtdrError('usage', 'the report page script is not built', {
    hint: 'run `npm run build` in the dtdr folder',
  });
}

/** Checks that a report can be written at `path`, before the evaluation starts. */
export function checkReportPath(path: string): void {
  if (!/\.html?$/i.test(path))
    throw new DtdrError('usage', `--report "${path}" should end in .html`, { hint: 'e.g. --report report.html' });
  checkWritablePath(path, '--report', 'a file name, e.g. report.html');
  pageBundleUrl();
}

export function writeReport(path: string, data: ReportData): void {
  writeFileAtomically(path, renderReportHtml(data, readFileSync(pageBundleUrl(), 'utf8')), 'the report');
}

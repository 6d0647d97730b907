/**
 * How the report page tells methods apart in every chart: a colour (greys for peers), a dash
 * pattern and a marker symbol per method. Apart from page.ts, which draws the charts;
 * `methodStyles` computes them from the report's data.
 */
import type { ReportData } from './collect.js';

const TABLEAU10 = [
  '#4e79a7',
  '#f28e2c',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc949',
  '#af7aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ab',
];
const GREYS = ['#555555', '#777777', '#999999', '#bbbbbb'];
/** A dash pattern and a marker symbol per method too, so lines differ by more than hue. */
const DASHES = ['none', '6,3', '2,3', '8,3,2,3', '12,4', '3,6', '1,2', '10,2,2,2,2,2', '5,5', '14,3,3,3'];
const SYMBOLS = [
  'circle',
  'square',
  'triangle',
  'diamond',
  'star',
  'cross',
  'wye',
  'plus',
  'times',
  'asterisk',
] as const;

/** One colour per method across every chart of the page, and each method's dash pattern and symbol. */
export function methodStyles(data: ReportData) {
  // The default method first, so it gets the palette's strongest colour.
  // Peers (other packages' tool search) last, in greys, so dtdr's methods keep the palette.
  const peers: string[] = data.peers ?? [];
  const allMethods = [
    ...new Set([data.defaultMethod, ...data.datasets.flatMap((d) => d.methods.map((m) => m.method))]),
  ].sort((a, b) => Number(peers.includes(a)) - Number(peers.includes(b)));
  const methodRange = allMethods.map((m, i) =>
    peers.includes(m) ? GREYS[peers.indexOf(m) % GREYS.length] : TABLEAU10[i % TABLEAU10.length],
  );
  const methodColor = (legend = true) => ({ legend, domain: allMethods, range: methodRange });
  // Peers have no sweep: the coverage-against-size legend lists only the methods it draws.
  const swept = allMethods.filter((m) => !peers.includes(m));
  const sweptColor = { legend: true, domain: swept, range: swept.map((m) => methodRange[allMethods.indexOf(m)]) };
  const styleOf = (method: string) => {
    const i = Math.max(0, (allMethods as string[]).indexOf(method));
    return { dash: DASHES[i % DASHES.length], symbol: SYMBOLS[i % SYMBOLS.length] };
  };
  const methodSymbol = { domain: allMethods, range: allMethods.map((m) => styleOf(m).symbol) };
  return { peers, methodColor, swept, sweptColor, styleOf, methodSymbol };
}

/**
 * Helpers the report page's figures (page.ts) and tables (page-tables.ts) share: an element
 * builder and the percentage format. Apart so both modules use them without importing each other.
 */
export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

/**
 * Gateway tool names and texts (pure: no I/O). Every upstream tool is offered as `server__tool`,
 * a name every client accepts (^[a-zA-Z0-9_-]{1,64}$: the rule of the strictest clients, which is
 * also inside dtdr's own tool-name rule). The name depends on the server and the tool alone, never
 * on the order tools were listed in, so a model learned yesterday still names today's tools.
 */
import { DtdrError } from '../core/base/errors.js';

/** The strictest client tool-name rule the gateway's names follow. */
export const CLIENT_NAME_RULE = /^[a-zA-Z0-9_-]{1,64}$/;
/** Longest namespaced name (clients cap tool names at 64 characters). */
export const MAX_NAME = 64;
/** The separator between the server and the tool part. */
export const SEPARATOR = '__';

/** FNV-1a, 32 bits, as 6 hex digits: a short stable tag for a name that had to be changed. */
function tag(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0').slice(0, 6);
}

/**
 * A config's server name as the prefix of its tools' names: letters, digits and "-", with single
 * "_" (a "__" would make the split between server and tool ambiguous), at most 24 characters.
 */
export function serverPrefix(server: string): string {
  const clean = server
    .replace(/[^a-zA-Z0-9_-]/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
  const short = clean.slice(0, 24);
  if (short === server) return short;
  return `${short.slice(0, 17) || 's'}-${tag(server)}`;
}

/**
 * The prefixes of a config's servers, one per server; two servers whose names clean to one prefix
 * (`a.b` and `a_b`) are a config error naming both.
 */
export function serverPrefixes(servers: readonly string[], file?: string): Map<string, string> {
  const out = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const s of servers) {
    const p = serverPrefix(s);
    const other = owner.get(p);
    if (other !== undefined)
      throw new DtdrError('data', `servers "${other}" and "${s}" would both name their tools "${p}${SEPARATOR}…"`, {
        file,
        field: `mcpServers.${s}`,
        hint: 'rename one of them (letters, digits, "-" and "_")',
      });
    owner.set(p, s);
    out.set(s, p);
  }
  return out;
}

/**
 * The name a client sees for upstream `tool` of the server with `prefix`. A tool name that is
 * already valid and short enough is kept as it is; any other (dots, slashes, spaces, too long) is
 * cleaned and gets a tag of the original, so two originals never share a name.
 */
export function namespacedName(prefix: string, tool: string): string {
  const head = `${prefix}${SEPARATOR}`;
  const plain = `${head}${tool}`;
  if (CLIENT_NAME_RULE.test(plain) && !tool.startsWith('_')) return plain;
  const clean = tool.replace(/[^a-zA-Z0-9_-]/g, '_').replace(/^_+/, '') || 't';
  const suffix = `_${tag(tool)}`;
  return `${head}${clean.slice(0, Math.max(1, MAX_NAME - head.length - suffix.length))}${suffix}`;
}

/**
 * The server prefix a namespaced name starts with (undefined for a name with no separator). A
 * prefix never holds "__", so the first separator ends it.
 */
export function prefixOf(name: string): string | undefined {
  const at = name.indexOf(SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}

/** Longest description the gateway passes on (an upstream may send megabytes). */
export const MAX_GATEWAY_DESCRIPTION = 2000;

/**
 * An upstream's text (a tool's description or title) as the gateway passes it on: control
 * characters, bidirectional overrides and zero-width characters (which can hide text from the
 * person reading a transcript) taken out, runs of blank lines cut, at most
 * MAX_GATEWAY_DESCRIPTION characters. It then travels JSON-quoted (see toolView), so it cannot
 * end the gateway's own structure; what it says is still the upstream's words, and the docs say so.
 */
export function cleanText(text: unknown, max = MAX_GATEWAY_DESCRIPTION): string {
  if (typeof text !== 'string') return '';
  const clean = text
    // eslint-disable-next-line no-control-regex -- taking control characters out is the point
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ' ')
    .replace(/[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g, '')
    .replace(/[\u2028\u2029]/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

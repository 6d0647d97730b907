/**
 * The gateway's config: the `mcpServers` JSON that Claude Desktop, Cursor and VS Code use.
 *
 *   { "mcpServers": { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
 *                                "env": { "KEY": "value" } },
 *                     "remote": { "url": "http://127.0.0.1:3000/mcp", "headers": { "Authorization": "Bearer …" } } } }
 *
 * VS Code's `servers` key is read too. Every problem is a DtdrError naming the file and the field.
 */
import { readFileSync } from 'node:fs';
import { DtdrError } from '../core/base/errors.js';
import { serverPrefixes } from './names.js';

/** An upstream started as a child process, spoken to over its stdin/stdout (never through a shell). */
export interface StdioUpstreamConfig {
  name: string;
  /** The server prefix of its tools' names. */
  prefix: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** An upstream reached over Streamable HTTP. */
export interface HttpUpstreamConfig {
  name: string;
  prefix: string;
  url: URL;
  headers: Record<string, string>;
}

/** One upstream of the config, over stdio or HTTP. */
export type UpstreamConfig = StdioUpstreamConfig | HttpUpstreamConfig;

/** Most upstreams one config may name. */
export const MAX_UPSTREAMS = 200;

function stringRecord(value: unknown, file: string, field: string): Record<string, string> {
  if (value === undefined) return {};
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new DtdrError('data', 'must be an object of strings', { file, field });
  for (const [k, v] of Object.entries(value))
    if (typeof v !== 'string')
      throw new DtdrError('data', `must be a string, got ${typeof v}`, { file, field: `${field}.${k}` });
  return { ...(value as Record<string, string>) };
}

/** Reads a parsed config (`file` names it in errors). */
export function parseGatewayConfig(json: unknown, file = 'the config'): UpstreamConfig[] {
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new DtdrError('data', 'the config must be a JSON object with "mcpServers"', { file });
  const root = json as Record<string, unknown>;
  const key = root.mcpServers !== undefined ? 'mcpServers' : root.servers !== undefined ? 'servers' : undefined;
  if (!key)
    throw new DtdrError('data', 'no "mcpServers" object', {
      file,
      hint: 'give {"mcpServers": {"name": {"command": "…", "args": […]}}}, as Claude Desktop and Cursor use',
    });
  const servers = root[key];
  if (!servers || typeof servers !== 'object' || Array.isArray(servers))
    throw new DtdrError('data', 'must be an object of named servers', { file, field: key });
  const entries = Object.entries(servers as Record<string, unknown>);
  if (entries.length === 0) throw new DtdrError('data', 'names no server', { file, field: key });
  if (entries.length > MAX_UPSTREAMS)
    throw new DtdrError('data', `names ${entries.length} servers; the gateway takes at most ${MAX_UPSTREAMS}`, {
      file,
      field: key,
    });
  const prefixes = serverPrefixes(
    entries.map(([name]) => name),
    file,
  );
  const out: UpstreamConfig[] = [];
  for (const [name, raw] of entries) {
    const field = `${key}.${name}`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      throw new DtdrError('data', 'must be an object with "command" or "url"', { file, field });
    const s = raw as Record<string, unknown>;
    if (s.disabled === true) continue;
    const prefix = prefixes.get(name)!;
    if (s.url !== undefined) {
      if (s.command !== undefined)
        throw new DtdrError('data', 'has both "command" and "url"; give one', { file, field });
      if (typeof s.url !== 'string') throw new DtdrError('data', 'must be a string', { file, field: `${field}.url` });
      let url: URL;
      try {
        url = new URL(s.url);
      } catch {
        throw new DtdrError('data', `is not a URL: "${s.url}"`, { file, field: `${field}.url` });
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new DtdrError('data', `must be an http: or https: URL, got "${url.protocol}"`, {
          file,
          field: `${field}.url`,
          hint: 'SSE-only and WebSocket servers are not supported; run them behind their stdio command instead',
        });
      out.push({ name, prefix, url, headers: stringRecord(s.headers, file, `${field}.headers`) });
      continue;
    }
    if (typeof s.command !== 'string' || s.command.trim() === '')
      throw new DtdrError('data', 'needs "command" (a program to run) or "url"', { file, field: `${field}.command` });
    if (s.args !== undefined && (!Array.isArray(s.args) || s.args.some((a) => typeof a !== 'string')))
      throw new DtdrError('data', 'must be an array of strings', { file, field: `${field}.args` });
    if (s.cwd !== undefined && typeof s.cwd !== 'string')
      throw new DtdrError('data', 'must be a string', { file, field: `${field}.cwd` });
    out.push({
      name,
      prefix,
      command: s.command,
      args: [...((s.args as string[] | undefined) ?? [])],
      env: stringRecord(s.env, file, `${field}.env`),
      ...(typeof s.cwd === 'string' ? { cwd: s.cwd } : {}),
    });
  }
  if (out.length === 0) throw new DtdrError('data', 'every server is disabled', { file, field: key });
  return out;
}

/** Reads and parses a config file. */
export function readGatewayConfig(path: string): UpstreamConfig[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new DtdrError('data', `cannot read the config: ${(cause as Error).message}`, { file: path });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new DtdrError('data', `is not JSON: ${(cause as Error).message}`, { file: path });
  }
  return parseGatewayConfig(json, path);
}

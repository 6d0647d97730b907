/**
 * The gateway over Streamable HTTP (`dtdr gateway --http PORT`): one MCP session per client, at
 * `/mcp`. Bound to 127.0.0.1 unless told otherwise; then a request whose Host or Origin is not
 * this machine is refused (a web page cannot reach it by DNS rebinding). With a token, every
 * request needs `Authorization: Bearer <token>`. Bodies past the message limit are refused unread.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway, GatewayMode } from './gateway.js';
import { sessionServer } from './server.js';

/** What {@link serveHttp} takes: where to listen, the token, the mode and the limits. */
export interface HttpOptions {
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Required as `Authorization: Bearer …` when set. */
  token?: string;
  mode: GatewayMode;
  /** Search mode: list the tools dtdr is confident about directly too (see {@link SessionServerOptions}). */
  listConfident?: boolean;
  maxMessageBytes: number;
  /** Most sessions open at once (default 100): one more is refused with 503. */
  maxSessions?: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

const hostname = (host: string): string =>
  host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Reads a request body up to `max` bytes; undefined when it is longer. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Serves the gateway over HTTP; resolves with the server once it listens (its address says the port). */
export async function serveHttp(gateway: Gateway, options: HttpOptions): Promise<HttpServer> {
  const host = options.host ?? '127.0.0.1';
  const local = LOOPBACK.has(host);
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const maxSessions = options.maxSessions ?? 100;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') return jsonError(res, 404, -32000, 'not found: the MCP endpoint is /mcp');
    if (local) {
      const origin = req.headers.origin;
      if (!LOOPBACK.has(hostname(req.headers.host ?? '')))
        return jsonError(res, 403, -32000, 'forbidden: this gateway answers requests to localhost only');
      if (origin && !LOOPBACK.has(hostname(new URL(origin, 'http://x').host)))
        return jsonError(res, 403, -32000, `forbidden: origin ${origin}`);
    }
    if (options.token) {
      const auth = req.headers.authorization ?? '';
      if (!auth.startsWith('Bearer ') || !sameToken(auth.slice(7), options.token)) {
        res.setHeader('www-authenticate', 'Bearer');
        return jsonError(res, 401, -32001, 'unauthorized: give Authorization: Bearer <token>');
      }
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (req.method === 'POST') {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > options.maxMessageBytes)
        return jsonError(res, 413, -32600, `message over ${options.maxMessageBytes} bytes`);
      const body = await readBody(req, options.maxMessageBytes);
      if (!body) return jsonError(res, 413, -32600, `message over ${options.maxMessageBytes} bytes`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return jsonError(res, 400, -32700, 'parse error: the body is not JSON');
      }
      if (existing) return existing.handleRequest(req, res, parsed);
      if (typeof id === 'string') return jsonError(res, 404, -32001, 'session not found; initialize a new one');
      if (!isInitializeRequest(parsed))
        return jsonError(res, 400, -32000, 'bad request: no session; the first message must be initialize');
      if (sessions.size >= maxSessions)
        return jsonError(res, 503, -32000, `too many sessions (${maxSessions}); close one first`);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, transport),
      });
      const { server } = sessionServer(gateway, {
        mode: options.mode,
        ...(options.listConfident ? { listConfident: true } : {}),
        onClose: () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        },
      });
      await server.connect(transport);
      return transport.handleRequest(req, res, parsed);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!existing) return jsonError(res, typeof id === 'string' ? 404 : 400, -32000, 'no such session');
      return existing.handleRequest(req, res);
    }
    res.setHeader('allow', 'GET, POST, DELETE');
    return jsonError(res, 405, -32000, 'method not allowed');
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error) => {
      gateway.log(`http: ${(error as Error).message}`);
      jsonError(res, 500, -32603, 'internal error');
    });
  });
  http.on('close', () => {
    for (const t of sessions.values()) void t.close();
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => resolve());
  });
  gateway.log(`listening on http://${host}:${(http.address() as AddressInfo).port}/mcp`);
  return http;
}

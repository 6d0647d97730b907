/**
 * One upstream MCP server, through an `@modelcontextprotocol/sdk` client: connect (stdio without a
 * shell, or Streamable HTTP), read every page of its tools, follow `list_changed`, and reconnect
 * with backoff when it goes away. While it is down its tools leave the gateway's offer (the
 * gateway asks `up`), and calls to it are answered with an error result by the gateway.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamConfig } from './config.js';

/** A tool as an upstream lists it (only what the gateway reads). */
export interface UpstreamTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/** Timings and caps of an upstream (all in ms or counts). */
export interface UpstreamLimits {
  /** Longest wait for connect + the first tools/list. */
  connectTimeoutMs: number;
  /** Longest wait for one tools/call. */
  callTimeoutMs: number;
  /** Most tools read from one server (more are left out, with a log line). */
  maxTools: number;
  /** Most tools/list pages read from one server. */
  maxPages: number;
  /** First reconnect delay; it doubles up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Largest message read from a stdio upstream. */
  maxMessageBytes: number;
}

export const UPSTREAM_DEFAULTS: UpstreamLimits = {
  connectTimeoutMs: 10_000,
  callTimeoutMs: 60_000,
  maxTools: 1000,
  maxPages: 100,
  backoffMs: 500,
  maxBackoffMs: 30_000,
  maxMessageBytes: 16 * 1024 * 1024,
};

export interface UpstreamEvents {
  /** The server's full tool list, after a connect or a list_changed. */
  tools(upstream: Upstream, tools: UpstreamTool[]): void;
  /** The server went away (its tools leave the offer; a reconnect is scheduled). */
  down(upstream: Upstream, why: string): void;
  log(line: string): void;
}

const timeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref?.();
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });

export class Upstream {
  private client: Client | undefined;
  private connected = false;
  private closed = false;
  private attempt = 0;
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** Coalesced tools/list: one in flight, at most one waiting (a list_changed flood costs two reads). */
  private listing: Promise<void> | undefined;
  private listAgain = false;
  /** Connects and re-lists the tools since start (for logs and tests). */
  connects = 0;
  lists = 0;

  constructor(
    readonly config: UpstreamConfig,
    private readonly events: UpstreamEvents,
    private readonly limits: UpstreamLimits = UPSTREAM_DEFAULTS,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** Whether the server is connected and its tools are listed. */
  get up(): boolean {
    return this.connected;
  }

  /** The child process id of a stdio upstream (for fault tests). */
  get pid(): number | undefined {
    return (this.client?.transport as StdioClientTransport | undefined)?.pid ?? undefined;
  }

  private transport(): Transport {
    const c = this.config;
    if ('url' in c) return new StreamableHTTPClientTransport(c.url, { requestInit: { headers: c.headers } });
    // The SDK spawns with shell: false: arguments reach the program as given, never through a shell.
    return new StdioClientTransport({
      command: c.command,
      args: c.args,
      env: { ...getDefaultEnvironment(), ...c.env },
      ...(c.cwd ? { cwd: c.cwd } : {}),
      stderr: 'pipe',
      maxBufferSize: this.limits.maxMessageBytes,
    });
  }

  /** Connects now; resolves true when its tools are listed, false when this attempt failed (a retry is scheduled). */
  async start(): Promise<boolean> {
    if (this.closed) return false;
    const client = new Client({ name: 'dtdr-gateway', version: '1' }, { capabilities: {} });
    this.client = client;
    const transport = this.transport();
    const stderr = (transport as StdioClientTransport).stderr;
    stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8').trim();
      if (text) this.events.log(`${this.name}: ${text.slice(0, 500)}`);
    });
    client.onclose = () => this.lost(client, 'the connection closed');
    client.onerror = (error) => this.events.log(`${this.name}: ${error.message}`);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.client === client && this.connected) void this.refresh();
    });
    try {
      await timeout(
        (async () => {
          await client.connect(transport);
          this.connects++;
          await this.listNow(client);
        })(),
        this.limits.connectTimeoutMs,
        `connecting to "${this.name}"`,
      );
      if (this.client !== client || this.closed) return false;
      this.connected = true;
      this.attempt = 0;
      this.events.log(`${this.name}: up`);
      return true;
    } catch (error) {
      this.events.log(`${this.name}: ${(error as Error).message}`);
      this.lost(client, (error as Error).message);
      return false;
    }
  }

  /** The connection `client` ended: its tools leave the offer, and a reconnect is scheduled. */
  private lost(client: Client, why: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    const was = this.connected;
    this.connected = false;
    void client.close().catch(() => undefined);
    if (was) this.events.down(this, why);
    if (this.closed) return;
    const delay = Math.min(this.limits.maxBackoffMs, this.limits.backoffMs * 2 ** this.attempt++);
    this.events.log(`${this.name}: down (${why}); reconnecting in ${delay} ms`);
    this.retry = setTimeout(() => void this.start(), delay);
    this.retry.unref?.();
  }

  /** Re-reads the tools (coalesced). */
  refresh(): Promise<void> {
    if (this.listing) {
      this.listAgain = true;
      return this.listing;
    }
    const client = this.client;
    if (!client) return Promise.resolve();
    const run = this.listNow(client)
      .catch((error) => this.events.log(`${this.name}: tools/list failed: ${(error as Error).message}`))
      .finally(() => {
        this.listing = undefined;
        if (this.listAgain) {
          this.listAgain = false;
          void this.refresh();
        }
      });
    this.listing = run;
    return run;
  }

  private async listNow(client: Client): Promise<void> {
    const tools: UpstreamTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: this.limits.connectTimeoutMs,
      });
      for (const t of page.tools) {
        if (typeof t.name !== 'string' || t.name === '' || t.name.length > 256 || seen.has(t.name)) continue;
        seen.add(t.name);
        if (tools.length < this.limits.maxTools) tools.push(t);
      }
      cursor = page.nextCursor;
    } while (cursor && ++pages < this.limits.maxPages);
    if (seen.size > tools.length)
      this.events.log(`${this.name}: lists ${seen.size} tools; the gateway takes the first ${tools.length}`);
    if (this.client !== client) return;
    this.lists++;
    this.events.tools(this, tools);
  }

  /** Calls a tool of this server (its own name); throws when it is down, fails or takes too long. */
  async call(tool: string, args: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
    const client = this.client;
    if (!client || !this.connected) throw new Error(`server "${this.name}" is down`);
    return await client.callTool({ name: tool, arguments: args ?? {} }, undefined, {
      timeout: this.limits.callTimeoutMs,
    });
  }

  /** Disconnects for good (kills a stdio child). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    await client?.close().catch(() => undefined);
  }
}

/**
 * The gateway: upstream MCP servers in, one tool offer per downstream session out. It keeps the
 * catalog of every live upstream tool under its namespaced name, a dtdr model over them (started
 * from their descriptions, then learning from each session's runs), and answers the two things a
 * session asks: which tools fit a request (`findTools`) and run this one (`callTool`, only for a
 * tool offered to that session and still live, with its arguments checked first).
 */
import { existsSync } from 'node:fs';
import type { Encoder } from '../core/base/encoder.js';
import { DtdrError } from '../core/base/errors.js';
import { END, type JsonSchema, type ToolSpec } from '../core/base/types.js';
import { Dtdr } from '../core/dtdr.js';
import type { Refitter } from '../core/model/refit.js';
import type { ChainPlanInput } from '../core/plans/input.js';
import { argumentProblems } from '../core/prompts/schema-check.js';
import { promptReason } from '../core/prompts/reason.js';
import { BUNDLED_ENCODER_ID } from '../encoders/onnx.js';
import { readModelFile, writeModelFile } from '../storage/file.js';
import type { UpstreamConfig } from './config.js';
import { cleanText, namespacedName, prefixOf } from './names.js';
import { GatewaySession } from './session.js';
import { Upstream, UPSTREAM_DEFAULTS, type UpstreamLimits, type UpstreamTool } from './upstream.js';
import { stepTools, WordRanking, WORDS_NOTE } from './words.js';

/** How the client sees the tools: `find_tools` + `call_tool`, or the step's set listed directly. */
export type GatewayMode = 'search' | 'filter';

/** What {@link Gateway.start} takes: the upstreams, the encoder, where to keep the model, the limits. */
export interface GatewayOptions {
  servers: UpstreamConfig[];
  /** The sentence encoder (the bundled one from the CLI). */
  encoder: Encoder;
  /** Where the learned model is kept; undefined: nothing is stored (learning lasts for this process). */
  modelPath?: string;
  /** Learn from sessions (default true). */
  learn?: boolean;
  /** Tools `find_tools` returns by default (default 5). */
  findTools?: number;
  /** Most tools over all upstreams (default 10,000): more are left out, with a log line. */
  maxTools?: number;
  /** Longest start-up wait for the upstreams (default 10 s): slower ones join when they are ready. */
  startupWaitMs?: number;
  limits?: Partial<UpstreamLimits>;
  /** Where refits run (the CLI passes a worker thread). */
  refitter?: Refitter;
  /** Words fused into unsure tools-only steps (default: only with the bundled encoder, which it was chosen for). */
  wordFusion?: boolean;
  /** Called with each log line (a server up or down, a tool list read, a run that could not be learned). */
  log?: (line: string) => void;
}

/** A live upstream tool under its namespaced name. */
export interface CatalogEntry {
  name: string;
  server: string;
  /** Its name on its server. */
  tool: string;
  description: string;
  inputSchema: JsonSchema;
}

/** A tool as the gateway shows it to a client. */
export interface ToolView {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** What `findTools` answers. */
export interface FoundTools {
  tools: ToolView[];
  /** True when dtdr is sure of its set. */
  confident: boolean;
  /** dtdr's own candidate set among `tools` (first; the rest fill up from its ranking); not in a client's answer. */
  set: string[];
  /** dtdr's reason, in words (why it is unsure, or what it ranked on). */
  reason: string;
}

/** An MCP tools/call result. */
export type CallResult = { content: { type: string; text?: string }[]; isError?: boolean; [key: string]: unknown };

export const errorResult = (text: string): CallResult => ({ content: [{ type: 'text', text }], isError: true });

/** Most tools one find_tools answer may hold. */
export const MAX_FIND = 20;

/** The gateway: start it with {@link Gateway.start}, then serve it with serveStdio, serveHttp or sessionServer. */
export class Gateway {
  /** @internal The upstreams by config name (tests reach into them; apps read {@link Gateway.status}). */
  readonly upstreams = new Map<string, Upstream>();
  private readonly catalog = new Map<string, CatalogEntry>();
  private modelNow: Dtdr | undefined;
  /** The model's tool names (see knownNames); cleared whenever the gateway adds or removes tools. */
  private known: { model: Dtdr; names: Set<string> } | undefined;
  private wordIndex: WordRanking | undefined;
  /** Tool-set changes and model creation, one at a time, in order. */
  private chain: Promise<void> = Promise.resolve();
  /** Learning and saving, one at a time. */
  private saving: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private sessions = 0;
  /** Runs learned by this process. */
  learnedRuns = 0;
  /** Where the gateway's log lines go (GatewayOptions.log; by default nowhere). */
  readonly log: (line: string) => void;

  private constructor(readonly options: GatewayOptions) {
    this.log = options.log ?? (() => undefined);
  }

  /** Starts the upstreams and the model; waits at most `startupWaitMs` for slow upstreams. */
  static async start(options: GatewayOptions): Promise<Gateway> {
    const g = new Gateway(options);
    if (options.modelPath && existsSync(options.modelPath)) {
      g.modelNow = Dtdr.load(readModelFile(options.modelPath), options.encoder, options.modelPath, {
        ...(options.refitter ? { refitter: options.refitter } : {}),
      });
      // Tools of servers no longer in the config leave the model (their learning stays for a re-add).
      const prefixes = new Set(options.servers.map((s) => s.prefix));
      const gone = g.modelNow.tools.map((t) => t.name).filter((n) => !prefixes.has(prefixOf(n) ?? ''));
      if (gone.length > 0 && gone.length < g.modelNow.tools.length) await g.modelNow.removeTools(gone);
    }
    const limits = { ...UPSTREAM_DEFAULTS, ...options.limits };
    for (const config of options.servers) {
      const upstream = new Upstream(
        config,
        {
          tools: (u, tools) => g.sync(u, tools),
          down: () => g.changed(),
          log: g.log,
        },
        limits,
      );
      g.upstreams.set(config.name, upstream);
    }
    const wait = options.startupWaitMs ?? limits.connectTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all([...g.upstreams.values()].map((u) => u.start())),
      new Promise((r) => (timer = setTimeout(r, wait))),
    ]);
    clearTimeout(timer);
    await g.chain;
    return g;
  }

  /** Each configured server: whether it is up, and how many of its tools are live. */
  status(): { name: string; up: boolean; tools: number }[] {
    return [...this.upstreams.values()].map((u) => ({
      name: u.name,
      up: u.up,
      tools: u.up ? [...this.catalog.values()].filter((e) => e.server === u.name).length : 0,
    }));
  }

  /** The model (undefined until some upstream has listed a tool). */
  get model(): Dtdr | undefined {
    return this.modelNow;
  }

  /** Called when the live tool set changes (a server's list changed, one went down or came up). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  /** Applies a server's new tool list to the catalog and the model. */
  private sync(upstream: Upstream, tools: UpstreamTool[]): void {
    const work = this.chain.then(() => this.syncNow(upstream, tools));
    this.chain = work.catch((error) => this.log(`tool list of "${upstream.name}": ${(error as Error).message}`));
  }

  private async syncNow(upstream: Upstream, tools: UpstreamTool[]): Promise<void> {
    const max = this.options.maxTools ?? 10_000;
    const server = upstream.name;
    const before = new Set([...this.catalog.values()].filter((e) => e.server === server).map((e) => e.name));
    const next = new Map<string, CatalogEntry>();
    let room = max - (this.catalog.size - before.size);
    for (const t of tools) {
      const name = namespacedName(upstream.config.prefix, t.name);
      if (next.has(name)) continue;
      if (room-- <= 0) {
        this.log(`${server}: the gateway holds at most ${max} tools; ${t.name} and later ones are left out`);
        break;
      }
      const description = cleanText([t.title, t.description].filter((s) => typeof s === 'string' && s).join(': '));
      const schema =
        t.inputSchema && typeof t.inputSchema === 'object' && !Array.isArray(t.inputSchema)
          ? (t.inputSchema as JsonSchema)
          : ({ type: 'object' } as JsonSchema);
      next.set(name, { name, server, tool: t.name, description: description || t.name, inputSchema: schema });
    }
    for (const name of before) if (!next.has(name)) this.catalog.delete(name);
    for (const [name, entry] of next) this.catalog.set(name, entry);
    this.log(`${server}: ${next.size} tools`);
    const specs = (entries: Iterable<CatalogEntry>): ToolSpec[] =>
      [...entries].map((e) => ({ name: e.name, description: e.description }));
    if (!this.modelNow) {
      if (this.catalog.size > 0)
        this.modelNow = await Dtdr.train({
          tools: specs(this.catalog.values()),
          plans: [],
          encoder: this.options.encoder,
          ...(this.options.refitter ? { refitter: this.options.refitter } : {}),
        });
    } else {
      const model = this.modelNow;
      const known = new Set(model.tools.map((t) => t.name));
      const added = [...next.values()].filter((e) => !known.has(e.name));
      const removed = [...before].filter((n) => !next.has(n) && known.has(n));
      this.known = undefined;
      if (added.length > 0) await model.addTools(specs(added));
      if (removed.length > 0 && removed.length < model.tools.length) await model.removeTools(removed);
      this.known = undefined;
    }
    this.changed();
  }

  /** Waits for the tool-list changes received so far to reach the model. */
  async settled(): Promise<void> {
    await this.chain;
  }

  /** Whether `name` is a live tool now: listed by its server, and the server up. */
  live(name: string): { listed: boolean; up: boolean } | undefined {
    const entry = this.catalog.get(name);
    if (!entry) return undefined;
    return { listed: true, up: this.upstreams.get(entry.server)?.up === true };
  }

  /** Whether `name` is a live tool now (listed, and its server up): one lookup, for the ranking loop. */
  private isLive(name: string): boolean {
    const entry = this.catalog.get(name);
    return entry !== undefined && this.upstreams.get(entry.server)?.up === true;
  }

  /** BM25 over the model's tools, for its rankings' labels; rebuilt when they change. */
  private words(model: Dtdr, labels: readonly string[]): WordRanking {
    if (this.wordIndex?.labels !== labels) this.wordIndex = new WordRanking(labels, model.tools);
    return this.wordIndex;
  }

  /** The model's tool names, cached until the gateway next changes the model's tools. */
  private knownNames(model: Dtdr): Set<string> {
    if (this.known?.model !== model) this.known = { model, names: new Set(model.tools.map((t) => t.name)) };
    return this.known.names;
  }

  /** Every live tool's name (its server up). */
  liveTools(): string[] {
    return [...this.catalog.values()].filter((e) => this.upstreams.get(e.server)?.up).map((e) => e.name);
  }

  /** A tool as the client sees it. */
  view(name: string): ToolView | undefined {
    const e = this.catalog.get(name);
    return e && { name: e.name, description: e.description, inputSchema: e.inputSchema };
  }

  /** A new downstream session. */
  session(): GatewaySession {
    // The id holds when the session started (base 36 ms): `dtdr gateway forget --since` reads it.
    return new GatewaySession(`gateway/${Date.now().toString(36)}/${++this.sessions}`);
  }

  /**
   * The tools for `request` given the session's calls since it was asked: dtdr's set first, then
   * its ranking, up to `limit`; all live. Marks them offered to the session.
   */
  async findTools(session: GatewaySession, request: string, limit = this.options.findTools ?? 5): Promise<FoundTools> {
    if (typeof request !== 'string' || request.trim() === '')
      throw new DtdrError('options', 'find_tools needs "request": what the user asked for, in words', {
        field: 'request',
      });
    const finished = session.ask(request);
    if (finished) this.learnRun(finished);
    return this.step(session, Math.max(1, Math.min(MAX_FIND, Math.floor(limit))));
  }

  /** The set for the session's next step (its request and calls so far); marks it offered. */
  async step(session: GatewaySession, limit = this.options.findTools ?? 5): Promise<FoundTools> {
    const request = session.currentRequest;
    const model = this.modelNow;
    if (request === undefined || !model)
      return {
        tools: [],
        confident: false,
        set: [],
        reason: model ? 'no request yet' : 'no upstream server is up yet',
      };
    // Per call, nothing here walks all the tools: known names are cached per tool set, liveness looked up per tool
    // taken, the ranking read only as far as needed (a fused step reads each tool's two scores once: words.ts).
    const known = session.history.length > 0 ? this.knownNames(model) : undefined;
    const history = known ? session.history.filter((h) => known.has(h)) : [];
    const retrieval = await model.retrieve(request, history);
    const { names, set, fromWords } = stepTools(
      retrieval,
      limit,
      (tool) => this.isLive(tool),
      (this.options.wordFusion ?? this.options.encoder.id === BUNDLED_ENCODER_ID)
        ? (ranking) => this.words(model, ranking.labels).fuse(ranking, request)
        : undefined,
    );
    session.offer(names);
    const ended = retrieval.candidates.some((c) => c.tool === END);
    // What the client's model reads: the first cause (the whole reason is in dtdr's logs and the app's own retrieve).
    const reason =
      (promptReason(retrieval.reason) ??
        `${retrieval.confident ? 'confident' : 'unsure'}: ranked on the request` +
          (history.length > 0 ? ` and the ${history.length} call(s) so far` : '') +
          (ended ? '; the task may be complete' : '')) + (fromWords ? `; ${WORDS_NOTE}` : '');
    return {
      tools: names.map((n) => this.view(n)!),
      confident: retrieval.confident,
      set,
      reason,
    };
  }

  /**
   * Runs a tool for a session: refused (never forwarded) unless it was offered to the session, is
   * still listed and its server is up, and the arguments match its input schema.
   */
  async callTool(session: GatewaySession, name: unknown, args: unknown): Promise<CallResult> {
    const check = session.check(name, typeof name === 'string' ? this.live(name) : undefined);
    if (!check.ok) return errorResult(`dtdr gateway: ${check.reason}`);
    const entry = this.catalog.get(name as string)!;
    if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args)))
      return errorResult(`dtdr gateway: "arguments" must be an object`);
    let problems: string[];
    try {
      problems = argumentProblems(entry.inputSchema, args ?? {});
    } catch (error) {
      // A schema the checker cannot use (too deep, not a schema): the upstream checks its own arguments.
      this.log(`${entry.server}: cannot check arguments of ${entry.tool}: ${(error as Error).message}`);
      problems = [];
    }
    if (problems.length > 0)
      return errorResult(
        `dtdr gateway: the arguments do not match the input schema of "${entry.name}": ` +
          problems.slice(0, 10).join('; '),
      );
    const upstream = this.upstreams.get(entry.server)!;
    const run = session.run;
    let result: CallResult;
    try {
      result = (await upstream.call(entry.tool, args as Record<string, unknown> | undefined)) as CallResult;
    } catch (error) {
      return errorResult(
        `dtdr gateway: server "${entry.server}" could not run ${entry.tool}: ${(error as Error).message}`,
      );
    }
    if (!result?.isError) session.record(entry.name, run);
    return result;
  }

  /** Ends a session: its run in progress is learned. */
  endSession(session: GatewaySession): Promise<void> {
    const run = session.finish();
    if (run) this.learnRun(run);
    return this.saving;
  }

  /** Learns one run and saves the model (in order, one at a time); failures are logged. */
  private learnRun(run: ChainPlanInput): void {
    if (this.options.learn === false) return;
    this.saving = this.saving.then(async () => {
      const model = this.modelNow;
      if (!model) return;
      const known = new Set(model.tools.map((t) => t.name));
      // A tool removed since it was called cannot be learned: the run keeps the others.
      const tools = run.tools.filter((t) => known.has(t));
      if (tools.length === 0) return;
      try {
        await model.learn([{ ...run, tools }]);
        this.learnedRuns++;
        if (this.options.modelPath) writeModelFile(this.options.modelPath, model.toJSON());
      } catch (error) {
        this.log(`could not learn run ${run.id}: ${(error as Error).message}`);
      }
    });
  }

  /** Waits for the runs handed to learning so far to be learned and saved. */
  async saved(): Promise<void> {
    await this.saving;
  }

  /** Stops every upstream; learning in flight is finished first. */
  async close(): Promise<void> {
    await this.saving;
    await Promise.all([...this.upstreams.values()].map((u) => u.close()));
    await this.options.refitter?.close();
  }
}

/**
 * One downstream session's state (pure: no I/O): the tools offered to it, the calls that ran, and
 * the runs it forms for learning. A run is one request given to `find_tools` and the calls made
 * after it, up to the next different request or the end of the session.
 */
import { MAX_PLAN_STEPS } from '../core/base/limits.js';
import type { ChainPlanInput } from '../core/plans/input.js';

/** Why a call was refused, or that it may go on. */
export type CallCheck = { ok: true } | { ok: false; reason: string };

/** What the gateway knows of a tool when a call names it. */
export interface LiveTool {
  /** Whether its server lists it now. */
  listed: boolean;
  /** Whether its server is connected now. */
  up: boolean;
}

/** One downstream session: what it was offered, its run in progress, and the check each call passes. */
export class GatewaySession {
  /** Every tool this session was ever offered (find_tools results, filter-mode listings). */
  private readonly offered = new Set<string>();
  private request: string | undefined;
  private calls: string[] = [];
  private runs = 0;
  /** Which run is in progress: changes whenever one ends. */
  private epoch = 0;

  constructor(readonly id: string) {}

  /** The request of the run in progress (the latest find_tools request). */
  get currentRequest(): string | undefined {
    return this.request;
  }

  /** The calls of the run in progress, oldest first: the history dtdr ranks the next step with. */
  get history(): readonly string[] {
    return this.calls;
  }

  /** Whether `name` was offered to this session. */
  wasOffered(name: string): boolean {
    return this.offered.has(name);
  }

  /** The tools offered so far, in the order first offered. */
  get offeredTools(): string[] {
    return [...this.offered];
  }

  /**
   * A find_tools request. A request other than the run's starts a new run: the finished one is
   * returned (to learn) when it made calls.
   */
  ask(request: string): ChainPlanInput | undefined {
    if (request === this.request) return undefined;
    const finished = this.finish();
    this.request = request;
    return finished;
  }

  /** Marks tools as offered to this session. */
  offer(names: Iterable<string>): void {
    for (const n of names) this.offered.add(n);
  }

  /**
   * Whether a call of `name` may be forwarded: only a tool offered to this session, still listed by
   * its server, with the server up. Anything else is refused with a reason the client can read.
   */
  check(name: unknown, live: LiveTool | undefined): CallCheck {
    if (typeof name !== 'string' || name === '') return { ok: false, reason: 'call_tool needs "name", a string' };
    if (!this.offered.has(name))
      return {
        ok: false,
        reason:
          `tool "${name}" was not offered in the current session; call find_tools with your request first` +
          (this.offered.size > 0 ? ` (offered so far: ${this.offeredTools.slice(0, 20).join(', ')})` : ''),
      };
    if (!live || !live.listed) return { ok: false, reason: `tool "${name}" has been removed by its server` };
    if (!live.up) return { ok: false, reason: `the server of tool "${name}" is down; try again later` };
    return { ok: true };
  }

  /** The run in progress, as a token: a call passes it to `record` from when it started. */
  get run(): number {
    return this.epoch;
  }

  /**
   * A call that ran (an error result from the tool is not a call of the run). `run` is the token
   * taken when the call started: a call that was still running when its run ended (a client that
   * sends the next find_tools before the answer) belongs to no run, rather than to the next one.
   */
  record(name: string, run = this.epoch): void {
    // A run is a plan, and plans stop at MAX_PLAN_STEPS calls: later calls are not learned.
    if (run === this.epoch && this.calls.length < MAX_PLAN_STEPS) this.calls.push(name);
  }

  /** Ends the run in progress: returned (to learn) when it made calls. */
  finish(): ChainPlanInput | undefined {
    const run =
      this.request !== undefined && this.calls.length > 0
        ? { id: `${this.id}/${++this.runs}`, query: this.request, tools: [...this.calls] }
        : undefined;
    this.request = undefined;
    this.calls = [];
    this.epoch++;
    return run;
  }
}

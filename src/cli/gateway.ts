/**
 * `dtdr gateway`: the MCP gateway (src/gateway) from the command line, and `dtdr gateway forget`.
 * The gateway's modules need @modelcontextprotocol/sdk (an optional peer): they are imported only
 * when the command runs, so every other command works without it.
 */
import { existsSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DtdrError } from '../core/base/errors.js';
import { writeModelFile } from '../storage/file.js';
import { refitWorker } from '../workers/node.js';
import { intOption, parseCommandArgs } from './args.js';
import { loadModelForCli } from './retrieve.js';
import { encoderOptions, loadCliEncoder } from './shared.js';

/** How often the gateway checks that the process that started it is still there. */
const PARENT_CHECK_MS = 1000;

/** Where the gateway keeps what it learned unless --model says otherwise. */
export const defaultGatewayModel = (): string =>
  process.env.DTDR_GATEWAY_MODEL || join(homedir(), '.dtdr', 'gateway.model.dtdr');

export const gatewayHelp = `dtdr gateway --config mcp.json [--http PORT] [--mode search|filter] [--model FILE] [options]
dtdr gateway forget [--model FILE] (--all | --request TEXT | --since DATE)

An MCP server in front of the servers named in mcp.json (the "mcpServers" config of Claude
Desktop, Cursor and VS Code: "command"/"args"/"env" for stdio servers, "url" for HTTP ones).
Point a client at it instead of at those servers: it shows the client the few tools each request
needs, and learns from the calls the client makes. Serves one client over stdin/stdout, or many
over Streamable HTTP at http://127.0.0.1:PORT/mcp with --http.

  --config FILE         the mcpServers JSON (required)
  --mode M              search (default): the client sees find_tools and call_tool; filter: it sees
                        find_tools and the step's tools, listed directly, with list_changed after
                        each call (for clients that follow list_changed)
  --list-confident      search mode: also list, to call by name, the tools of the latest find_tools
                        answer when dtdr is confident of them (list_changed when they change)
  --model FILE          where the learned model is kept (default ~/.dtdr/gateway.model.dtdr, or
                        $DTDR_GATEWAY_MODEL). It stores the tools' names and descriptions, and for
                        each run the request given to find_tools and the names of the tools called,
                        never arguments or results
  --no-learn            learn nothing and store nothing
  --tools N             tools find_tools returns by default (default 5, at most 20)
  --http PORT           serve Streamable HTTP on PORT (0: any free port, printed on stderr)
  --host H              the address to bind with --http (default 127.0.0.1: this machine only)
  --token T             with --http: require "Authorization: Bearer T" (or set $DTDR_GATEWAY_TOKEN)
  --max-tools N         most tools over all servers (default 10000)
  --max-message BYTES   largest message accepted from a client (default 4194304; from a server: 16 MiB)
  --startup-wait MS     longest wait for the servers at start (default 10000); slower ones join later
  --call-timeout MS     longest wait for one tool call (default 60000)
  --detach              keep serving after the process that started it exits (nohup, &); by default
                        the gateway stops with it, so that stopping npx stops the gateway under it
  --quiet               no log lines on stderr

forget removes learned runs from the model file (stop the gateway first):
  --all                 delete the model file: the next gateway starts from the tools' descriptions
  --request TEXT        runs whose request contains TEXT (any case)
  --since DATE          runs from sessions started at or after DATE (ISO 8601, e.g. 2026-11-28)`;

/** The gateway's modules, with a clear error when the MCP SDK is not installed. */
async function gatewayModules() {
  try {
    const [config, gateway, server, http] = await Promise.all([
      import('../gateway/config.js'),
      import('../gateway/gateway.js'),
      import('../gateway/server.js'),
      import('../gateway/http.js'),
    ]);
    return { ...config, ...gateway, ...server, ...http };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && /modelcontextprotocol/.test(String(error)))
      throw new DtdrError('usage', 'dtdr gateway needs the MCP SDK', {
        hint:
          'npm install @modelcontextprotocol/sdk (beside dtdr), or run it with ' +
          'npx -p dtdr -p @modelcontextprotocol/sdk dtdr gateway',
      });
    throw error;
  }
}

export async function gatewayCommand(argv: string[]): Promise<void> {
  if (argv[0] === 'forget') return forgetCommand(argv.slice(1));
  const parent = process.ppid; // before start-up: a parent gone while servers connect counts too
  const { values } = parseCommandArgs('gateway', argv, {
    config: { type: 'string' },
    mode: { type: 'string' },
    model: { type: 'string' },
    'no-learn': { type: 'boolean' },
    'list-confident': { type: 'boolean' },
    tools: { type: 'string' },
    http: { type: 'string' },
    host: { type: 'string' },
    token: { type: 'string' },
    'max-tools': { type: 'string' },
    'max-message': { type: 'string' },
    'startup-wait': { type: 'string' },
    'call-timeout': { type: 'string' },
    quiet: { type: 'boolean' },
    detach: { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.config) throw new DtdrError('usage', 'gateway: --config FILE is required (the mcpServers JSON)');
  const mode = (values.mode as string | undefined) ?? 'search';
  if (mode !== 'search' && mode !== 'filter')
    throw new DtdrError('usage', `--mode must be search or filter, got "${mode}"`);
  const listConfident = values['list-confident'] === true;
  if (listConfident && mode !== 'search')
    throw new DtdrError('usage', '--list-confident applies to --mode search (filter mode lists the step set itself)');
  const tools = intOption(values.tools as string | undefined, 'tools', 5, 1);
  if (tools > 20) throw new DtdrError('usage', `--tools must be at most 20, got ${tools}`);
  const port = values.http === undefined ? undefined : intOption(values.http as string, 'http', 0, 0);
  if (port !== undefined && port > 65535) throw new DtdrError('usage', `--http must be a port (0–65535), got ${port}`);
  const token = (values.token as string | undefined) ?? process.env.DTDR_GATEWAY_TOKEN;
  if (token !== undefined && port === undefined)
    throw new DtdrError('usage', '--token applies to --http only (stdio has no one else to keep out)');
  const maxMessageBytes = intOption(values['max-message'] as string | undefined, 'max-message', 4 * 1024 * 1024, 1024);
  const startupWait = intOption(values['startup-wait'] as string | undefined, 'startup-wait', 10_000, 0);
  const m = await gatewayModules();
  const servers = m.readGatewayConfig(values.config as string);
  const quiet = values.quiet === true;
  const log = (line: string) => quiet || console.error(`dtdr gateway: ${line}`);
  const learn = values['no-learn'] !== true;
  const encoder = await loadCliEncoder(values);
  const gateway = await m.Gateway.start({
    servers,
    encoder,
    learn,
    ...(learn ? { modelPath: (values.model as string | undefined) ?? defaultGatewayModel() } : {}),
    findTools: tools,
    maxTools: intOption(values['max-tools'] as string | undefined, 'max-tools', 10_000, 1),
    startupWaitMs: startupWait,
    limits: {
      // A server gets the whole start-up wait to connect (a slow machine), and 10 s at least later on.
      connectTimeoutMs: Math.max(10_000, startupWait),
      callTimeoutMs: intOption(values['call-timeout'] as string | undefined, 'call-timeout', 60_000, 1),
    },
    refitter: refitWorker(),
    log,
  });
  const up = gateway.status().filter((s) => s.up).length;
  log(`${gateway.liveTools().length} tools from ${up} of ${servers.length} servers; mode ${mode}`);
  stopWithParent(() => gateway.close(), values.detach === true ? undefined : parent);
  if (port === undefined) {
    await m.serveStdio(gateway, mode, maxMessageBytes, { listConfident });
    await gateway.close();
    return;
  }
  await m.serveHttp(gateway, {
    port,
    mode,
    maxMessageBytes,
    listConfident,
    ...(values.host ? { host: values.host as string } : {}),
    ...(token ? { token } : {}),
  });
  // Serves until stopped (SIGINT/SIGTERM).
  await new Promise(() => undefined);
}

async function forgetCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('gateway forget', argv, {
    model: { type: 'string' },
    all: { type: 'boolean' },
    request: { type: 'string' },
    since: { type: 'string' },
    ...encoderOptions,
  });
  const path = (values.model as string | undefined) ?? defaultGatewayModel();
  const chosen = ['all', 'request', 'since'].filter((k) => values[k] !== undefined);
  if (chosen.length !== 1)
    throw new DtdrError('usage', 'gateway forget: give one of --all, --request TEXT, --since DATE');
  if (!existsSync(path)) {
    console.log(`no model at ${path}: nothing to forget`);
    return;
  }
  if (values.all) {
    rmSync(path);
    console.log(`deleted ${path}: the next gateway starts from the tools' descriptions`);
    return;
  }
  let match: (id: string, query: string) => boolean;
  if (values.request !== undefined) {
    const text = (values.request as string).toLowerCase();
    if (!text) throw new DtdrError('usage', '--request needs some text');
    match = (_id, query) => query.toLowerCase().includes(text);
  } else {
    const since = Date.parse(values.since as string);
    if (!Number.isFinite(since))
      throw new DtdrError('usage', `--since must be a date (ISO 8601, e.g. 2026-11-28), got "${values.since}"`);
    match = (id) => {
      const started = /^gateway\/([0-9a-z]+)\//.exec(id)?.[1];
      return started !== undefined && parseInt(started, 36) >= since;
    };
  }
  const model = await loadModelForCli(path, values);
  const before = model.learnedCount;
  const forgotten = await model.forget((plan) => match(plan.id, plan.query));
  await model.settle();
  writeModelFile(path, model.toJSON());
  console.log(
    `forgot ${forgotten} run${forgotten === 1 ? '' : 's'}; ${before - forgotten} remain in ${path}` +
      (forgotten === 0 ? ' (runs older than the learning window can only go with --all)' : ''),
  );
}

/**
 * Closes the gateway (once) and exits on SIGINT or SIGTERM, and when the process that started it
 * (`parent`, unless --detach) is gone: under `npx`, a SIGTERM to npx ends npx and its shell but not
 * this process (npm 11 does not pass it on), which would live on with another parent. (On Windows a
 * process keeps its parent id, and this check never fires.)
 */
function stopWithParent(close: () => Promise<void>, parent: number | undefined): void {
  let closing: Promise<void> | undefined;
  const stop = () => {
    closing ??= close().then(() => process.exit(0));
    return closing;
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  if (parent === undefined) return;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    void stop();
  }, PARENT_CHECK_MS);
  watch.unref();
}

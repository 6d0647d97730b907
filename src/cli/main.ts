/**
 * `dtdr <command>`: every failure the user can fix ends in one line on stderr and a non-zero exit
 * (1 for bad input, 2 for bad usage); DTDR_DEBUG=1 adds the stack trace.
 */
import { closestToolName } from '../core/base/checks.js';
import { DtdrError } from '../core/base/errors.js';
import { registerPaperMethods } from '../core/retrieval/paper-methods.js';
import { demoCommand, demoHelp } from './demo.js';
import { embedCommand, embedHelp } from './embed.js';
import { evalCommand, evalHelp } from './eval.js';
import { gatewayCommand, gatewayHelp } from './gateway.js';
import { promptCommand, promptHelp } from './prompt.js';
import { retrieveCommand, retrieveHelp } from './retrieve.js';
import { trainCommand, trainHelp } from './train.js';

interface Command {
  summary: string;
  help: string;
  run(argv: string[]): Promise<void>;
}

const commands: Record<string, Command> = {
  demo: {
    summary: 'train on the built-in assistant tool set and walk example queries (npm start)',
    help: demoHelp,
    run: demoCommand,
  },
  train: { summary: 'train a retriever on demonstrations and write a model file', help: trainHelp, run: trainCommand },
  retrieve: {
    summary: 'rank the next tools for a query and history with a model file',
    help: retrieveHelp,
    run: retrieveCommand,
  },
  prompt: {
    summary: 'print the prompt for the next step (hard/soft mask, weighted) with its Qwen3 token count',
    help: promptHelp,
    run: promptCommand,
  },
  eval: {
    summary: 'compare retrieval methods on a dataset (MRR, F1, top-1, recall@5, coverage)',
    help: evalHelp,
    run: evalCommand,
  },
  embed: { summary: 'embed lines of text with the sentence encoder', help: embedHelp, run: embedCommand },
  gateway: {
    summary: 'an MCP server in front of many that shows each client the few tools it needs, and learns',
    help: gatewayHelp,
    run: gatewayCommand,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    'dtdr — on-device dynamic tool retrieval',
    '',
    'usage: dtdr <command> [options]   (dtdr <command> --help for its options)',
    '',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  registerPaperMethods(); // every command takes any method
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    const { createRequire } = await import('node:module');
    console.log((createRequire(import.meta.url)('../../package.json') as { version: string }).version);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    const close = closestToolName(name, Object.keys(commands));
    throw new DtdrError('usage', `unknown command "${name}"${close ? `; did you mean "${close}"?` : ''}`, {
      hint: `one of: ${Object.keys(commands).join(', ')}`,
    });
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return 0;
  }
  await command.run(rest);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    if (DtdrError.isInstance(error)) {
      console.error(`dtdr: ${error.message}`);
      process.exitCode = error.code === 'usage' ? 2 : 1;
    } else {
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      console.error(`dtdr: unexpected error: ${message} (set DTDR_DEBUG=1 for details)`);
      process.exitCode = 1;
    }
    if (process.env.DTDR_DEBUG) console.error(error);
  },
);

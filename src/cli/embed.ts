import { createInterface } from 'node:readline';
import { loadEncoder } from '../encoders/node.js';
import { intOption, parseCommandArgs } from './args.js';

export const embedHelp = `dtdr embed [--encoder <model id | folder>] [--batch 256]

Reads one text per line from standard input and prints one JSON array (a unit-norm vector, or
zeros for text with no known word) per line. The default encoder is the bundled offline model.`;

export async function embedCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('embed', argv, {
    encoder: { type: 'string' },
    batch: { type: 'string' },
    'allow-remote': { type: 'boolean' },
  });
  const batchSize = intOption(values.batch as string | undefined, 'batch', 256, 1);
  const encoder = await loadEncoder({
    model: values.encoder as string | undefined,
    allowRemoteModels: values['allow-remote'] === true,
    batchSize,
  });
  if (process.stdin.isTTY) process.stderr.write('dtdr embed: reading lines from standard input (Ctrl-D to end)\n');
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let batch: string[] = [];
  const flush = async () => {
    const vectors = await encoder.embed(batch);
    process.stdout.write(vectors.map((v) => JSON.stringify(Array.from(v))).join('\n') + '\n');
    batch = [];
  };
  for await (const line of lines) {
    batch.push(line);
    if (batch.length >= batchSize) await flush();
  }
  if (batch.length > 0) await flush();
  await encoder.dispose?.();
}

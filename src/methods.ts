/**
 * The paper's methods and the baselines, for apps that train or load them: `import 'dtdr/methods'`
 * once registers random, BM25, QTS, DR, LR, DTDR-C, DTDR-L, DTDR-H and DTDR-CB beside the default
 * DTDR-G. The Node entry, the CLI and `evaluateMethods` register them already; a browser app that ships only
 * DTDR-G leaves it out and its bundle carries none of their code.
 *
 * @module dtdr/methods
 */
import { PAPER_METHODS, registerPaperMethods } from './core/retrieval/paper-methods.js';
import type { MethodName } from './core/retrieval/types.js';

registerPaperMethods();

/** The methods this module registers, in the order `dtdr eval` lists them. */
export const PAPER_METHOD_NAMES: readonly MethodName[] = PAPER_METHODS.map((m) => m.name);

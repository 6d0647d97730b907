/**
 * Where DTDR-G's training code plugs in: the retriever ranks without it and calls it to fit and to
 * learn; training.ts installs it when loaded (on demand in an app, load-training.ts; imported by a
 * worker that fits), so an app that loads a model and retrieves never downloads it.
 */
import { DtdrError } from '../../base/errors.js';
import type { Plan, ToolSpec } from '../../base/types.js';
import type { LearnInput, RankInput, Ranking, TrainingProgress } from '../types.js';
import type { FoldWorkers } from './cross-fit.js';
import type { GatedOptions } from './options.js';
import type { GatedParts } from './state.js';

/** DTDR-G's fit (fit.ts) and online learning (learning.ts), as training.ts installs them. */
export interface GatedTraining {
  fit(
    tools: ToolSpec[],
    plans: Plan[],
    queries: Float32Array[],
    toolVectors: Float32Array[],
    options: GatedOptions,
    onProgress?: (p: TrainingProgress) => void,
  ): GatedParts;
  fitParallel(
    tools: ToolSpec[],
    plans: Plan[],
    queries: Float32Array[],
    toolVectors: Float32Array[],
    workers: FoldWorkers,
    options: GatedOptions,
    onProgress?: (p: TrainingProgress) => void,
  ): Promise<GatedParts>;
  learn(parts: GatedParts, input: LearnInput, rank: (input: RankInput) => Ranking): boolean;
}

let training: GatedTraining | undefined;

/** Installs the fit and online learning (training.ts does, once loaded). */
export function installTraining(code: GatedTraining): void {
  training = code;
}

/** Whether the fit and online learning are installed. */
export function trainingInstalled(): boolean {
  return training !== undefined;
}

/** The installed fit and online learning, or a DtdrError saying to load them. */
export function installedTraining(): GatedTraining {
  if (training) return training;
  throw new DtdrError('options', "DTDR-G's training code is not loaded", {
    hint: 'await Dtdr.loadTraining() first (Dtdr.train, learn and forget do; on Node it is loaded already)',
  });
}

/**
 * The model's state as `Dtdr` holds it — one snapshot of its tool set and learning window, swapped
 * as a whole — and what learning needs of the model besides. learn-forget.ts computes the next
 * snapshot on `learn` and `forget` (loaded on the first of them).
 */
import type { Encoder } from '../base/encoder.js';
import type { Plan } from '../base/types.js';
import { methodEntry } from '../retrieval/methods.js';
import type { ModelArtifact } from './artifact.js';
import type { ChangeQueue } from './changes.js';
import type { RefitSchedule } from './refit-schedule.js';
import type { ToolSetSnapshot } from './tool-changes.js';

/** The model's state that changes replace as a whole: its tool set and its learning window. */
export interface ModelSnapshot extends ToolSetSnapshot {
  /** Demonstrations learned after training, oldest first (kept so `forget` can take them out). */
  learned: Plan[];
  /** Whether learned runs were folded into `beforeLearning` (no refit can see them again). */
  folded: boolean;
  /**
   * Set only while a forget refits (this snapshot then ranks as the model before any learned run):
   * the snapshot the forget started from and the runs it was fitted on, which is what saving writes
   * until the forget is done.
   */
  committed?: { state: ModelSnapshot; fittedOn: number };
}

/** What learning needs of the model besides its snapshot: `Dtdr` gives itself. */
export interface LearningModel {
  readonly encoder: Encoder | undefined;
  readonly training: ModelArtifact['training'];
  readonly refits: RefitSchedule;
  readonly queue: ChangeQueue;
  /** The snapshot now. */
  current(): ModelSnapshot;
  /** Swaps a next snapshot in at once. */
  swap(next: ModelSnapshot): void;
}

/**
 * A model of a method that refits from tools (the registry's `learning`: the default method) that
 * started from its tools alone holds the demonstrations it has learned (none folded away) and
 * refits on all of them, so its calibration and confidence are those of a model trained on the
 * same runs.
 */
export function refitsAtAll(m: LearningModel, s: ModelSnapshot): boolean {
  const refits = methodEntry(s.base.method)?.learning === 'refit-from-tools';
  return refits && m.training.plans === 0 && !s.folded && m.encoder !== undefined;
}

/**
 * What `learn` and `forget` do to a model: runs folded in or refitted on, forgotten by replaying the
 * others onto the state before learning, the oldest folded into that state once the window is full.
 * `Dtdr` holds one snapshot of the model (tool set and learning window); each step here computes
 * the next snapshot and swaps it in at once, as tool changes do (tool-changes.ts). A learn swaps
 * once, and again if it folds; a forget swaps to the model before any learned run while it refits
 * (rankings answer from it; saving writes the snapshot the forget started from), then to the result.
 * Folding runs in (`Retriever.learn`) changes a retriever in place, for speed; it happens only inside
 * a change, while no ranking runs (changes.ts), to the live retriever or to one not yet swapped in.
 */
import type { Encoder } from '../base/encoder.js';
import { contextText } from '../base/text.js';
import type { Plan, ToolSpec } from '../base/types.js';
import { planSteps } from '../plans/plan.js';
import { fitNeeds } from '../retrieval/methods.js';
import { loadTraining } from '../retrieval/load-training.js';
import { embedAll } from '../retrieval/train.js';
import type { LearnInput, Retriever } from '../retrieval/types.js';
import { loadRetriever, saveRetriever, type ModelArtifact } from './artifact.js';
import { MAX_FORGETTABLE } from './learning-window.js';
import { REFIT_UP_TO } from './refit-schedule.js';
import {
  nextTask,
  refit,
  refitInBackground as startBackgroundRefit,
  refitQueries,
  type RefitModel,
} from './refit-run.js';
import { refitsAtAll, type LearningModel } from './snapshot.js';
import { requireEncoder, retrieverFromState } from './tool-changes.js';

/** Learned runs folded into the state forget replays from per task (about 50 ms of DTDR-G learning on two cores). */
const FOLD_CHUNK = 250;

/** What a refit needs of the model (its retriever read when the fit lands). */
function refitModel(m: LearningModel): RefitModel {
  return {
    method: m.current().base.method,
    encoder: m.encoder,
    seed: m.training.seed,
    fromState: (tools, state) => retrieverFromState(m.current().base, tools, state, m.encoder),
  };
}

/** Learns `given` (checked): refits on every learned run or folds them in; past the window, folds the oldest away. */
export async function learnRuns(m: LearningModel, given: Plan[]): Promise<void> {
  const s = m.current();
  // Nothing is recorded before the runs are in the model: a learn that fails (refit, encoder) leaves it as it was.
  const beforeLearning = s.beforeLearning ?? artifactCopy(s.base, s.baseTools, m.encoder, m.training);
  const learned = [...s.learned, ...given];
  const due = refitsAtAll(m, s) ? m.refits.due(learned.length) : undefined;
  let base = s.base;
  let more = false;
  if (due === 'now') {
    base = (await m.queue.whileRefitting(() => refit(m.refits, refitModel(m), learned, s.baseTools, true)))!;
    m.refits.fittedOn = learned.length;
  } else {
    const input = await learnInput(m, given, base);
    more = input !== undefined && base.learn!(input) === true;
  }
  // A change runs alone (changes.ts): the snapshot is still `s`.
  m.swap({ ...m.current(), base, beforeLearning, learned });
  // What learn left (new tools' head columns past the first few), a part per task, once the runs are recorded: the
  // thread is free between parts and rankings answer meanwhile from the model as it is (a save finishes the parts).
  if (more) await m.queue.whileRefitting(() => finishLearning(base));
  if (due === 'background') refitInBackground(m);
  const now = m.current();
  if (now.learned.length > m.refits.keeps(refitsAtAll(m, now), MAX_FORGETTABLE)) {
    await foldOldestLearned(m, now.learned.length - MAX_FORGETTABLE / 2);
  }
}

/**
 * Refits on the runs learned so far while `learn` goes on folding new ones in; the refitted
 * model, with the runs learned meanwhile folded in, replaces the live one as a model change
 * (rankings before it see the old model, after it the new). Dropped when a change it could not
 * see came first (forget, tool changes): the next learn starts another.
 */
function refitInBackground(m: LearningModel): void {
  const { learned, baseTools: tools } = m.current();
  const [plans, generation] = [learned.slice(), m.refits.generation];
  startBackgroundRefit(m.refits, refitModel(m), plans, tools, (fitted) =>
    m.queue.enqueue(async () => {
      const s = m.current();
      if (generation !== m.refits.generation || tools !== s.baseTools) return;
      const newer = s.learned.slice(plans.length);
      const input = newer.length > 0 ? await learnInput(m, newer, fitted) : undefined;
      if (input) await learnAll(fitted, input);
      m.refits.fittedOn = plans.length;
      m.swap({ ...m.current(), base: fitted });
    }),
  );
}

/**
 * Folds the `count` oldest learned demonstrations into the state `forget` replays from: they can
 * no longer be forgotten, and the model no longer refits.
 */
async function foldOldestLearned(m: LearningModel, count: number): Promise<void> {
  const s = m.current();
  const oldest = s.learned.slice(0, count);
  const { retriever, artifact } = loadRetriever(s.beforeLearning!, { encoder: m.encoder });
  // A task apart per chunk (9,500 runs in one block held the thread 1.7 s); it changes only what
  // forget replays from, not the live model, so rankings do not wait for it.
  await m.queue.whileRefitting(async () => {
    for (let i = 0; i < oldest.length; i += FOLD_CHUNK) {
      const input = await learnInput(m, oldest.slice(i, i + FOLD_CHUNK), retriever);
      if (input) await learnAll(retriever, input);
      await nextTask();
    }
  });
  const beforeLearning = artifactCopy(retriever, artifact.tools, m.encoder, artifact.training);
  m.refits.generation++;
  m.swap({ ...m.current(), beforeLearning, learned: m.current().learned.slice(count), folded: true });
}

/**
 * Forgets the learned runs `match` picks by replaying the others onto the state before learning
 * (refitting where learn would). Returns how many were forgotten.
 */
export async function forgetRuns(m: LearningModel, match: (plan: Plan) => boolean): Promise<number> {
  const s = m.current();
  const keep = s.learned.filter((p) => !match(p));
  const forgotten = s.learned.length - keep.length;
  if (forgotten === 0 || !s.beforeLearning) return 0;
  const { retriever, artifact } = loadRetriever(s.beforeLearning, { encoder: m.encoder });
  const committed = { state: s, fittedOn: m.refits.fittedOn };
  m.refits.fittedOn = 0;
  m.refits.generation++;
  m.refits.abandon('a forget made it pointless');
  // Until the refit lands, the model as it was before any learned run answers: none of them, so none forgotten.
  m.swap({ ...s, base: retriever, baseTools: artifact.tools, learned: keep, committed });
  // Refit where learn would (after a failed worker, here only up to REFIT_UP_TO runs; else replayed).
  const refits = refitsAtAll(m, m.current()) && (m.refits.refitter || keep.length <= REFIT_UP_TO);
  const fitted =
    keep.length > 0 && refits
      ? await m.queue.whileRefitting(() =>
          refit(m.refits, refitModel(m), keep, artifact.tools, keep.length <= REFIT_UP_TO),
        )
      : undefined;
  if (fitted) m.refits.fittedOn = keep.length;
  else {
    const input = keep.length > 0 ? await learnInput(m, keep, retriever) : undefined;
    if (input) await learnAll(retriever, input);
  }
  m.swap({ ...m.current(), base: fitted ?? retriever, committed: undefined });
  return forgotten;
}

/** `retriever.learn(input)`, then the work it left, if any (finishLearning). */
async function learnAll(retriever: Retriever, input: LearnInput): Promise<void> {
  if (retriever.learn!(input) === true) await finishLearning(retriever);
}

/** The work the last learn left (`learnMore`), a bounded part per task: the thread is free between parts. */
async function finishLearning(retriever: Retriever): Promise<void> {
  do await nextTask();
  while (retriever.learnMore?.());
}

/** What `retriever.learn` needs for `plans` (their embeddings); undefined when it learns nothing. */
async function learnInput(m: LearningModel, plans: Plan[], retriever: Retriever): Promise<LearnInput | undefined> {
  if (!retriever.learn) return undefined;
  await loadTraining(retriever.method); // DTDR-G's learn is its training code's
  const needs = fitNeeds(retriever.method);
  const encoder = needs.queries || needs.contexts ? requireEncoder(m.encoder, retriever.method, 'learning') : undefined;
  const input: LearnInput = { plans };
  if (needs.queries) input.queryVectors = await refitQueries(m.refits, encoder!, plans);
  if (needs.contexts)
    input.contextVectors = await embedAll(
      encoder!,
      plans.flatMap((p) => planSteps(p).map((s) => contextText(s.query, s.history, retriever.historyLength))),
    );
  return input;
}

/** A deep copy of a retriever's saved form: the state `forget` replays from. */
function artifactCopy(
  r: Retriever,
  tools: ToolSpec[],
  encoder: Encoder | undefined,
  training: ModelArtifact['training'],
): ModelArtifact {
  return JSON.parse(JSON.stringify(saveRetriever(r, tools, encoder, training))) as ModelArtifact;
}

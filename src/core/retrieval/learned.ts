import { planSteps, planTools } from '../plans/plan.js';
import type { Plan } from '../base/types.js';
import { historyIndices, labelIndices } from './dependency.js';
import { LinearHead, type LinearHeadOptions } from './linear-head.js';
import { trainLinearHead } from './linear-head-training.js';
import { addToReplay, mixWithReplay, ReplayBuffer, type ReplayState } from './replay-buffer.js';
import { makeRanking, requireVector, softmaxInPlace } from './ranking.js';
import { DtdrError } from '../base/errors.js';
import { MAX_PLAN_STEPS } from '../base/limits.js';
import { optNum } from '../base/validate.js';
import { type LinearHeadState } from './linear-head.js';
import type { StateInput } from './types.js';
import {
  ONLINE_HEAD,
  type EmbeddingNeeds,
  type LearnInput,
  type MethodName,
  type RankInput,
  type Ranking,
  type Retriever,
  type TrainingProgress,
} from './types.js';

function runTraining(
  generator: Generator<{ epoch: number; epochs: number; loss: number }, LinearHead>,
  onProgress?: (p: TrainingProgress) => void,
): { head: LinearHead; losses: number[] } {
  const losses: number[] = [];
  for (;;) {
    const next = generator.next();
    if (next.done) return { head: next.value, losses };
    losses.push(next.value.loss);
    onProgress?.({ phase: 'training', fraction: next.value.epoch / next.value.epochs, loss: next.value.loss });
  }
}

/**
 * One-hot slots for the last l tools by position. Only tools seen in training histories get a
 * slot of their own (`vocabulary`: label index → slot); others share an "unseen" slot, and a
 * start marker fills short histories. Keeps the one-hot block small for 4,000-tool sets.
 */
function historySlots(history: readonly number[], l: number, vocabulary: Map<number, number>): Uint32Array {
  const width = vocabulary.size + 2;
  const slots = new Uint32Array(l);
  for (let k = 0; k < l; k++) {
    const h = history[history.length - l + k];
    const id = h === undefined ? vocabulary.size : (vocabulary.get(h) ?? vocabulary.size + 1);
    slots[k] = k * width + id;
  }
  return slots;
}

/**
 * A linear softmax head behind the Retriever interface. The three learned methods differ only in
 * what they feed it:
 * - `lr` (static, TinyAgent-style): the query embedding → the tools of the whole plan, every step;
 * - `dtdr-l` (the paper's DTDR-L): the embedding of query + last l tools as text → the next tools and END;
 * - `dtdr-h` (ours): the query embedding plus a one-hot of each of the last l tools → the next tools and END.
 */
export class LearnedRetriever implements Retriever {
  readonly needs: EmbeddingNeeds;
  private readonly index: Map<string, number>;
  private readonly logits: Float64Array;

  constructor(
    readonly method: Extract<MethodName, 'lr' | 'dtdr-l' | 'dtdr-h'>,
    readonly labels: readonly string[],
    readonly historyLength: number,
    public head: LinearHead,
    /** dtdr-h: label index → one-hot slot, for tools seen in training histories. */
    readonly historyVocabulary: Map<number, number> = new Map(),
    readonly losses: number[] = [],
    /** Training examples rehearsed when learning online. */
    readonly replay: ReplayBuffer = new ReplayBuffer(),
  ) {
    this.needs = { query: method !== 'dtdr-l', context: method === 'dtdr-l' };
    this.index = labelIndices(labels);
    this.logits = new Float64Array(head.classes);
  }

  /** LR, DTDR-L or DTDR-H from a checked model file's state: the head, history vocabulary and replay buffer. */
  static fromState(method: Extract<MethodName, 'lr' | 'dtdr-l' | 'dtdr-h'>, input: StateInput): LearnedRetriever {
    const { labels, dim, historyLength, state: s } = input;
    const fail = (field: string, message: string): never => {
      throw new DtdrError('artifact', message, { field });
    };
    const head = LinearHead.fromState(s.head as LinearHeadState);
    const classes = method === 'lr' ? labels.length - 1 : labels.length;
    if (head.dim !== dim || head.classes !== classes) {
      fail('state.head', `head is ${head.dim}→${head.classes}, expected ${dim}→${classes}`);
    }
    const vocabulary = (s.historyVocabulary ?? []) as number[];
    if (!Array.isArray(vocabulary) || vocabulary.some((i) => !Number.isInteger(i) || i < 0 || i >= labels.length)) {
      fail('state.historyVocabulary', 'history vocabulary must list label indices');
    }
    if (new Set(vocabulary).size !== vocabulary.length) {
      fail('state.historyVocabulary', 'history vocabulary lists a label twice');
    }
    optNum('state.historyLength', s.historyLength, { min: 0, max: MAX_PLAN_STEPS, integer: true });
    const hl = Number(s.historyLength ?? historyLength);
    if (method === 'dtdr-h' && head.sparseSize !== hl * (vocabulary.length + 2)) {
      fail('state.head', 'one-hot block does not match the history vocabulary');
    }
    const shape = { field: 'state.replay', dim: head.dim, sparseSize: head.sparseSize, classes: head.classes };
    const replay = ReplayBuffer.fromState(s.replay as ReplayState | undefined, shape);
    const slots = new Map(vocabulary.map((label, slot) => [label, slot]));
    return new LearnedRetriever(method, labels, hl, head, slots, [], replay);
  }

  static fit(
    method: Extract<MethodName, 'lr' | 'dtdr-l' | 'dtdr-h'>,
    labels: readonly string[],
    plans: Plan[],
    vectors: { queries?: Float32Array[]; contexts?: Float32Array[] },
    options: { historyLength?: number; head?: LinearHeadOptions; seed?: number } = {},
    onProgress?: (p: TrainingProgress) => void,
  ): LearnedRetriever {
    const l = method === 'lr' ? 0 : (options.historyLength ?? 3);
    const index = labelIndices(labels);
    const headOptions = { seed: options.seed, ...options.head };
    if (method === 'lr') {
      const data = headExamples(method, labels, index, l, new Map(), plans, vectors);
      const { head, losses } = runTraining(trainLinearHead(data, headOptions), onProgress);
      const replay = new ReplayBuffer();
      addToReplay(replay, data);
      return new LearnedRetriever(method, labels, l, head, new Map<number, number>(), losses, replay);
    }
    const vocabulary = new Map<number, number>();
    for (const plan of plans)
      for (const node of plan.nodes) {
        const i = index.get(node.tool)!;
        if (!vocabulary.has(i)) vocabulary.set(i, vocabulary.size);
      }
    const data = headExamples(method, labels, index, l, vocabulary, plans, vectors);
    const { head, losses } = runTraining(trainLinearHead(data, headOptions), onProgress);
    const replay = new ReplayBuffer();
    addToReplay(replay, data);
    return new LearnedRetriever(
      method,
      labels,
      l,
      head,
      method === 'dtdr-h' ? vocabulary : new Map<number, number>(),
      losses,
      replay,
    );
  }

  rank(input: RankInput): Ranking {
    const dense =
      this.method === 'dtdr-l'
        ? requireVector(input.contextVector, this.method, 'contextVector')
        : requireVector(input.queryVector, this.method, 'queryVector');
    const sparse =
      this.method === 'dtdr-h'
        ? historySlots(historyIndices(input.history, this.index), this.historyLength, this.historyVocabulary)
        : undefined;
    softmaxInPlace(this.head.logits(dense, sparse, this.logits));
    const probabilities = new Float64Array(this.labels.length); // lr has no END output: END gets 0
    probabilities.set(this.logits);
    return makeRanking(this.labels, probabilities);
  }

  state() {
    return {
      historyLength: this.historyLength,
      historyVocabulary: [...this.historyVocabulary.keys()],
      head: this.head.state(),
      replay: this.replay.state(),
    };
  }

  /** Continues training the head on the new demonstrations only (a few epochs, a small step). */
  learn(input: LearnInput): void {
    if (input.plans.length === 0) return;
    const data = headExamples(
      this.method,
      this.labels,
      this.index,
      this.historyLength,
      this.historyVocabulary,
      input.plans,
      { queries: input.queryVectors, contexts: input.contextVectors },
    );
    if (data.dense.length === 0) return;
    this.head = runTraining(
      trainLinearHead(mixWithReplay(this.replay, data), { ...ONLINE_HEAD, seed: this.replay.seen }, this.head),
    ).head;
    addToReplay(this.replay, data);
  }
}

/** The head's training examples: one per plan (lr: the set of its tools) or one per step. */
function headExamples(
  method: Extract<MethodName, 'lr' | 'dtdr-l' | 'dtdr-h'>,
  labels: readonly string[],
  index: Map<string, number>,
  l: number,
  vocabulary: Map<number, number>,
  plans: Plan[],
  vectors: { queries?: Float32Array[]; contexts?: Float32Array[] },
) {
  const dense: Float32Array[] = [];
  const targets: number[][] = [];
  const sparse: Uint32Array[] = [];
  if (method === 'lr') {
    plans.forEach((plan, i) => {
      dense.push(vectors.queries![i]);
      targets.push([...new Set(planTools(plan))].map((t) => index.get(t)!));
    });
    return { dense, targets, classes: labels.length - 1, sparseSize: 0 };
  }
  let s = 0;
  plans.forEach((plan, i) => {
    for (const step of planSteps(plan)) {
      dense.push(method === 'dtdr-l' ? vectors.contexts![s] : vectors.queries![i]);
      targets.push(step.acceptable.map((t) => index.get(t)!));
      if (method === 'dtdr-h') sparse.push(historySlots(historyIndices(step.history, index), l, vocabulary));
      s++;
    }
  });
  const sparseSize = method === 'dtdr-h' ? l * (vocabulary.size + 2) : 0;
  return { dense, targets, classes: labels.length, sparseSize, ...(method === 'dtdr-h' ? { sparse } : {}) };
}

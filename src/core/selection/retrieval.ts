/** What a step's retrieval gives an app: its candidate set, the ranking behind it, and whether dtdr is sure of it. */
import type { Backoff, Ranking } from '../retrieval/types.js';
import type { Candidate } from './select.js';

/** What `Dtdr.retrieve` returns for one step: the candidate set, whether dtdr is confident in it and why not. */
export interface Retrieval {
  /** F_t: the tools (and maybe END) to show the model next, best first. */
  candidates: Candidate[];
  /** True when the set was widened because the retriever was unsure; `reason` says why. */
  widened: boolean;
  /** Why the step is unsure, in words, when it is. */
  reason?: string;
  /**
   * For the default method: the share of steps whose set holds a tool that can come next
   * (split-conformal, measured on held-out demonstrations; default 0.95). Absent where the held-out steps do not
   * speak for the step (its demonstrations call under half the tools: `Ranking.set.noClaim`) and for other methods.
   */
  target?: number;
  /** True when the method is sure of this step: its set can be shown as is. */
  confident: boolean;
  /** For the graph methods: how far the history had to be shortened to find it in the demonstrations. */
  backoff?: Backoff;
  /** The full ranking over every tool and END. */
  ranking: Ranking;
}

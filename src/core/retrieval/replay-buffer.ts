import { seededRandom, shuffleInPlace } from '../base/random.js';
import { array, COORDINATE, numbers, object, optNum } from '../base/validate.js';
import type { LinearHeadData } from './linear-head.js';

/**
 * A reservoir sample of a head's training examples (Vitter's algorithm R, seeded), kept with the
 * model so online learning can rehearse old examples next to new ones: fine-tuning on new
 * demonstrations alone drifts away from what the head knew.
 */
export class ReplayBuffer {
  readonly dense: Float32Array[] = [];
  readonly sparse: Uint32Array[] = [];
  readonly targets: number[][] = [];

  constructor(
    readonly capacity = 1024,
    public seen = 0,
  ) {}

  state(): ReplayState {
    return {
      capacity: this.capacity,
      seen: this.seen,
      dense: this.dense.map((v) => Array.from(v)),
      sparse: this.sparse.map((v) => Array.from(v)),
      targets: this.targets,
    };
  }

  /**
   * A buffer from `state()`. With `check` (a loaded file), the saved examples are validated:
   * vectors of the head's dimension, one-hot ids below its one-hot size and labels below its
   * class count (else a DtdrError naming `check.field`).
   */
  static fromState(
    s: ReplayState | undefined,
    check?: { field: string; dim: number; sparseSize: number; classes: number },
  ): ReplayBuffer {
    if (check && s !== undefined && s !== null) {
      const f = check.field;
      object(f, s);
      optNum(`${f}.capacity`, s.capacity, { min: 1, max: 1e9, integer: true });
      optNum(`${f}.seen`, s.seen, { min: 0, integer: true });
      if (s.dense !== undefined || s.targets !== undefined) {
        const dense = array(`${f}.dense`, s.dense);
        array(`${f}.targets`, s.targets, dense.length);
        if (s.sparse !== undefined) array(`${f}.sparse`, s.sparse, dense.length);
        dense.forEach((v, i) => {
          numbers(`${f}.dense[${i}]`, v, check.dim, COORDINATE);
          if (s.sparse?.[i] !== undefined)
            numbers(`${f}.sparse[${i}]`, s.sparse[i], undefined, { min: 0, max: check.sparseSize - 1, integer: true });
          numbers(`${f}.targets[${i}]`, s.targets[i], undefined, { min: 0, max: check.classes - 1, integer: true });
        });
      }
    }
    const buffer = new ReplayBuffer(Number(s?.capacity) || 1024, Number(s?.seen) || 0);
    if (s && Array.isArray(s.dense) && Array.isArray(s.targets) && s.dense.length === s.targets.length) {
      s.dense.forEach((v, i) => {
        buffer.dense.push(Float32Array.from(v));
        buffer.sparse.push(Uint32Array.from(s.sparse?.[i] ?? []));
        buffer.targets.push(s.targets[i].map(Number));
      });
    }
    return buffer;
  }
}

/**
 * Adds a head's training examples to its replay sample (reservoir slots from hashUnit). Functions rather than
 * methods, so that an app that only loads and ranks does not bundle them.
 */
export function addToReplay(buffer: ReplayBuffer, data: LinearHeadData): void {
  for (let i = 0; i < data.dense.length; i++) {
    buffer.seen++;
    const slot =
      buffer.dense.length < buffer.capacity ? buffer.dense.length : Math.floor(hashUnit(buffer.seen) * buffer.seen);
    if (slot >= buffer.capacity) continue;
    buffer.dense[slot] = Float32Array.from(data.dense[i]);
    buffer.sparse[slot] = Uint32Array.from(data.sparse?.[i] ?? []);
    buffer.targets[slot] = Array.from(data.targets[i]);
  }
}

/** The new examples followed by up to `ratio`× as many rehearsed ones from `buffer`. */
export function mixWithReplay(buffer: ReplayBuffer, data: LinearHeadData, ratio = 2): LinearHeadData {
  const n = Math.min(buffer.dense.length, Math.round(data.dense.length * ratio));
  const picks = Array.from({ length: buffer.dense.length }, (_, i) => i);
  shuffleInPlace(picks, seededRandom(buffer.seen));
  const chosen = picks.slice(0, n);
  return {
    ...data,
    dense: [...data.dense, ...chosen.map((i) => buffer.dense[i])],
    targets: [...data.targets, ...chosen.map((i) => buffer.targets[i])],
    ...(data.sparse ? { sparse: [...data.sparse, ...chosen.map((i) => buffer.sparse[i])] } : {}),
  };
}

export interface ReplayState {
  capacity: number;
  seen: number;
  dense: number[][];
  sparse: number[][];
  targets: number[][];
}

/** A deterministic uniform number in [0, 1) from an integer (reservoir slots without RNG state). */
function hashUnit(n: number): number {
  let x = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) / 4294967296;
}

/**
 * Loading the WebAssembly SIMD kernel (the bytes of matvec-wasm.ts): compiled once, then one small
 * instance per matrix or gradient. Apart from matvec.ts because the training kernels (training.ts)
 * load it too.
 */
import { matvecWasm } from './matvec-wasm.js';

export interface Kernel {
  matvec(rows: number, q: number, n: number, d: number, out: number): void;
  outer(g: number, x: number, p: number, rows: number, cols: number): void;
  expsum(x: number, out: number, n: number, shift: number, scale: number): number;
  combine8(x: number, stride: number, a: number, z: number, n: number): void;
  maxf64(x: number, n: number): number;
  logclip(x: number, n: number, shift: number, out: number): void;
  divide(x: number, n: number, by: number): number;
  residual(x: number, out: number, rows: number, stride: number, m: number, g: number, n: number, scale: number): void;
  sampleddots(
    w: number,
    x: number,
    dim: number,
    cand: number,
    m: number,
    z: number,
    positives: number,
    correction: number,
  ): void;
  sampledaxpy(g: number, x: number, dim: number, cand: number, m: number, z: number): void;
  syrupper(a: number, x: number, n: number): void;
  gramrow(v: number, c: number, n: number, d: number, out: number): void;
  addvec(dst: number, src: number, n: number): void;
  adam(
    w: number,
    m: number,
    v: number,
    g: number,
    n: number,
    scale: number,
    l2: number,
    lr: number,
    b1: number,
    c1: number,
    b2: number,
    c2: number,
    eps: number,
  ): void;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel module, or null where WebAssembly (with SIMD) is not available (training.ts shares it). */
export function kernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  try {
    const wasm = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
    if (!wasm) return (compiled = null);
    const bytes = matvecWasm();
    compiled = wasm.validate(bytes) ? new wasm.Module(bytes) : null;
  } catch {
    compiled = null; // compiling refused (e.g. a strict CSP): the JS twin is used
  }
  return compiled;
}

/** Whether ranking runs on the WebAssembly kernel here (for benchmarks and diagnostics). */
export function usesWasmKernel(): boolean {
  return kernelModule() !== null;
}

/**
 * One small kernel instance with its own memory of `bytes`: freed with whatever holds it (a
 * model's matrix, a head's gradient), so there is no shared heap to manage.
 */
export function instantiate(module: WebAssembly.Module, bytes: number): { kernel: Kernel; buffer: ArrayBuffer } {
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / 65536)) });
  return {
    kernel: new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Kernel,
    buffer: memory.buffer,
  };
}

/**
 * Model artifact v2: compact and exact. A JSON header holds everything but the numbers; numeric
 * arrays (and rectangular arrays of them) move to binary sections, stored as int32 when every
 * value is an integer in range, float32 when every value survives the round trip to float32, and
 * float64 otherwise — so loading gives back exactly what was saved. A SHA-256 of everything
 * before it closes the file, so a truncated or bit-flipped file is refused, never half-read.
 *
 *   "DTDRMDL\0" · u32 version · u32 header bytes · header (UTF-8 JSON) · pad to 8 ·
 *   sections · sha256 (32 bytes)
 */
import { sha256 } from '@noble/hashes/sha2';
import { DtdrError } from '../base/errors.js';
import { measureJson, MAX_MODEL_NESTING } from '../base/limits.js';
import { utf8Decode, utf8Encode } from './utf8.js';

export const BINARY_MAGIC = 'DTDRMDL\0';
export const BINARY_VERSION = 2;
/** Numeric arrays shorter than this stay in the JSON header. */
const MIN_PACKED = 16;

type DType = 'i32' | 'f32' | 'f64';
interface Section {
  dtype: DType;
  /** Element count, and the row length for a packed number[][] (0: a flat number[]). */
  length: number;
  rows: number;
  offset: number;
}
const BYTES: Record<DType, number> = { i32: 4, f32: 4, f64: 8 };

/** Whether a file's first bytes are a v2 binary model. */
export function isBinaryModel(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  for (let i = 0; i < 8; i++) if (bytes[i] !== BINARY_MAGIC.charCodeAt(i)) return false;
  return true;
}

function dtypeOf(values: ArrayLike<number>): DType {
  let ints = true;
  let f32 = true;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (ints && !(Number.isInteger(v) && v >= -2147483648 && v <= 2147483647)) ints = false;
    if (f32 && Math.fround(v) !== v) f32 = false;
    if (!ints && !f32) return 'f64';
  }
  return ints ? 'i32' : 'f32';
}

const isNumberArray = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === 'number');

/** Encodes any JSON-able artifact into the v2 container. */
export function encodeBinaryModel(artifact: unknown): Uint8Array {
  const sections: Section[] = [];
  const blobs: ArrayBufferView[] = [];
  let offset = 0;
  const pack = (flat: number[], rows: number): { $dtdrSection: number } => {
    const dtype = dtypeOf(flat);
    const data =
      dtype === 'i32' ? Int32Array.from(flat) : dtype === 'f32' ? Float32Array.from(flat) : Float64Array.from(flat);
    offset = Math.ceil(offset / 8) * 8;
    sections.push({ dtype, length: flat.length, rows, offset });
    blobs.push(data);
    offset += data.byteLength;
    return { $dtdrSection: sections.length - 1 };
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      if (v.length >= MIN_PACKED && isNumberArray(v)) return pack(v, 0);
      // A rectangular array of number rows (vectors, [label, weight] pairs): one section.
      if (v.length > 0 && v.every(isNumberArray)) {
        const width = v[0].length;
        if (width > 0 && v.length * width >= MIN_PACKED && v.every((r) => r.length === width))
          return { ...pack(v.flat(), width), $dtdrWidth: width };
      }
      return v.map(walk);
    }
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const body = walk(artifact);
  const header = utf8Encode(JSON.stringify({ sections, body }));
  const start = Math.ceil((16 + header.length) / 8) * 8;
  const total = start + offset + 32;
  const out = new Uint8Array(total);
  for (let i = 0; i < 8; i++) out[i] = BINARY_MAGIC.charCodeAt(i);
  const view = new DataView(out.buffer);
  view.setUint32(8, BINARY_VERSION, true);
  view.setUint32(12, header.length, true);
  out.set(header, 16);
  sections.forEach((s, i) => {
    const b = blobs[i];
    out.set(new Uint8Array(b.buffer, b.byteOffset, b.byteLength), start + s.offset);
  });
  out.set(sha256(out.subarray(0, total - 32)), total - 32);
  return out;
}

/**
 * Bytes of memory a decoded element and a decoded row of a packed number[][] may take at most
 * (a JS number array holds doubles; each row is an array of its own, about 61 bytes on V8 before
 * its elements, and the walks after decoding visit each): the decoder's budget per element read,
 * checked for the whole file before anything is allocated.
 */
const DECODED_ELEMENT_BYTES = 8;
// Counted at twice what V8 holds: rows are rare in the models dtdr writes (vectors, pairs) and a
// file of one-element rows is the cheapest way to many small arrays.
const DECODED_ROW_BYTES = 160;
/**
 * How many times its size a model file may decode to, as the decoder counts (rows and the header's
 * arrays and objects at what they cost a load's resident memory, see DECODED_CONTAINER_BYTES). The
 * models dtdr writes count 5–6 times their size (the demo model; dtdr-g after 10,000 learned
 * plans: 5.5), dtdr-c, whose state is small objects and pairs, nearly 14 (13.9 after 10,000).
 * Twenty times, and 4 MiB for small files, keeps every model dtdr saves loadable, while the most a
 * 9.9 MB file can hold of one-element rows or empty objects loads with 150–177 MB more resident
 * memory (test/hardening-inputs.test.ts).
 */
export const DECODE_MULTIPLE = 20;
/** The most a file of `fileBytes` may decode to, its header's JSON included (binary and JSON models alike). */
export const decodeBudget = (fileBytes: number): number => DECODE_MULTIPLE * fileBytes + (4 << 20);

/** The fields of a binary model's header: anything else is refused (a newer layout has a newer version). */
const HEADER_FIELDS = new Set(['sections', 'body']);

/**
 * Decodes a v2 container; anything damaged is a DtdrError naming the file. Before allocating,
 * the decoder accounts for everything it will build: the header nests at most MAX_MODEL_NESTING
 * levels, its JSON is counted (measureJson) before it is parsed, it has no field but the
 * section table and the body, each section lies inside the file, no two overlap, each is referenced at most once
 * (the encoder writes one reference per section), and their decoded size fits a budget from the
 * file's size — so no file, however crafted, decodes to more than a fixed multiple of its size.
 */
export function decodeBinaryModel(bytes: Uint8Array, file = 'model'): unknown {
  const fail = (
    message: string,
    hint = 'the file is damaged or truncated: restore it from a backup or retrain',
  ): never => {
    throw new DtdrError('artifact', message, { file, hint });
  };
  if (!isBinaryModel(bytes))
    fail(
      'not a dtdr binary model (wrong magic bytes)',
      'give a file written by dtdr (model.toBinary() / writeModelFile)',
    );
  const view = checkContainer(bytes, fail);
  const headerLength = view.getUint32(12, true);
  if (16 + headerLength > bytes.length - 32) fail('header length points past the end of the file');
  const header = parseHeader(bytes.subarray(16, 16 + headerLength), bytes.length, fail);
  const parsed = header.parsed;
  let budget = header.budget;
  const start = Math.ceil((16 + headerLength) / 8) * 8;
  const end = bytes.length - 32;
  if (!parsed || !Array.isArray(parsed.sections)) fail('the header has no section table');
  const sections = parsed.sections;
  checkSectionTable(sections, start, end, fail);
  // Every reference, accounted for before any section is read.
  const referenced = new Uint8Array(sections.length);
  const account = (index: unknown, width: unknown): void => {
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= sections.length)
      fail(`a section reference (${JSON.stringify(index)}) names no section of the ${sections.length}`);
    const i = index as number;
    const s = sections[i];
    if (referenced[i]) fail(`section ${i} is referenced more than once`);
    referenced[i] = 1;
    // rows is the row length of a packed number[][] (0 for a flat number[]): it must agree with the reference.
    if (s.rows !== (width === undefined ? 0 : width))
      fail(
        `section ${i} has a row width (${JSON.stringify(s.rows)}) that its reference does not ` +
          `(${JSON.stringify(width ?? 0)})`,
      );
    if (
      width !== undefined &&
      (!Number.isInteger(width) || (width as number) < 1 || s.length % (width as number) !== 0)
    )
      fail(`section ${i} has a bad row width`);
    budget -=
      s.length * DECODED_ELEMENT_BYTES +
      (width === undefined ? 0 : (s.length / (width as number)) * DECODED_ROW_BYTES) +
      DECODED_ROW_BYTES;
    if (budget < 0) fail(`the sections decode to more memory than a file of ${bytes.length} bytes can hold`);
  };
  const references = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) references(x);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (Object.hasOwn(o, '$dtdrSection')) account(o.$dtdrSection, o.$dtdrWidth);
      else for (const k in o) if (Object.hasOwn(o, k)) references(o[k]);
    }
  };
  references(parsed.body);
  const read = (index: number, width: number | undefined) =>
    readSection(view, start + sections[index].offset, sections[index], width);
  // In place: the parsed header's arrays and objects are kept, section references replaced, so the
  // body is never held twice.
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++) v[k] = walk(v[k]);
      return v;
    }
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (Object.hasOwn(o, '$dtdrSection')) return read(o.$dtdrSection as number, o.$dtdrWidth as number | undefined);
      for (const k in o) if (Object.hasOwn(o, k)) o[k] = walk(o[k]);
      return o;
    }
    return v;
  };
  return walk(parsed.body);
}

/** The section table checked: each section well-formed and inside [start, end), none overlapping another. */
function checkSectionTable(sections: Section[], start: number, end: number, fail: (message: string) => never): void {
  sections.forEach((s, index) => {
    if (
      !s ||
      typeof s !== 'object' ||
      typeof s.dtype !== 'string' ||
      !Object.hasOwn(BYTES, s.dtype) ||
      !Number.isInteger(s.length) ||
      !Number.isInteger(s.offset) ||
      s.offset < 0 ||
      s.offset % 8 !== 0
    )
      fail(`section ${index} is malformed`);
    if (s.length < 0 || start + s.offset + s.length * BYTES[s.dtype] > end)
      fail(`section ${index} runs past the end of the file`);
  });
  const byOffset = sections.map((_, i) => i).sort((a, b) => sections[a].offset - sections[b].offset);
  for (let k = 1; k < byOffset.length; k++) {
    const before = sections[byOffset[k - 1]];
    if (before.offset + before.length * BYTES[before.dtype] > sections[byOffset[k]].offset)
      fail(`sections ${byOffset[k - 1]} and ${byOffset[k]} overlap`);
  }
}

/** A section's values read in place from `from` (bytes at any alignment): a flat list, or rows of `width`. */
function readSection(view: DataView, from: number, s: Section, width: number | undefined): unknown {
  // Read in place (no copy of the section): the file's bytes may sit at any alignment. Rows are
  // read straight into their own arrays, with no flat array of the whole section beside them.
  const get =
    s.dtype === 'i32'
      ? (k: number) => view.getInt32(from + 4 * k, true)
      : s.dtype === 'f32'
        ? (k: number) => view.getFloat32(from + 4 * k, true)
        : (k: number) => view.getFloat64(from + 8 * k, true);
  const row = (first: number, length: number) => {
    const values = new Array<number>(length);
    for (let k = 0; k < length; k++) values[k] = get(first + k);
    return values;
  };
  if (width === undefined) return row(0, s.length);
  const rows = new Array<number[]>(s.length / width);
  for (let r = 0; r < rows.length; r++) rows[r] = row(r * width, width);
  return rows;
}

/** The container checked (magic bytes, length, version, checksum); a view of its bytes. */
function checkContainer(bytes: Uint8Array, fail: (message: string, hint?: string) => never): DataView {
  if (bytes.length < 16 + 32) fail('the file is too short to be a model');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version > BINARY_VERSION)
    fail(`binary model version ${version} is newer than this dtdr reads (${BINARY_VERSION})`, 'upgrade dtdr');
  const digest = sha256(bytes.subarray(0, bytes.length - 32));
  const stored = bytes.subarray(bytes.length - 32);
  for (let i = 0; i < 32; i++)
    if (digest[i] !== stored[i]) fail('checksum mismatch: the file was changed or damaged after it was written');
  return view;
}

/** The header measured (nesting; decoded size within the budget) before it is parsed, then parsed and checked. */
function parseHeader(
  headerBytes: Uint8Array,
  fileLength: number,
  fail: (message: string) => never,
): { parsed: { sections: Section[]; body: unknown }; budget: number } {
  let parsed: { sections: Section[]; body: unknown };
  const header = measureJson(headerBytes, MAX_MODEL_NESTING);
  if (header.tooDeep) fail(`the header nests deeper than ${MAX_MODEL_NESTING} levels`);
  // The header's JSON is counted in the same budget as the sections, before it is parsed.
  const budget = decodeBudget(fileLength) - header.decodedBytes;
  if (budget < 0) fail(`the header decodes to more memory than a file of ${fileLength} bytes can hold`);
  try {
    parsed = JSON.parse(utf8Decode(headerBytes)) as { sections: Section[]; body: unknown };
  } catch {
    return fail('the header is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) fail('the header is not a JSON object');
  for (const key of Object.keys(parsed))
    if (!HEADER_FIELDS.has(key)) fail(`the header has a field this version does not write (${JSON.stringify(key)})`);
  return { parsed, budget };
}

/**
 * A static embedding model — an int8 table of token vectors with one scale per row, e.g. static-use-256
 * (../shared/models/README.md) — embedded directly: tokens (wordpiece.ts), a table lookup, a mean. The ONNX graph of
 * such a model is exactly `Gather(emb_q, ids) → Cast(float) × Unsqueeze(Gather(emb_scale, ids))`, so
 * `last_hidden_state[t] = float32(q[id]) × scale[id]` in float32, which is what this computes; the pooling is the
 * pipeline's own (pooling.ts). The vectors are bit-identical to the transformers.js pipeline's (tested), so they are
 * stored under the same model id. Used only when the graph is exactly that and the tokenizer is the BERT WordPiece
 * one wordpiece.ts reproduces; any other model (or any doubt) goes through transformers.js.
 *
 * Why: through ONNX Runtime and transformers.js's tokenizer an import embedded ~600–900 texts/s at load 9; this does
 * the same work with no session, no tensors and no per-token allocations.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { meanPoolRow } from './pooling.js';
import { transformersModelId, type Embedder, type EmbedderSpec } from './types.js';
import { createWordPieceTokenizer, type WordPieceTokenizer } from './wordpiece.js';

type TransformersSpec = Extract<EmbedderSpec, { kind: 'transformers' }>;

/** ONNX TensorProto data types used here. */
const FLOAT = 1;
const INT8 = 3;
const INT64 = 7;

interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes: Map<string, number>;
}

interface OnnxTensor {
  dims: number[];
  type: number;
  /** The raw little-endian bytes (raw_data). */
  raw: Buffer | null;
}

/** Reads a protobuf message's fields: `[field, wire type, value or [start, end) of a length-delimited field]`. */
function* fields(buffer: Buffer, start: number, end: number): Generator<{ field: number; wire: number; value: number; start: number; end: number }> {
  let at = start;
  const varint = (): number => {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = buffer[at++] as number;
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return result;
      scale *= 128;
    }
  };
  while (at < end) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) yield { field, wire, value: varint(), start: 0, end: 0 };
    else if (wire === 2) {
      const length = varint();
      yield { field, wire, value: length, start: at, end: at + length };
      at += length;
    } else if (wire === 5) {
      at += 4;
    } else if (wire === 1) {
      at += 8;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
  }
}

/** The graph of an ONNX model: nodes, initializers by name, input and output names. */
function readOnnxGraph(buffer: Buffer): { nodes: OnnxNode[]; initializers: Map<string, OnnxTensor>; outputs: string[] } | null {
  const text = (f: { start: number; end: number }): string => buffer.toString('utf8', f.start, f.end);
  for (const model of fields(buffer, 0, buffer.length)) {
    if (model.field !== 7 || model.wire !== 2) continue; // ModelProto.graph
    const nodes: OnnxNode[] = [];
    const initializers = new Map<string, OnnxTensor>();
    const outputs: string[] = [];
    for (const graph of fields(buffer, model.start, model.end)) {
      if (graph.wire !== 2) continue;
      if (graph.field === 1) {
        const node: OnnxNode = { op: '', inputs: [], outputs: [], attributes: new Map() };
        for (const part of fields(buffer, graph.start, graph.end)) {
          if (part.wire !== 2) continue;
          if (part.field === 1) node.inputs.push(text(part));
          else if (part.field === 2) node.outputs.push(text(part));
          else if (part.field === 4) node.op = text(part);
          else if (part.field === 5) {
            let name = '';
            let value = Number.NaN;
            for (const attribute of fields(buffer, part.start, part.end)) {
              if (attribute.field === 1 && attribute.wire === 2) name = text(attribute);
              if (attribute.field === 3 && attribute.wire === 0) value = attribute.value;
            }
            node.attributes.set(name, value);
          }
        }
        nodes.push(node);
      } else if (graph.field === 5) {
        let name = '';
        const tensor: OnnxTensor = { dims: [], type: 0, raw: null };
        for (const part of fields(buffer, graph.start, graph.end)) {
          if (part.field === 1 && part.wire === 0) tensor.dims.push(part.value);
          else if (part.field === 1 && part.wire === 2) tensor.dims.push(...packedVarints(buffer.subarray(part.start, part.end)));
          else if (part.field === 2 && part.wire === 0) tensor.type = part.value;
          else if (part.field === 8 && part.wire === 2) name = text(part);
          else if (part.field === 9 && part.wire === 2) tensor.raw = buffer.subarray(part.start, part.end);
        }
        initializers.set(name, tensor);
      } else if (graph.field === 12) {
        for (const part of fields(buffer, graph.start, graph.end)) if (part.field === 1 && part.wire === 2) outputs.push(text(part));
      }
    }
    return { nodes, initializers, outputs };
  }
  return null;
}

/** Packed repeated dims are rare in initializers; read them as varints one after another. */
function packedVarints(buffer: Buffer): number[] {
  const values: number[] = [];
  let at = 0;
  while (at < buffer.length) {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = buffer[at++] as number;
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) break;
      scale *= 128;
    }
    values.push(result);
  }
  return values;
}

/** The table and scales of a static model's graph, or null when the graph is anything else. */
function staticTable(buffer: Buffer): { table: Int8Array; scales: Float32Array; rows: number; dim: number } | null {
  const graph = readOnnxGraph(buffer);
  if (!graph || graph.nodes.length !== 5 || graph.outputs[0] !== 'last_hidden_state') return null;
  const [gatherTable, cast, gatherScale, unsqueeze, mul] = graph.nodes as [OnnxNode, OnnxNode, OnnxNode, OnnxNode, OnnxNode];
  const same = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
  const shapeOk =
    gatherTable.op === 'Gather' &&
    (gatherTable.attributes.get('axis') ?? 0) === 0 &&
    gatherTable.inputs[1] === 'input_ids' &&
    cast.op === 'Cast' &&
    cast.attributes.get('to') === FLOAT &&
    same(cast.inputs, gatherTable.outputs) &&
    gatherScale.op === 'Gather' &&
    (gatherScale.attributes.get('axis') ?? 0) === 0 &&
    gatherScale.inputs[1] === 'input_ids' &&
    unsqueeze.op === 'Unsqueeze' &&
    unsqueeze.inputs[0] === gatherScale.outputs[0] &&
    mul.op === 'Mul' &&
    same(mul.inputs, [cast.outputs[0] as string, unsqueeze.outputs[0] as string]) &&
    same(mul.outputs, ['last_hidden_state']);
  if (!shapeOk) return null;
  const q = graph.initializers.get(gatherTable.inputs[0] as string);
  const s = graph.initializers.get(gatherScale.inputs[0] as string);
  const axes = graph.initializers.get(unsqueeze.inputs[1] as string);
  if (!q?.raw || !s?.raw || !axes?.raw || q.type !== INT8 || s.type !== FLOAT || axes.type !== INT64) return null;
  const [rows = 0, dim = 0] = q.dims;
  const axis = Number(axes.raw.readBigInt64LE(0));
  if (q.dims.length !== 2 || s.dims.length !== 1 || s.dims[0] !== rows || (axis !== -1 && axis !== 2) || q.raw.length !== rows * dim || s.raw.length !== rows * 4) return null;
  // Copies: the file buffer's offsets need not be aligned for a Float32Array view.
  const table = new Int8Array(rows * dim);
  table.set(new Int8Array(q.raw.buffer, q.raw.byteOffset, q.raw.length));
  const scales = new Float32Array(rows);
  for (let i = 0; i < rows; i++) scales[i] = s.raw.readFloatLE(i * 4);
  return { table, scales, rows, dim };
}

/**
 * The static-table embedder for a transformers.js model folder, or null when the model is not one (or its files are
 * not as expected): the caller loads it through transformers.js.
 */
export function loadStaticTableEmbedder(spec: TransformersSpec): Embedder | null {
  try {
    const folder = spec.folder;
    const onnx = join(folder, 'onnx', spec.quantized ? 'model_quantized.onnx' : 'model.onnx');
    if (!existsSync(onnx) || !existsSync(join(folder, 'tokenizer.json'))) return null;
    const tokenizerConfig = existsSync(join(folder, 'tokenizer_config.json')) ? JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')) : {};
    const tokenizer: WordPieceTokenizer | null = createWordPieceTokenizer(JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8')), tokenizerConfig);
    if (!tokenizer) return null;
    const model = staticTable(readFileSync(onnx));
    if (!model) return null;
    const { table, scales, rows, dim } = model;
    /** One text: the hidden states the graph would output (float32 products), then the pipeline's pooling. */
    const embedOne = (text: string): Float32Array => {
      const ids = tokenizer.encode(text);
      const hidden = new Float32Array(ids.length * dim);
      for (let j = 0; j < ids.length; j++) {
        const id = ids[j] as number;
        if (id < 0 || id >= rows) throw new Error(`token id ${id} outside the table`);
        const scale = scales[id] as number;
        const row = id * dim;
        // int8 → float32 is exact, and the product of two float32 values is exact in a double, so rounding it once
        // to float32 (the Float32Array store) is IEEE float32 multiplication: the graph's Mul.
        for (let k = 0; k < dim; k++) hidden[j * dim + k] = (table[row + k] as number) * scale;
      }
      return meanPoolRow(hidden, 0, ids.length, dim, () => 1);
    };
    return {
      kind: 'transformers',
      model: transformersModelId(spec.model),
      dim,
      async embed(texts) {
        return texts.map(embedOne);
      },
    };
  } catch {
    return null;
  }
}

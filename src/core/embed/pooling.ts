/**
 * Mean pooling and L2 normalisation of one sequence's hidden states (rows `first` … `first + length - 1` of `data`,
 * `dim` values each), in transformers.js's arithmetic: sums in doubles rounded to float32, the norm accumulated in
 * float32. Shared by the pipeline path and the static table (static-table.ts), so both give the same bits.
 */
export function meanPoolRow(data: Float32Array, first: number, length: number, dim: number, weightAt: (row: number) => number): Float32Array {
  const sums = new Float64Array(dim);
  let count = 0;
  for (let j = 0; j < length; j++) {
    const weight = weightAt(j);
    count += weight;
    if (weight === 0) continue; // adding 0 × value leaves every sum unchanged (values are finite)
    const offset = (first + j) * dim;
    for (let k = 0; k < dim; k++) sums[k] = (sums[k] as number) + (data[offset + k] as number) * weight;
  }
  const vector = new Float32Array(dim);
  const norm = new Float32Array(1);
  for (let k = 0; k < dim; k++) {
    vector[k] = (sums[k] as number) / count;
    norm[0] = (norm[0] as number) + (vector[k] as number) ** 2;
  }
  norm[0] = (norm[0] as number) ** 0.5;
  for (let k = 0; k < dim; k++) vector[k] = (vector[k] as number) / (norm[0] as number);
  return vector;
}

/**
 * Weighted, L2-regularised logistic regression fitted by Newton's method (iteratively reweighted least squares). Used
 * only to fit ranker-weights.json (bench/train-ranker.mjs): a handful of features and a few hundred thousand rows, so
 * an exact second-order fit converges in a dozen steps and gives the same weights on every run.
 */

/** One training row: features, label (0/1) and its weight in the loss. */
export interface LogisticRow {
  x: readonly number[];
  y: 0 | 1;
  w?: number;
}

/** A fitted model. */
export interface LogisticFit {
  intercept: number;
  weights: number[];
  /** Newton steps taken. */
  steps: number;
}

/** Solves A·x = b by Gaussian elimination with partial pivoting (A is small and positive definite here). */
function solve(matrix: number[][], rhs: number[]): number[] {
  const n = rhs.length;
  const m = matrix.map((row, i) => [...row, rhs[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const lead = m[col]![col]!;
    if (Math.abs(lead) < 1e-12) continue;
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = m[r]![col]! / lead;
      if (factor === 0) continue;
      for (let k = col; k <= n; k++) m[r]![k]! -= factor * m[col]![k]!;
    }
  }
  return m.map((row, i) => (Math.abs(row[i]!) < 1e-12 ? 0 : row[n]! / row[i]!));
}

/**
 * Fits P(y = 1 | x) = σ(b + w·x) minimising Σ wᵢ·logloss + ½·l2·|w|² (the intercept is not penalised). `l2`
 * shrinks weights toward 0 so a feature that only helps on a few rows does not get a large weight.
 */
export function fitLogistic(rows: readonly LogisticRow[], options: { l2?: number; maxSteps?: number } = {}): LogisticFit {
  const l2 = options.l2 ?? 1;
  const d = (rows[0]?.x.length ?? 0) + 1;
  let beta = new Array<number>(d).fill(0);
  let steps = 0;
  for (; steps < (options.maxSteps ?? 50); steps++) {
    const hessian = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    const gradient = new Array<number>(d).fill(0);
    const xx = new Array<number>(d).fill(1);
    for (const row of rows) {
      for (let j = 1; j < d; j++) xx[j] = row.x[j - 1] as number;
      let z = 0;
      for (let j = 0; j < d; j++) z += (beta[j] as number) * (xx[j] as number);
      const p = 1 / (1 + Math.exp(-z));
      const w = row.w ?? 1;
      const s = w * p * (1 - p);
      for (let a = 0; a < d; a++) {
        gradient[a]! += w * (p - row.y) * (xx[a] as number);
        for (let b = a; b < d; b++) hessian[a]![b]! += s * (xx[a] as number) * (xx[b] as number);
      }
    }
    for (let a = 0; a < d; a++) {
      for (let b = 0; b < a; b++) hessian[a]![b] = hessian[b]![a] as number;
      if (a > 0) {
        hessian[a]![a]! += l2;
        gradient[a]! += l2 * (beta[a] as number);
      }
    }
    const step = solve(hessian, gradient);
    beta = beta.map((value, i) => value - (step[i] as number));
    if (Math.max(...step.map(Math.abs)) < 1e-7) {
      steps++;
      break;
    }
  }
  return { intercept: beta[0] as number, weights: beta.slice(1), steps };
}

// The text a query is embedded as (pipeline step 4). BM25 reads the query as written; the vector half reads it with
// the question's form taken off, so its vector sits near statements (tool results, replies, lessons) rather than near
// other questions (tuning.ts `queryForm`).

/** How a query is turned into the text the embedder reads. */
export type QueryForm = 'as-written' | 'statement' | 'statement-neg' | 'wh-only' | 'no-mark' | 'keep-mark';

const AUXILIARY = '(?:is|are|was|were|did|does|do|has|have|had|can|could|should|would|will)';
/** A leading wh-word and the auxiliary after it ("why did", "what is", "how"). */
const WH = new RegExp(`^(?:what|which|why|how|when|where|who|whom|whose)(?:\\s+${AUXILIARY})?(?=\\s)\\s*`, 'i');
/** A leading auxiliary alone ("did we …", "is there …"). */
const AUX = new RegExp(`^${AUXILIARY}(?=\\s)\\s*`, 'i');
/** The same with their negative contractions ("why didn't", "doesn't it"). */
const WH_NEG = new RegExp(`^(?:what|which|why|how|when|where|who|whom|whose)(?:\\s+${AUXILIARY}(?:n['’]t)?)?(?=\\s)\\s*`, 'i');
const AUX_NEG = new RegExp(`^${AUXILIARY}(?:n['’]t)?(?=\\s)\\s*`, 'i');

/**
 * The query as the embedder should read it. `statement`: a leading wh-word (with the auxiliary after it) or a
 * leading auxiliary alone is removed, and so is a trailing "?": "why did the tree command print an error about lsd?"
 * → "the tree command print an error about lsd". Nothing else changes (stop words stay: sentence encoders read
 * them), and a query that would be left empty is kept as written.
 */
export function vectorQueryText(query: string, form: QueryForm): string {
  if (form === 'as-written') return query;
  const trimmed = query.trim();
  if (form === 'no-mark') return unmarked(trimmed) || query;
  const [wh, aux] = form === 'statement-neg' ? [WH_NEG, AUX_NEG] : [WH, AUX];
  const stripped = trimmed.replace(wh, '');
  const unasked = stripped === trimmed && form !== 'wh-only' ? trimmed.replace(aux, '') : stripped;
  const rest = form === 'keep-mark' ? unasked : unmarked(unasked);
  return rest.trim() === '' ? query : rest;
}

/** The text without its trailing question marks (no regex: a long prompt is read once, from the end). */
function unmarked(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '?') end--;
  return text.slice(0, end).trimEnd();
}

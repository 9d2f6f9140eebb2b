/**
 * Conflict detection: do two engrams speak about the same thing and say opposite things ("use pnpm" / "never use
 * pnpm", "the timeout is 30s" / "the timeout is 60s")? Rules decide without a model; with an LLM configured it is
 * asked about every pair the rules consider close enough to matter, and its answer wins.
 *
 * The rules, in order (measured by bench/conflicts.mjs on fixtures/conflicts/):
 * 1. **Same subject**: the pair shares at least half of the smaller side's salient words (stemmed content words,
 *    without generic verbs such as use/run/keep, generic nouns such as file/project, numbers and negations).
 * 2. **Opposite polarity** on a shared word: one side asserts it, the other negates it. Negation is scoped the way
 *    instructions are written: `never|don't|not|avoid|skip|disable|instead of|rather than|over …` negate the next one
 *    or two content words (stepping over a generic verb: "never use pnpm" negates pnpm; "never mock the gateway"
 *    negates mock, not the gateway); `… is not needed | is no longer supported | must not be committed` negate the
 *    clause's subject. Clauses giving a reason (`because …`, `so they …`) are not instructions and carry no polarity.
 *    A flip on a verb also needs the nouns around it to be shared ("never commit .env files" does not contradict
 *    "commit package-lock.json").
 * 3. **Antonyms** on the same subject: tabs/spaces, single/double, sync/async, enable/disable, …
 * 4. **Different values** for the same subject: numbers (units normalised: 30s = 30 seconds, 5 min = 300 s) that
 *    differ between the two asserted sides.
 * @module
 */
import porterStem from 'wink-nlp-utils/src/string-stem.js';
import type { LlmClient } from '../../core/index.js';

/** Which rule found a conflict. */
export type ConflictSignal = 'polarity' | 'antonym' | 'value' | 'llm';

/** The verdict on one pair. */
export interface ConflictVerdict {
  conflict: boolean;
  signal: ConflictSignal | null;
  /** One line for people: what contradicts what. */
  reason: string;
  /** Salient-word overlap of the pair, 0–1. */
  overlap: number;
  method: 'rules' | 'llm';
}

/** Thresholds, with the reason for each. */
export const CONFLICT_RULES = {
  /** Share of the smaller side's salient words the pair must share to be "about the same thing". Below 0.5 the
   * unrelated pairs of the dev set started to pass (two lessons about Git share "branch" and "main"). */
  subjectOverlap: 0.5,
  /** Pairs at least this close are sent to the LLM when one is configured (looser than the rules: the model reads
   * meaning, so it can clear or confirm pairs the words alone do not settle). */
  llmCandidateOverlap: 0.3,
  /** At most this many candidate pairs per new engram go to the LLM, closest first (each call counts against the caps). */
  llmMaxPairs: 5,
  /** Content words a negation reaches. */
  negationReach: 2,
  /** Shared salient words two differing values need to be about the same setting. */
  valueSubjectWords: 2,
} as const;

const STOP = new Set(
  'a an the this that these those it its they them their we our you your i me my he she his her is are was were be been being am do does did doing done to of in on at by for with from into onto as and or if then than so such there here when where which who whom what while also just only very more most less least can could should would will shall may might must one ones each every all any some both either per via about up out over under again still already yet ever else whether how why'.split(
    ' ',
  ),
);

/** Words that negate what follows them (multi-word ones are joined with `_` by the tokenizer). */
const NEGATORS = new Set([
  'not', 'never', 'no', 'dont', 'doesnt', 'isnt', 'arent', 'wasnt', 'cant', 'cannot', 'wont', 'shouldnt', 'mustnt',
  'avoid', 'skip', 'disable', 'disabled', 'without', 'instead_of', 'rather_than', 'no_longer', 'nothing', 'none',
  'nor', 'stop', 'forbid', 'forbidden', 'ban', 'banned', 'turned_off', 'turn_off', 'off', 'drop', 'remove',
]);
/** Negators that follow what they negate when nothing comes after them ("strict mode turned off"). */
const POST_NEGATORS = new Set(['turned_off', 'off', 'disabled']);
/** Participles after "is not / is no longer / must not be" that make the clause's subject the negated thing. */
const STATES = new Set(
  ['need', 'requir', 'necessari', 'use', 'support', 'allow', 'recommend', 'commit', 'read', 'written', 'includ', 'want', 'enabl', 'set', 'share', 'check', 'track', 'store', 'load', 'run', 'instal', 'call'].map((word) => word),
);
/** Verbs that say little by themselves: a negation steps over them to their object. */
const GENERIC_VERBS = new Set(['use', 'run', 'keep', 'make', 'put', 'set', 'get', 'go', 'need', 'do', 'have', 'let', 'add', 'write', 'written', 'call', 'take', 'give', 'leav', 'appli', 'follow', 'prefer', 'hit', 'belong', 'target']);
/** Verbs that carry the meaning themselves: a negation stops at them. */
const VERBS = new Set([
  'mock', 'rebas', 'merg', 'sort', 'commit', 'includ', 'instal', 'import', 'export', 'deploy', 'push', 'pull', 'build',
  'test', 'cach', 'retri', 'read', 'fetch', 'load', 'store', 'log', 'start', 'convert', 'generat', 'enabl', 'indent',
  'format', 'lint', 'edit', 'chang', 'creat', 'delet', 'renam', 'move', 'check', 'wait', 'sleep', 'block', 'throw',
  'catch', 'return', 'print', 'send', 'bump', 'pin', 'upgrad', 'downgrad', 'updat', 'squash', 'amend', 'forc',
  'hardcod', 'inlin', 'wrap', 'bundl', 'compil', 'publish', 'releas', 'restart', 'reload', 'clear', 'flush', 'seed',
  'migrat', 'expos', 'lock', 'share', 'rewrit', 'switch', 'depend', 'track', 'ignor', 'rais', 'lower', 'split',
]);
/** Nouns too general to make two engrams about the same thing. */
const GENERIC_NOUNS = new Set(['file', 'thing', 'code', 'project', 'repo', 'repositori', 'here', 'way', 'time', 'default', 'instead', 'alwai', 'also', 'new', 'first']);
/** Words that start a clause giving a reason or a purpose: no instruction in it. */
const REASON_OPENERS = new Set(['because', 'since', 'otherwise', 'which', 'who', 'whereas', 'cause']);
/** Words after which the next word is a noun even when it could be a verb ("not on pushes to main"). */
const NOUN_MARKERS = new Set(['on', 'to', 'in', 'for', 'at', 'with', 'by', 'from', 'of', 'the', 'a', 'an', 'its', 'their', 'our', 'your', 'this', 'that', 'every', 'each']);
const CLAUSE_BREAKERS = new Set(['but', 'however', 'although', 'though', 'whereas', 'while']);

/** Pairs of words that contradict each other on the same subject (stems). */
const ANTONYMS: Array<[string, string]> = [
  ['tab', 'space'],
  ['singl', 'doubl'],
  ['sync', 'async'],
  ['synchron', 'asynchron'],
  ['enabl', 'disabl'],
  ['true', 'fals'],
  ['allow', 'deni'],
  ['includ', 'exclud'],
  ['parallel', 'serial'],
  ['lazi', 'eager'],
  ['mutabl', 'immut'],
  ['public', 'privat'],
  ['ascend', 'descend'],
  ['relat', 'absolut'],
  ['upper', 'lower'],
  ['increas', 'decreas'],
  ['blocking', 'nonblock'],
  ['requir', 'option'],
  ['class', 'function'],
];
const ANTONYM_OF = new Map<string, string>([...ANTONYMS.map(([a, b]) => [a, b] as const), ...ANTONYMS.map(([a, b]) => [b, a] as const)]);

const NUMBER_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, twenty: 20, thirty: 30, sixty: 60, hundred: 100 };
const UNITS: Record<string, { unit: string; factor: number }> = {
  ms: { unit: 's', factor: 0.001 }, millisecond: { unit: 's', factor: 0.001 }, milliseconds: { unit: 's', factor: 0.001 },
  s: { unit: 's', factor: 1 }, sec: { unit: 's', factor: 1 }, secs: { unit: 's', factor: 1 }, second: { unit: 's', factor: 1 }, seconds: { unit: 's', factor: 1 },
  m: { unit: 's', factor: 60 }, min: { unit: 's', factor: 60 }, mins: { unit: 's', factor: 60 }, minute: { unit: 's', factor: 60 }, minutes: { unit: 's', factor: 60 },
  h: { unit: 's', factor: 3600 }, hr: { unit: 's', factor: 3600 }, hrs: { unit: 's', factor: 3600 }, hour: { unit: 's', factor: 3600 }, hours: { unit: 's', factor: 3600 },
  d: { unit: 's', factor: 86400 }, day: { unit: 's', factor: 86400 }, days: { unit: 's', factor: 86400 },
  kb: { unit: 'b', factor: 1e3 }, mb: { unit: 'b', factor: 1e6 }, gb: { unit: 'b', factor: 1e9 }, tb: { unit: 'b', factor: 1e12 },
  kib: { unit: 'b', factor: 1024 }, mib: { unit: 'b', factor: 1048576 }, gib: { unit: 'b', factor: 1073741824 },
  '%': { unit: '%', factor: 1 }, percent: { unit: '%', factor: 1 },
};

/** One analysed text. */
export interface Analysis {
  /** Salient stems (what the text is about). */
  salient: Set<string>;
  /** Salient stems that are not verbs (what a verb flip must share). */
  nouns: Set<string>;
  /** Polarity of each stem in instruction clauses: +1 asserted, −1 negated (a stem can be both). */
  positive: Set<string>;
  negative: Set<string>;
  /** Normalised values asserted (numbers with their unit class): `30|s`, `5432|`, `10000000|b`. */
  values: Set<string>;
}

interface Token {
  raw: string;
  stem: string;
  number: number | null;
}

const MULTI_WORD: Array<[RegExp, string]> = [
  [/\bdo not\b/g, 'dont'],
  [/\bdoes not\b/g, 'doesnt'],
  [/\bmust not\b/g, 'mustnt'],
  [/\bshould not\b/g, 'shouldnt'],
  [/\binstead of\b/g, 'instead_of'],
  [/\brather than\b/g, 'rather_than'],
  [/\bno longer\b/g, 'no_longer'],
  [/\bturned off\b/g, 'turned_off'],
  [/\bturn off\b/g, 'turn_off'],
  [/\b(nowhere|nothing|no one) else\b/g, 'only'],
  [/\bnon-blocking\b/g, 'nonblocking'],
  [/\bso that\b/g, 'because'],
  // "prefer X over Y": Y is what not to do ("over" alone is too common to negate: "runs over SSH").
  [/\b(prefer(?:s|red)?\b[^.;,]*?)\bover\b/g, '$1 instead_of'],
  [/n't\b/g, 'nt'],
];

/** Splits text into clauses of tokens; punctuation and clause words end a clause. */
function clauses(text: string): Token[][] {
  let lower = text.toLowerCase().replace(/[’‘]/g, "'");
  for (const [pattern, replacement] of MULTI_WORD) lower = lower.replace(pattern, replacement);
  const out: Token[][] = [];
  let current: Token[] = [];
  const flush = (): void => {
    if (current.length) out.push(current);
    current = [];
  };
  // Words keep internal . / - _ (paths, flags, file names); a leading -- stays (flags).
  for (const piece of lower.split(/(\s+|[;,!?()"`]|\.(?=\s|$)|:(?=\s|$))/)) {
    if (!piece || /^\s+$/.test(piece)) continue;
    if (/^[;,!?().:"`]$/.test(piece)) {
      if (piece !== '(' && piece !== ')' && piece !== '"' && piece !== '`') flush();
      continue;
    }
    const word = piece.replace(/^['"]+|['"]+$/g, '');
    if (!word) continue;
    if (CLAUSE_BREAKERS.has(word) || REASON_OPENERS.has(word)) flush();
    for (const token of tokensOf(word)) current.push(token);
  }
  flush();
  return out;
}

/** A word as tokens: a number with its unit split in two (`30s` → 30, s), hyphenated number words split. */
function tokensOf(word: string): Token[] {
  const attached = /^(\d+(?:\.\d+)?)([a-z%]+)$/.exec(word);
  if (attached && UNITS[attached[2] as string]) {
    return [number(attached[1] as string), { raw: attached[2] as string, stem: attached[2] as string, number: null }];
  }
  if (/^\d+(?:\.\d+)?$/.test(word)) return [number(word)];
  const parts = word.split('-');
  if (parts.length > 1 && NUMBER_WORDS[parts[0] as string] !== undefined) return parts.flatMap((part) => tokensOf(part));
  if (NUMBER_WORDS[word] !== undefined) return [{ raw: word, stem: String(NUMBER_WORDS[word]), number: NUMBER_WORDS[word] as number }];
  const plain = /^[a-z]+$/.test(word);
  return [{ raw: word, stem: plain ? stemOf(word) : word, number: null }];
}

// Porter stemming is most of an analysis's cost (≈ 4 µs a word) and a store's texts draw on a vocabulary of
// thousands: stems are remembered (a pure function of the word), the memo dropped when it grows past a bound so texts
// full of one-off tokens cannot make it grow without end.
const stems = new Map<string, string>();
const STEMS_KEPT = 100_000;

/** wink's Porter stem of a lower-case word, memoised. */
export function stemOf(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= STEMS_KEPT) stems.clear();
    stemmed = porterStem(word);
    stems.set(word, stemmed);
  }
  return stemmed;
}

const number = (text: string): Token => ({ raw: text, stem: text, number: Number(text) });

const isContent = (token: Token): boolean => token.number === null && !STOP.has(token.raw) && !NEGATORS.has(token.raw) && token.raw.length > 1 && !UNITS[token.raw];
/** A verb by its stem, unless its ending says noun (`migration` shares `migrate`'s stem). */
const NOUN_ENDING = /(tion|sion|ment|ness|ity|ance|ence|ings)$/;
const isVerb = (token: Token): boolean => VERBS.has(token.stem) && !NOUN_ENDING.test(token.raw);

/** Analyses one text: what it is about, what it asserts and negates, which values it states. */
export function analyse(text: string): Analysis {
  const analysis: Analysis = { salient: new Set(), nouns: new Set(), positive: new Set(), negative: new Set(), values: new Set() };
  for (const clause of clauses(text)) {
    const reason = clause[0] !== undefined && (REASON_OPENERS.has(clause[0].raw) || (clause[0].raw === 'so' && ['they', 'it', 'we', 'you', 'the', 'that', 'there'].includes(clause[1]?.raw ?? '')));
    for (const token of clause) {
      if (!isContent(token)) continue;
      if (!GENERIC_VERBS.has(token.stem) && !GENERIC_NOUNS.has(token.stem)) {
        analysis.salient.add(token.stem);
        if (!isVerb(token)) analysis.nouns.add(token.stem);
      }
    }
    if (reason) continue;
    const negated = new Set<number>();
    clause.forEach((token, index) => {
      if (!NEGATORS.has(token.raw)) return;
      const after = clause.slice(index + 1);
      const firstAfter = after.findIndex((item) => !STOP.has(item.raw) && item.raw !== 'be');
      const state = firstAfter >= 0 ? after[firstAfter] : undefined;
      const nothingAfterState = state !== undefined && after.slice(firstAfter + 1).every((item) => !isContent(item) || item.raw === 'here' || item.raw === 'anymore');
      const post = POST_NEGATORS.has(token.raw) || (state !== undefined && STATES.has(state.stem) && nothingAfterState);
      if (post) {
        if (state && STATES.has(state.stem)) negated.add(index + 1 + firstAfter);
        // What it follows: the nearest content words before the negation (at most `negationReach`).
        let reached = 0;
        for (let position = index - 1; position >= 0 && reached < CONFLICT_RULES.negationReach; position--) {
          const item = clause[position] as Token;
          if ((!isContent(item) && item.number === null) || GENERIC_VERBS.has(item.stem) || GENERIC_NOUNS.has(item.stem)) continue;
          negated.add(position);
          reached++;
        }
        return;
      }
      let reached = 0;
      for (let position = index + 1; position < clause.length && reached < CONFLICT_RULES.negationReach; position++) {
        const item = clause[position] as Token;
        if (NEGATORS.has(item.raw)) break;
        if (!isContent(item) && item.number === null) continue;
        if (GENERIC_VERBS.has(item.stem) || GENERIC_NOUNS.has(item.stem)) continue;
        negated.add(position);
        reached++;
        const noun = NOUN_MARKERS.has(clause[position - 1]?.raw ?? '');
        if (isVerb(item) && !noun) break;
      }
    });
    clause.forEach((token, index) => {
      if (!isContent(token) && token.number === null) return;
      if (negated.has(index)) analysis.negative.add(token.stem);
      else analysis.positive.add(token.stem);
    });
    // Values: a number and the unit after it (a unit-less number keeps its own class).
    clause.forEach((token, index) => {
      if (token.number === null || negated.has(index)) return;
      const unit = UNITS[clause[index + 1]?.raw ?? ''];
      analysis.values.add(unit ? `${token.number * unit.factor}|${unit.unit}` : `${token.number}|`);
    });
  }
  return analysis;
}

function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / Math.min(a.size, b.size);
}

const only = (set: ReadonlySet<string>, other: ReadonlySet<string>, word: string): boolean => set.has(word) && !other.has(word);

/** The rules' verdict on a pair of analysed texts. */
export function ruleVerdict(a: Analysis, b: Analysis): ConflictVerdict {
  const subject = overlap(a.salient, b.salient);
  const none: ConflictVerdict = { conflict: false, signal: null, reason: '', overlap: subject, method: 'rules' };
  if (subject < CONFLICT_RULES.subjectOverlap) return none;
  const nouns = overlap(a.nouns, b.nouns);
  for (const [first, second] of [
    [a, b],
    [b, a],
  ] as const) {
    for (const word of first.positive) {
      if (!only(first.positive, first.negative, word) || !only(second.negative, second.positive, word)) continue;
      if (GENERIC_VERBS.has(word) || GENERIC_NOUNS.has(word)) continue;
      if (VERBS.has(word) && nouns < CONFLICT_RULES.subjectOverlap) continue;
      return { ...none, conflict: true, signal: 'polarity', reason: `one says to '${word}', the other says not to` };
    }
  }
  for (const word of a.positive) {
    const opposite = ANTONYM_OF.get(word);
    if (!opposite || a.positive.has(opposite) || !b.positive.has(opposite) || b.positive.has(word)) continue;
    return { ...none, conflict: true, signal: 'antonym', reason: `'${word}' against '${opposite}' on the same subject` };
  }
  const aValues = [...a.values];
  const bValues = [...b.values];
  // Two numbers alone ("lesson 2", "lesson 3") are not one setting with two values: a value needs a subject of at
  // least two shared words ("upload size", "pool size", "api client timeout").
  const sharedWords = [...a.salient].filter((word) => b.salient.has(word)).length;
  if (aValues.length > 0 && bValues.length > 0 && sharedWords >= CONFLICT_RULES.valueSubjectWords) {
    const units = (values: string[]): Set<string> => new Set(values.map((value) => value.split('|')[1] as string));
    const sharedUnits = [...units(aValues)].filter((unit) => units(bValues).has(unit));
    for (const unit of sharedUnits) {
      const left = aValues.filter((value) => value.endsWith(`|${unit}`));
      const right = bValues.filter((value) => value.endsWith(`|${unit}`));
      if (left.some((value) => !right.includes(value)) && right.some((value) => !left.includes(value))) {
        const show = (values: string[]): string => values.map((value) => value.split('|')[0]).join('/');
        return { ...none, conflict: true, signal: 'value', reason: `different values for the same thing: ${show(left)} against ${show(right)}` };
      }
    }
  }
  return none;
}

/** Rules on two texts. */
export function compareTexts(a: string, b: string): ConflictVerdict {
  return ruleVerdict(analyse(a), analyse(b));
}

/** Salient-word overlap of two texts (what decides whether a pair is worth asking an LLM about). */
export function subjectOverlap(a: Analysis, b: Analysis): number {
  return overlap(a.salient, b.salient);
}

/** The prompt that asks an LLM about one pair. */
export const CONFLICT_SYSTEM = [
  'You compare two memories a coding agent keeps about a project or a person\'s way of working.',
  'Answer with one JSON object: {"relation": "conflict" | "duplicate" | "compatible", "why": "<one short sentence>"}.',
  '"conflict": both are about the same thing and cannot both be followed or both be true (opposite instructions,',
  'different values for the same setting, different tools for the same job).',
  '"duplicate": they say the same thing in other words. "compatible": anything else, including unrelated memories and',
  'memories about different things that share words.',
].join('\n');

/** Asks the LLM about one pair; null when it gave no usable answer (the rules' verdict stands then). */
export async function llmVerdict(llm: LlmClient, a: string, b: string, rules: ConflictVerdict, sessionId?: string): Promise<ConflictVerdict | null> {
  const response = await llm.complete({
    system: CONFLICT_SYSTEM,
    prompt: `Memory A: ${a}\nMemory B: ${b}`,
    json: true,
    maxTokens: 120,
    purpose: 'conflict',
    ...(sessionId ? { sessionId } : {}),
  });
  let parsed: { relation?: unknown; why?: unknown };
  try {
    const text = response.text.trim();
    parsed = JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as typeof parsed;
  } catch {
    return null;
  }
  if (parsed.relation !== 'conflict' && parsed.relation !== 'duplicate' && parsed.relation !== 'compatible') return null;
  const why = typeof parsed.why === 'string' && parsed.why.trim() ? parsed.why.trim().slice(0, 300) : `the LLM judged them ${parsed.relation}`;
  return { conflict: parsed.relation === 'conflict', signal: parsed.relation === 'conflict' ? 'llm' : null, reason: why, overlap: rules.overlap, method: 'llm' };
}

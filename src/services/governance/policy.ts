/**
 * Review policy: risk tiers, who may make an engram active without a person, and freshness. Pure functions over
 * config.json's `governance` section (docs/GOVERNANCE.md explains every value).
 * @module
 */
import type { Config, EngramStatus, LearnedBy, RecallFields } from '../../core/index.js';

export type Tier = 1 | 2 | 3;

/**
 * Risk tier of each kind when config.json says nothing. Tier 1 is what a wrong memory costs little: how a tool or
 * library behaves (extraction's `gotcha`; the Go engram's `discovery`), which the next failing command corrects.
 * Tier 2 is everything else a session teaches (corrections, conventions, workarounds, decisions): right or wrong, it
 * steers the agent, so it waits for a person unless that person configured otherwise. Tier 3 is rules and policy;
 * text that forbids or requires an action, or names credentials or production, is tier 3 whatever its kind.
 */
export const DEFAULT_TIERS: Readonly<Record<string, Tier>> = {
  default: 2,
  gotcha: 1,
  tool: 1,
  discovery: 1,
  rule: 3,
  policy: 3,
  security: 3,
};

/**
 * How long each kind stays fresh when config.json says nothing: tool behaviour and workarounds change with versions
 * (half a year); conventions, corrections and decisions last longer (a year).
 */
export const DEFAULT_DECAY: Readonly<Record<string, string>> = {
  default: '1y',
  gotcha: '180d',
  tool: '180d',
  discovery: '180d',
  struggle: '180d',
};

/** Text that makes an engram tier 3 whatever its kind, with the reason shown in review. */
const TIER3_RULES: ReadonlyArray<{ why: string; pattern: RegExp }> = [
  {
    why: 'it forbids or requires an action',
    pattern:
      /\b(never|always|must|mustn'?t|shall not|do not|don'?t|forbid(?:den|s)?|prohibit(?:ed|s)?|not allowed|is required|are required|required to|only ever)\b/i,
  },
  {
    why: 'it names credentials',
    pattern: /\b(passwords?|passwd|secrets?|credentials?|api[ _-]?keys?|access[ _-]?keys?|tokens?|private[ _-]?keys?|ssh[ _-]?keys?)\b/i,
  },
  { why: 'it names production', pattern: /\b(prod|production|live (?:database|db|server|cluster))\b/i },
];

/** The governance settings with the built-in tables merged under the user's. */
export interface GovernancePolicy {
  autopromote: boolean;
  tiers: Record<string, Tier>;
  decay: Record<string, string>;
  conflictLlm: 'auto' | 'off';
  contextChars: number;
}

/** Reads config.json's `governance` section (defaults when absent). */
export function governancePolicy(config?: Pick<Config, 'governance'>): GovernancePolicy {
  const section = config?.governance;
  return {
    autopromote: section?.autopromote ?? false,
    tiers: { ...DEFAULT_TIERS, ...(section?.tiers ?? {}) } as Record<string, Tier>,
    decay: { ...DEFAULT_DECAY, ...(section?.decay ?? {}) },
    conflictLlm: section?.conflict_llm ?? 'auto',
    contextChars: section?.context_chars ?? 4_000,
  };
}

/** A tier and why. */
export interface TierVerdict {
  tier: Tier;
  why: string;
}

/** The risk tier of an engram of `kind` saying `text`. */
export function classifyTier(kind: string, text: string, policy: GovernancePolicy = governancePolicy()): TierVerdict {
  for (const rule of TIER3_RULES) if (rule.pattern.test(text)) return { tier: 3, why: rule.why };
  const tier = policy.tiers[kind] ?? policy.tiers.default ?? 2;
  return { tier, why: `kind '${kind}' is tier ${tier}` };
}

/** Learned-by values whose engrams a person decided on when they were written (their own add, their import). */
export const PERSON_LEARNED: readonly LearnedBy[] = ['user', 'import'];

/** What an engram's status is when it is written, and why. */
export interface Admission {
  status: Extract<EngramStatus, 'active' | 'pending'>;
  /** Stored as `status_reason` (null when active). */
  reason: string | null;
  /** True when tier 1 and autopromote made it active without a person. */
  autopromoted: boolean;
}

/**
 * The status a new (or re-worded) engram gets. A contradiction with an active engram always waits. A person's own
 * add or import is active at once. Anything else — extraction, the agent, sync — is active only when its tier is 1
 * and autopromote is on; tier 3 always waits.
 */
export function admit(input: { learnedBy: LearnedBy; tier: TierVerdict; conflicts: ReadonlyArray<{ other_id: number }>; policy: GovernancePolicy }): Admission {
  const { learnedBy, tier, conflicts, policy } = input;
  if (conflicts.length > 0) {
    const others = conflicts.map((conflict) => `#${conflict.other_id}`).join(', ');
    return { status: 'pending', reason: `contradicts active engram ${others}; a person decides which holds`, autopromoted: false };
  }
  if (PERSON_LEARNED.includes(learnedBy)) return { status: 'active', reason: null, autopromoted: false };
  if (tier.tier === 3) return { status: 'pending', reason: `tier 3 (${tier.why}): always reviewed by a person`, autopromoted: false };
  if (tier.tier === 1 && policy.autopromote) return { status: 'active', reason: null, autopromoted: true };
  return {
    status: 'pending',
    reason: tier.tier === 1 ? 'tier 1, but autopromote is off: waits for review' : `tier ${tier.tier} (${tier.why}): waits for review`,
    autopromoted: false,
  };
}

const UNIT_DAYS: Record<string, number> = { d: 1, w: 7, m: 30, y: 365 };

/** `180d` → milliseconds; `never` → null. */
export function parseDecay(value: string): number | null {
  if (value === 'never') return null;
  const match = /^([1-9]\d{0,4})([dwmy])$/.exec(value);
  if (!match) throw new Error(`not a decay: '${value}'`);
  return Number(match[1]) * (UNIT_DAYS[match[2] as string] as number) * 86_400_000;
}

/** What freshness needs: the clock and each kind's decay. */
export interface Freshness {
  now: Date;
  /** Milliseconds an engram of this kind stays fresh, or null for never stale. */
  decayMs(kind: string): number | null;
}

/** Freshness at `now` under a policy. */
export function freshness(policy: GovernancePolicy, now: Date): Freshness {
  const cache = new Map<string, number | null>();
  return {
    now,
    decayMs(kind) {
      if (!cache.has(kind)) cache.set(kind, parseDecay(policy.decay[kind] ?? policy.decay.default ?? '1y'));
      return cache.get(kind) as number | null;
    },
  };
}

type FreshnessFields = Pick<RecallFields, 'kind' | 'confirmed_at' | 'last_matched_at' | 'created_at'>;

/** When an engram turns (or turned) stale, or null if it never does: decay after the later of the last confirmation
 * by a person (its creation when none) and the last time it was found useful. */
export function staleAfter(engram: FreshnessFields, fresh: Freshness): Date | null {
  const decay = fresh.decayMs(engram.kind);
  if (decay === null) return null;
  const since = [engram.confirmed_at ?? engram.created_at, engram.last_matched_at]
    .filter((value): value is string => value !== null && value !== undefined)
    .map((value) => Date.parse(value))
    .reduce((a, b) => Math.max(a, b), 0);
  return new Date(since + decay);
}

/** True when the engram is past its decay. */
export function isStale(engram: FreshnessFields, fresh: Freshness): boolean {
  const after = staleAfter(engram, fresh);
  return after !== null && after.getTime() <= fresh.now.getTime();
}

/**
 * May hooks inject this engram? Active, its code not gone (unless a person kept it), and fresh — or pinned: a pin is
 * a person's (or the evaluator's) standing decision to show it.
 */
export function injectable(engram: FreshnessFields & Pick<RecallFields, 'status' | 'liveness' | 'pinned'>, fresh: Freshness): boolean {
  if (engram.status !== 'active' || engram.liveness === 'gone') return false;
  return engram.pinned || !isStale(engram, fresh);
}

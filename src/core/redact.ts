/**
 * Redaction applied before anything is stored, exported or logged: `<private>…</private>` spans and common secrets.
 *
 * Design rules:
 * - Secrets are replaced by `[REDACTED:<kind>]`, so a reader knows something was there and what kind it was;
 *   private spans become plain `[REDACTED]`.
 * - Redaction is idempotent: redacting redacted text changes nothing.
 * - Ordinary code must survive: `password: string`, `maxTokens = 100`, `token = tokenize(x)` are left alone. Key/value
 *   rules therefore only fire on literal values, never on identifiers, calls or type annotations.
 * - No pattern may backtrack catastrophically: every quantifier is bounded by a character class that cannot overlap
 *   the next token.
 */

/** What kind of secret a mask stands for. */
export type RedactionKind =
  | 'private'
  | 'private-key'
  | 'aws-access-key'
  | 'github-token'
  | 'gitlab-token'
  | 'anthropic-key'
  | 'openai-key'
  | 'slack-token'
  | 'slack-webhook'
  | 'google-api-key'
  | 'stripe-key'
  | 'npm-token'
  | 'huggingface-token'
  | 'jwt'
  | 'bearer-token'
  | 'url-credentials'
  | 'secret-assignment'
  | 'env-secret';

/** Result of one redaction pass. */
export interface Redaction {
  text: string;
  /** Kinds found, in first-seen order, each once. */
  kinds: RedactionKind[];
}

const mask = (kind: RedactionKind): string => (kind === 'private' ? '[REDACTED]' : `[REDACTED:${kind}]`);

/** Token-shaped secrets: the whole match is replaced. Order matters (Anthropic before OpenAI: both start `sk-`). */
const TOKEN_PATTERNS: ReadonlyArray<readonly [RedactionKind, RegExp]> = [
  ['private-key', /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g],
  // A key cut off before its END line (truncated logs, partial pastes): mask the header and its base64 body.
  ['private-key', /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:\r?\n[A-Za-z0-9+/=]{1,100})*/g],
  ['aws-access-key', /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b/g],
  ['github-token', /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g],
  ['github-token', /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g],
  ['gitlab-token', /\bgl(?:pat|dt|rt|cbt|ptt|ft|imt|soat|agent)-[A-Za-z0-9_-]{20,}/g],
  ['anthropic-key', /\bsk-ant-[A-Za-z0-9_-]{20,}/g],
  ['openai-key', /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g],
  ['slack-webhook', /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9_/-]{10,}/g],
  ['slack-token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/g],
  ['slack-token', /\bxapp-\d-[A-Za-z0-9-]{10,}/g],
  ['google-api-key', /\bAIza[0-9A-Za-z_-]{35}\b/g],
  ['stripe-key', /\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{16,}/g],
  ['npm-token', /\bnpm_[A-Za-z0-9]{36}\b/g],
  ['huggingface-token', /\bhf_[A-Za-z0-9]{34,}\b/g],
  ['jwt', /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g],
];

/** `Authorization: Bearer <token>` and friends: keep the scheme, mask the credential. */
const AUTH_HEADER = /\b(Authorization\s*["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token)\s+)([A-Za-z0-9._~+/=-]{8,})/gi;

/** `scheme://user:password@host`: keep the user, mask the password. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{0,20}:\/\/[^\s:@/]{1,100}):([^\s@/]{1,200})@/gi;

/**
 * Names that hold secrets when they END with one of these words (`DB_PASSWORD`, `apiToken`, `client_secret`,
 * `aws_secret_access_key`). Ending, not containing: `tokenType`, `maxTokens`, `password_hash`, `tokenizer` are not
 * secrets.
 */
const SECRET_NAME =
  /(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|auth[_-]?key|client[_-]?secret|credentials?)$/i;

/** `.env` name segments that mark a secret (`SIGNING_KEY`, `DB_PASS`, `SECRET_KEY_BASE`, `AWS_SECRET_ACCESS_KEY`). */
const ENV_SECRET_SEGMENTS = new Set([
  'KEY', 'APIKEY', 'TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'PWD', 'PASS', 'PASSPHRASE', 'CREDENTIAL', 'CREDENTIALS', 'PRIVATE',
]);
/** Last segments that name metadata about a secret rather than the secret (`TOKEN_URL`, `KEY_FILE`, `SECRET_NAME`). */
const ENV_METADATA_SEGMENTS = new Set([
  'FILE', 'PATH', 'DIR', 'NAME', 'URL', 'URI', 'ID', 'ARN', 'TYPE', 'LENGTH', 'SIZE', 'TTL', 'EXPIRY', 'EXPIRES', 'COUNT',
  'MAX', 'MIN', 'HEADER', 'ENDPOINT', 'REGION',
]);

/** True when an upper-snake `.env` name holds a secret. */
function isSecretEnvName(name: string): boolean {
  const segments = name.toUpperCase().split('_').filter(Boolean);
  const last = segments.at(-1);
  if (last === undefined || ENV_METADATA_SEGMENTS.has(last)) return false;
  return segments.some((segment) => ENV_SECRET_SEGMENTS.has(segment));
}

/** `KEY=value` at the start of a line, `.env` / shell style (no spaces around `=`). */
const ENV_LINE = /^([ \t]*(?:export[ \t]+)?)([A-Za-z_][A-Za-z0-9_]{0,100})=([^\r\n]*)$/gm;

/** `name: "literal"`, `"name": "literal"`, `name = 'literal'`, `name := "literal"` — quoted literals only. */
const QUOTED_ASSIGNMENT = /([A-Za-z0-9_.$-]{1,100})(["']?)([ \t]*(?::=|=>|[:=])[ \t]*)(["'`])([^"'`\r\n]{1,500})\4/g;

/** `--password=xyz`, `?token=abc&`: an unquoted value right after `=`. */
const INLINE_ASSIGNMENT = /([A-Za-z0-9_.-]{1,100})=([^\s&'"`<>;,)(\][{}]{3,500})/g;

const isRedacted = (value: string): boolean => value.startsWith('[REDACTED');

/** A value is a reference, not a secret: `$VAR`, `${VAR}`, `$(cmd)`, `process.env.X`, `<placeholder>`. */
const isReference = (value: string): boolean => /^(?:\$|<|%|process\.env|os\.environ|env\()/.test(value);

/** Values that are code, not data: calls, member access chains, booleans, numbers. */
const looksLikeCode = (value: string): boolean =>
  /[()[\]{}]/.test(value) || /^(?:true|false|null|none|undefined|nil)$/i.test(value) || /^[\d.]+$/.test(value);

/** Redacts private spans and secrets from one string. */
export function redact(input: string): Redaction {
  const kinds: RedactionKind[] = [];
  const note = (kind: RedactionKind): void => {
    if (!kinds.includes(kind)) kinds.push(kind);
  };
  let text = input;

  if (/<private>/i.test(text)) {
    text = text.replace(/<private>[\s\S]*?<\/private>/gi, () => (note('private'), mask('private')));
    // An unclosed <private> hides everything after it: the writer meant it private and forgot to close it.
    text = text.replace(/<private>[\s\S]*$/i, () => (note('private'), mask('private')));
  }

  for (const [kind, pattern] of TOKEN_PATTERNS) {
    text = text.replace(pattern, () => (note(kind), mask(kind)));
  }

  text = text.replace(AUTH_HEADER, (_, prefix: string) => (note('bearer-token'), `${prefix}${mask('bearer-token')}`));

  text = text.replace(URL_CREDENTIALS, (whole, userPart: string, password: string) => {
    if (isRedacted(password) || isReference(password)) return whole;
    note('url-credentials');
    return `${userPart}:${mask('url-credentials')}@`;
  });

  text = text.replace(ENV_LINE, (whole, lead: string, name: string, rawValue: string) => {
    const value = rawValue.trim().replace(/^(["'])(.*)\1$/, '$2');
    const sensitive = isSecretEnvName(name) || SECRET_NAME.test(name);
    if (!sensitive || value === '' || isRedacted(value) || isReference(value) || looksLikeCode(value)) return whole;
    note('env-secret');
    return `${lead}${name}=${mask('env-secret')}`;
  });

  text = text.replace(
    QUOTED_ASSIGNMENT,
    (whole, name: string, nameQuote: string, op: string, quote: string, value: string) => {
      if (!SECRET_NAME.test(name) || isRedacted(value) || isReference(value) || value.trim() === '') return whole;
      note('secret-assignment');
      return `${name}${nameQuote}${op}${quote}${mask('secret-assignment')}${quote}`;
    },
  );

  text = text.replace(INLINE_ASSIGNMENT, (whole, name: string, value: string) => {
    if (!SECRET_NAME.test(name) || isRedacted(value) || isReference(value) || looksLikeCode(value)) return whole;
    if (!/[A-Za-z0-9]{3}/.test(value)) return whole;
    note('secret-assignment');
    return `${name}=${mask('secret-assignment')}`;
  });

  return { text, kinds };
}

/** Redacts and returns only the text. */
export function redactText(input: string): string {
  return redact(input).text;
}

/** True when nothing but redaction markers and whitespace is left: the writer's content was all private or secret. */
export function isOnlyRedacted(text: string): boolean {
  return text.replace(/\[REDACTED(?::[a-z-]+)?\]/g, '').trim() === '';
}

/** Redacts every string inside a JSON-like value; objects and arrays are copied, other values kept. */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value).text as T;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item)])) as T;
  }
  return value;
}

/**
 * Characters that hide or reorder text without showing (bidi overrides, zero-width spaces, BOM) — a classic way to
 * smuggle instructions into something an agent will later read. Zero-width joiner is kept: emoji need it.
 */
const INVISIBLE = /[\u200B\u200C\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/** Removes invisible and bidi-control characters. */
export function stripInvisible(input: string): string {
  return input.replace(INVISIBLE, '');
}

/** The write-path sanitiser for free text: invisible characters removed, then secrets and private spans redacted. */
export function sanitizeText(input: string): Redaction {
  return redact(stripInvisible(input));
}

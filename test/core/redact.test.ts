import { describe, expect, it } from 'vitest';
import { redact, sanitizeText, stripInvisible } from '../../src/core/redact.js';

// Secrets below are fabricated with the right shapes; none is real.
const GH = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
const CASES: Array<[string, string, string]> = [
  ['AWS access key id', 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'aws-access-key'],
  ['AWS temporary key id', 'key ASIAY34FZKBOKMUTVV7A in env', 'aws-access-key'],
  ['GitHub classic token', `export GH=${GH}`, 'github-token'],
  ['GitHub fine-grained token', `token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH`, 'github-token'],
  ['GitLab token', 'use glpat-xxxxXXXXxxxxXXXXxxxx1234 to push', 'gitlab-token'],
  ['OpenAI key', 'OPENAI: sk-proj-abcdefghijklmnopqrstuvwxyzABCDEF0123', 'openai-key'],
  ['OpenAI legacy key', 'sk-abcdefghijklmnopqrstuvwxyzABCDEF0123456789abcd', 'openai-key'],
  ['Anthropic key', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFG', 'anthropic-key'],
  ['Slack bot token', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx', 'slack-token'],
  ['Slack app token', 'xapp-1-A0123456789-1234567890123-abcdef0123456789', 'slack-token'],
  ['Slack webhook', 'curl https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', 'slack-webhook'],
  ['JWT', 'Cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'jwt'],
  ['Google API key', 'key=AIzaSyA-1234567890abcdefghijklmnopqrstu', 'google-api-key'],
  ['Stripe key', 'stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'stripe-key'],
  ['npm token', 'npm_abcdefghijklmnopqrstuvwxyz0123456789', 'npm-token'],
  ['Hugging Face token', 'hf_abcdefghijklmnopqrstuvwxyzABCDEFGH', 'huggingface-token'],
  ['Bearer header', 'curl -H "Authorization: Bearer abc.def-ghi_jkl123456"', 'bearer-token'],
  ['URL credentials', 'DATABASE_URL=postgres://admin:s3cr3tPass@db.internal:5432/app', 'url-credentials'],
  ['password assignment (quoted)', 'const password = "hunter22";', 'secret-assignment'],
  ['JSON secret field', '{"client_secret": "q8Z-looks-random-91"}', 'secret-assignment'],
  ['YAML quoted token', "  apiToken: 'tok_live_998877'", 'secret-assignment'],
  ['CLI flag', 'mysql --password=hunter22 -h db', 'secret-assignment'],
  ['query string token', 'GET /callback?token=abcdef123456&state=x', 'secret-assignment'],
  ['.env password', 'DB_PASSWORD=correct-horse-battery', 'env-secret'],
  ['.env secret key base', 'SECRET_KEY_BASE=9f8e7d6c5b4a', 'env-secret'],
  ['.env signing key', 'export SIGNING_KEY="abc123def456"', 'env-secret'],
];

describe('redact', () => {
  it.each(CASES)('masks a %s', (_name, input, kind) => {
    const result = redact(input);
    expect(result.kinds).toContain(kind);
    expect(result.text).toContain(`[REDACTED:${kind}]`);
  });

  it('removes the secret value itself in every case', () => {
    const secrets = ['AKIAIOSFODNN7EXAMPLE', GH, 'hunter22', 's3cr3tPass', 'correct-horse-battery', 'abc.def-ghi_jkl123456'];
    const text = CASES.map(([, input]) => input).join('\n');
    const { text: out } = redact(text);
    for (const secret of secrets) expect(out).not.toContain(secret);
  });

  it('masks a PEM private key block, and one cut off before its END line', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabcDEF+/=\n-----END RSA PRIVATE KEY-----';
    expect(redact(`key:\n${pem}\ndone`).text).toBe('key:\n[REDACTED:private-key]\ndone');
    const cut = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACB';
    expect(redact(cut).text).toBe('[REDACTED:private-key]');
  });

  it('replaces <private> spans case-insensitively across lines, and an unclosed one to the end', () => {
    expect(redact('a <PRIVATE>my\nsecret</Private> b <private>x</private> c').text).toBe('a [REDACTED] b [REDACTED] c');
    expect(redact('keep this <private>but not\nthis').text).toBe('keep this [REDACTED]');
    expect(redact('a <private>x</private>').kinds).toEqual(['private']);
  });

  it('is idempotent', () => {
    for (const [, input] of CASES) {
      const once = redact(input).text;
      expect(redact(once).text).toBe(once);
      expect(redact(once).kinds).toEqual([]);
    }
  });

  it('keeps the key name and quotes around a masked assignment', () => {
    expect(redact('password = "hunter22"').text).toBe('password = "[REDACTED:secret-assignment]"');
    expect(redact('"api_key": "abcd1234"').text).toBe('"api_key": "[REDACTED:secret-assignment]"');
    expect(redact('DB_PASSWORD=x1y2z3').text).toBe('DB_PASSWORD=[REDACTED:env-secret]');
  });

  it('masks the whole rest of an unquoted .env line, so a value with spaces cannot leak a part', () => {
    expect(redact('DB_PASSWORD=correct horse battery staple').text).toBe('DB_PASSWORD=[REDACTED:env-secret]');
  });

  it('leaves references to secrets alone', () => {
    const references = [
      'API_KEY=$API_KEY',
      'export TOKEN=${GITHUB_TOKEN}',
      'DB_PASSWORD=$(cat /run/secrets/db)',
      'password: "${{ secrets.DB_PASSWORD }}"',
      'const token = process.env.GITHUB_TOKEN;',
      'api_key=os.environ["OPENAI_API_KEY"]',
      'postgres://user:${PGPASSWORD}@localhost/db',
    ];
    for (const text of references) expect(redact(text)).toEqual({ text, kinds: [] });
  });
});

describe('redact on ordinary code', () => {
  // Each snippet must come back byte for byte: false positives would corrupt the code an agent learns from.
  const ORDINARY = [
    'interface Credentials {\n  username: string;\n  password: string;\n  token?: Token | null;\n}',
    'const tokens = tokenize(text);\nfor (const token of tokens) counts[token] = (counts[token] ?? 0) + 1;',
    'if (token === undefined || password == null) throw new Error("missing");',
    'password = get_password()\nsecret = load_secret(path)\ntoken=None',
    'const maxTokens = 4096;\nconst MAX_TOKENS = 100;\nmax_tokens: 512',
    'const tokenType = "Bearer";\nconst tokenizer = "wordpiece";',
    'SELECT id FROM users WHERE password_hash = ? AND token_expires_at > now()',
    'function redactSecret(secret: string): string { return secret.replace(/./g, "*"); }',
    'secret: z.string().min(8),\npassword: z.string(),',
    'git checkout 3f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39',
    'id = "550e8400-e29b-41d4-a716-446655440000"',
    'MAX_TOKENS=4096\nTOKEN_URL=https://auth.example.com/token\nKEY_FILE=/etc/keys/app.pem',
    'Set OPENAI_API_KEY in your environment before running the tests.',
    'https://example.com:8080/path?page=2&sort=desc',
    'The `password=` flag reads the value from stdin.',
    'body { color: #333; } .sk-spinner { width: 40px; }',
    'user@example.com and git@github.com:owner/repo.git',
    '{"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 0}',
  ];
  it.each(ORDINARY)('leaves %j unchanged', (text) => {
    expect(redact(text)).toEqual({ text, kinds: [] });
  });
});

describe('stripInvisible', () => {
  it('removes bidi controls and zero-width spaces but keeps the emoji joiner', () => {
    expect(stripInvisible('a\u202Eb\u200Bc\uFEFFd\u2066e')).toBe('abcde');
    expect(stripInvisible('👩\u200D💻')).toBe('👩\u200D💻');
  });

  it('runs before redaction in sanitizeText, so hidden characters cannot split a secret', () => {
    expect(sanitizeText(`x AKIA\u200BIOSFODNN7EXAMPLE`).text).toBe('x [REDACTED:aws-access-key]');
  });
});

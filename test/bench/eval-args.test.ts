import { describe, expect, it } from 'vitest';
import { evalOptions } from '../../bench/_eval-args.js';

describe('bench/_eval-args (the evaluation benches’ command line)', () => {
  it('reads values and falls back to defaults', () => {
    const options = evalOptions(['--sets', 'lessons', '--splits', 'dev', '--root', '/repo']);
    expect(options.sets).toEqual(['lessons']);
    expect(options.splits).toEqual(['dev']);
    expect(options.root).toBe('/repo');
    expect(options.option('--json', '')).toBe('');
  });

  it('refuses an option whose value is missing or is the next option (it once wrote a file named "--root")', () => {
    const options = evalOptions(['--json', '--root', '/repo']);
    expect(() => options.option('--json', '')).toThrow('--json wants a value (got --root)');
    expect(() => evalOptions(['--sets']).sets).toThrow('--sets wants a value (got nothing)');
  });
});

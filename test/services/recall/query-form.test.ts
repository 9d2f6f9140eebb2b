import { describe, expect, it } from 'vitest';
import { vectorQueryText } from '../../../src/services/recall/query-form.js';

describe('the query form the embedder reads', () => {
  it('takes a leading wh-word and its auxiliary off a question, and its question mark', () => {
    expect(vectorQueryText('why did the tree command print an error about lsd?', 'statement')).toBe('the tree command print an error about lsd');
    expect(vectorQueryText('What breed is Maya’s dog?', 'statement')).toBe('breed is Maya’s dog');
    expect(vectorQueryText('When was Theo in Lisbon?', 'statement')).toBe('Theo in Lisbon');
    expect(vectorQueryText('how long did the build take', 'statement')).toBe('long did the build take');
    expect(vectorQueryText('Who is Ramón?', 'statement')).toBe('Ramón');
  });

  it('takes a leading auxiliary alone off a yes/no question', () => {
    expect(vectorQueryText('did we ever pin the node version', 'statement')).toBe('we ever pin the node version');
    expect(vectorQueryText('Is there a retry helper?', 'statement')).toBe('there a retry helper');
  });

  it('leaves statements, tool queries and words that merely start alike as written', () => {
    for (const query of ['npm run build before npm test', 'Bash: tree -L 2', 'whatever happened to the cache', 'island trip photos', 'dots in the path', 'TaskCreate']) {
      expect(vectorQueryText(query, 'statement')).toBe(query);
    }
    // A contraction is not an auxiliary followed by a word: "didn't" stays whole.
    expect(vectorQueryText("why didn't the first CLAUDE.md get saved", 'statement')).toBe("didn't the first CLAUDE.md get saved");
  });

  it('never leaves the embedder nothing, and reads the query as written when asked to', () => {
    expect(vectorQueryText('why?', 'statement')).toBe('why');
    expect(vectorQueryText('?', 'statement')).toBe('?');
    expect(vectorQueryText('why did the build fail?', 'as-written')).toBe('why did the build fail?');
  });
});

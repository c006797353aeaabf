import { describe, expect, it } from 'vitest';
import { toolLabel } from '../../local/tool-label.ts';

describe("the startup banner's label of a tool", () => {
  it('is the title when the tool has one', () => {
    expect(toolLabel({ title: 'Word count', description: 'Counts words' })).toBe('Word count');
  });

  it('falls back to the first line of the description when the tool has no title', () => {
    expect(toolLabel({ description: 'Counts the words of a text.\nLonger explanation.' })).toBe('Counts the words of a text.');
    expect(toolLabel({ title: ' ', description: 'Counts words' })).toBe('Counts words');
  });

  it('keeps a long description to one row', () => {
    const label = toolLabel({ description: 'x'.repeat(200) });
    expect(label.length).toBeLessThanOrEqual(72);
    expect(label.endsWith('…')).toBe(true);
  });
});

/**
 * What the compiler holds a defineTool handler to (issue 49): `args` typed from inputSchema,
 * the return from outputSchema (structured content, or a CallToolResult whose content blocks
 * are MCP's). Each `@ts-expect-error` below is checked by `npm run typecheck`: were the line
 * to compile, the directive itself would be the error.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isDefinedTool, type ToolContext, type ToolResult } from '../../lambdas/durable/index.ts';

const SUM = {
  name: 'sum_slowly',
  description: 'Adds numbers.',
  inputSchema: z.object({ numbers: z.array(z.number()).min(1), label: z.string().optional() }),
  outputSchema: z.object({ sum: z.number() }),
  invocation: 'both' as const,
};

describe('defineTool types', () => {
  it('types args from inputSchema and the context with the helpers', () => {
    const handler = defineTool(SUM, async (args, context) => {
      expectTypeOf(args).toEqualTypeOf<{ numbers: number[]; label?: string | undefined }>();
      expectTypeOf(context).toExtend<ToolContext>();
      expectTypeOf(context.reportProgress).toBeFunction();
      // @ts-expect-error numbers is an array of numbers: it has no foo
      const _foo = args.numbers.foo;
      return { sum: args.numbers.reduce((a, b) => a + b, 0) };
    });
    expect(isDefinedTool(handler)).toBe(true);
  });

  it('refuses a return that is not the outputSchema, as structured content or a whole result', () => {
    // @ts-expect-error { total } is not { sum }
    defineTool(SUM, async () => ({ total: 1 }));
    // @ts-expect-error sum is a number
    defineTool(SUM, async () => ({ sum: 'x' }));
    // @ts-expect-error a whole result's structuredContent is the outputSchema's too
    defineTool(SUM, async () => ({ content: [{ type: 'text', text: 'one' }], structuredContent: { total: 1 } }));
    const whole = defineTool(SUM, async () => ({ content: [{ type: 'text', text: 'one' }], structuredContent: { sum: 1 } }));
    expect(whole.definition.name).toBe('sum_slowly');
  });

  it('types content blocks as MCP does', () => {
    // @ts-expect-error no content block has type "nope", and a text block's text is a string
    const nope: ToolResult = { content: [{ type: 'nope', text: 1 }] };
    const fine: ToolResult = {
      content: [
        { type: 'text', text: 'ok' },
        { type: 'resource_link', uri: 'https://example.com/r', name: 'r' },
      ],
    };
    expect([nope, fine]).toHaveLength(2);
  });
});

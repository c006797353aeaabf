/** Worker `calculate` (quick_calculation): `{ a, b, op }` → `{ result }`. */
import * as z from 'zod';
import { CALCULATOR_OPS, calculate } from '../../examples/calculator.ts';
import { parseWorkerInput } from '../../examples/worker-input.ts';

const Input = z.object({ a: z.number(), b: z.number(), op: z.enum(CALCULATOR_OPS) });

/** Lambda entry point; throws `DivisionByZero` or `NonFiniteResult`. */
export async function handler(event: unknown): Promise<{ result: number }> {
  const { a, b, op } = parseWorkerInput('calculate', Input, event);
  return { result: calculate(a, b, op) };
}

/** The arithmetic behind quick_calculation. */

/** The quick_calculation operations. */
export type CalculatorOp = 'add' | 'sub' | 'mul' | 'div';

/** Every {@link CalculatorOp}, for input validation. */
export const CALCULATOR_OPS: readonly CalculatorOp[] = ['add', 'sub', 'mul', 'div'];

/** Thrown for `div` with `b = 0`; its name becomes the execution's Error. */
export class DivisionByZeroError extends Error {
  constructor() {
    super('Cannot divide by zero');
    this.name = 'DivisionByZero';
  }
}

/** Thrown when the result overflows: JSON has no Infinity, so it could not be returned. */
export class NonFiniteResultError extends Error {
  constructor(op: CalculatorOp) {
    super(`The result of ${op} is not a finite number`);
    this.name = 'NonFiniteResult';
  }
}

/** `a op b` as a finite number. */
export function calculate(a: number, b: number, op: CalculatorOp): number {
  let result: number;
  switch (op) {
    case 'add':
      result = a + b;
      break;
    case 'sub':
      result = a - b;
      break;
    case 'mul':
      result = a * b;
      break;
    case 'div':
      if (b === 0) throw new DivisionByZeroError();
      result = a / b;
      break;
  }
  if (!Number.isFinite(result)) throw new NonFiniteResultError(op);
  return result;
}

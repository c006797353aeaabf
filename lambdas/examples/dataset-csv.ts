/** The synthetic dataset as CSV: an `index,value` header, then one line per row. */
import { syntheticDataset } from './synthetic-dataset.ts';

/** Rows `0 .. rows - 1` of the dataset for `seed`, as CSV text. */
export function datasetCsv(rows: number, seed: number): string {
  const dataset = syntheticDataset(seed);
  const lines = ['index,value'];
  for (let index = 0; index < rows; index++) lines.push(`${index},${dataset.valueAt(index)}`);
  return `${lines.join('\n')}\n`;
}

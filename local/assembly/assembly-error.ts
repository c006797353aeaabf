/** A cloud assembly that cannot run locally: names the file and, when known, the resource. */
export class AssemblyError extends Error {
  constructor(
    readonly file: string,
    readonly logicalId: string | undefined,
    problem: string,
  ) {
    super(`${file}${logicalId ? `: resource ${logicalId}` : ''}: ${problem}`);
    this.name = 'AssemblyError';
  }
}

/**
 * Runs seeded fuzz cases against the edge and sums up what came back. Cases are generated
 * from the seed alone, so a failure is replayed with the same seed and case count; each
 * failing case is shrunk to a minimal body before it is reported.
 */
import { mutateDraft } from './case-mutations.ts';
import { problemKind, shrinkCase } from './case-shrinker.ts';
import { finalizeDraft, type FuzzCase, type GenerationContext } from './fuzz-case.ts';
import { createFuzzTarget, OWNER, STRANGER, type FuzzTarget } from './fuzz-target.ts';
import { judge, type Verdict } from './edge-oracle.ts';
import { knownDefectOf } from './known-defects.ts';
import { validDraft } from './request-templates.ts';
import { SeededRandom } from './seeded-random.ts';

export interface FuzzOptions {
  seed: number;
  cases: number;
  /** A fresh, re-seeded target every this many cases, so seeded records are not all used up. @default 500 */
  reseedEvery?: number;
  /** Shrink failing cases before reporting them. @default true */
  shrink?: boolean;
  /** Stop collecting failures past this many (the run goes on counting). @default 20 */
  maxFailures?: number;
}

export interface FuzzFailure {
  index: number;
  fuzzCase: FuzzCase;
  problems: string[];
  /** The smallest case found that fails the same way. */
  minimal?: FuzzCase;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  byStatus: Record<string, number>;
  byOutcome: Record<string, number>;
  documented5xx: number;
  /** Cases that carried argument markers, that created records, that wrote log lines. */
  withMarkers: number;
  creatingRecords: number;
  withLogs: number;
  failures: FuzzFailure[];
  /** All failing cases, also those past `maxFailures`. */
  failureCount: number;
  /** Problems that are instances of known defects, by defect (not failures). */
  known: Record<string, number>;
  elapsedMs: number;
}

/** Principals the cases run as: mostly the one with seeded records, sometimes odd ones. */
const PRINCIPALS = [OWNER, OWNER, OWNER, OWNER, OWNER, OWNER, 'bob', STRANGER, '', 'ünï-çødé ✓', 'x'.repeat(10_000), 'arn:aws:iam::123456789012:role/R#1'];

/** The case with this index, from the seed alone. */
export function generateCase(seed: number, index: number, target: Pick<FuzzTarget, 'known'>): FuzzCase {
  // One stream per case: a case is the same whatever the ones before it did.
  const rng = new SeededRandom((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const ctx: GenerationContext = { rng, known: target.known, marker: () => `mk${rng.hex(12)}` };
  const draft = validDraft(ctx);
  if (rng.chance(0.15)) draft.principal = rng.pick(PRINCIPALS);
  return finalizeDraft(mutateDraft(draft, ctx));
}

/** A principal's record tokens as the last case left them. */
interface Listing {
  principal: string;
  tokens: Set<string>;
}

/**
 * Sends one case and judges its answer. `last` is the listing the previous case ended with:
 * nothing writes between two requests (work finishes before each answer), so for the same
 * principal it is this case's "before" and saves a listing.
 */
export async function runCase(target: FuzzTarget, fuzzCase: FuzzCase, last?: Listing): Promise<{ verdict: Verdict; listing: Listing }> {
  const before = last?.principal === fuzzCase.principal ? last.tokens : await target.tokensOf(fuzzCase.principal);
  const answer = await target.send(fuzzCase.principal, fuzzCase.headers, fuzzCase.body);
  const after = await target.tokensOf(fuzzCase.principal);
  return { verdict: judge({ fuzzCase, answer, before, after }), listing: { principal: fuzzCase.principal, tokens: after } };
}

export async function runEdgeFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const reseedEvery = options.reseedEvery ?? 500;
  const maxFailures = options.maxFailures ?? 20;
  const report: FuzzReport = {
    seed: options.seed,
    cases: 0,
    byStatus: {},
    byOutcome: {},
    documented5xx: 0,
    withMarkers: 0,
    creatingRecords: 0,
    withLogs: 0,
    failures: [],
    failureCount: 0,
    known: {},
    elapsedMs: 0,
  };
  let target: FuzzTarget | undefined;
  let last: Listing | undefined;
  for (let index = 0; index < options.cases; index++) {
    if (index % reseedEvery === 0 || !target) {
      target = await createFuzzTarget();
      last = undefined;
    }
    const fuzzCase = generateCase(options.seed, index, target);
    const run = await runCase(target, fuzzCase, last);
    const { verdict } = run;
    last = run.listing;
    report.cases++;
    count(report.byStatus, String(verdict.status));
    count(report.byOutcome, verdict.outcome);
    if (verdict.documented5xx) report.documented5xx++;
    if (fuzzCase.markers.length > 0) report.withMarkers++;
    if (verdict.createdRecords > 0) report.creatingRecords++;
    if (verdict.logLines > 0) report.withLogs++;
    const problems = verdict.problems.filter((problem) => {
      const defect = knownDefectOf(problem, fuzzCase);
      if (defect) count(report.known, defect.name);
      return defect === undefined;
    });
    if (problems.length === 0) continue;
    report.failureCount++;
    if (report.failures.length >= maxFailures) continue;
    const failure: FuzzFailure = { index, fuzzCase, problems };
    if (options.shrink !== false) {
      const kinds = new Set(problems.map(problemKind));
      const shrinkTarget = target;
      failure.minimal = await shrinkCase(fuzzCase, async (candidate) =>
        (await runCase(shrinkTarget, candidate)).verdict.problems.some((p) => kinds.has(problemKind(p))),
      );
      last = undefined;
    }
    report.failures.push(failure);
  }
  report.elapsedMs = Math.round(performance.now() - started);
  return report;
}

/** The counts, then each failing case with its minimal form. */
export function formatFuzzReport(report: FuzzReport): string {
  const sorted = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key}: ${n}`)
      .join(', ');
  const lines = [
    `edge fuzz: seed ${report.seed}, ${report.cases} cases in ${report.elapsedMs} ms, ${report.failureCount} failing`,
    `  by HTTP status: ${sorted(report.byStatus)}`,
    `  by JSON-RPC outcome: ${sorted(report.byOutcome)}`,
    `  documented 5xx (-32603): ${report.documented5xx}`,
    `  cases with argument markers: ${report.withMarkers}, creating records: ${report.creatingRecords}, writing log lines: ${report.withLogs}`,
    ...Object.entries(report.known).map(([name, n]) => `  known defect (pinned by it.fails), ${n} problem(s): ${name}`),
  ];
  for (const failure of report.failures) {
    const shown = failure.minimal ?? failure.fuzzCase;
    lines.push(
      `  case ${failure.index} [${failure.fuzzCase.label}] as ${JSON.stringify(shown.principal.slice(0, 40))}`,
      ...failure.problems.map((p) => `    - ${p}`),
      `    headers: ${JSON.stringify(shown.headers)}`,
      `    body (${failure.minimal ? 'minimal' : 'as sent'}, ${shown.body.length} chars): ${shown.body.length > 600 ? `${shown.body.slice(0, 600)}…` : shown.body}`,
    );
  }
  return lines.join('\n');
}

function count(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

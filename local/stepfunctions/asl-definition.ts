/**
 * What the local runtime checks in a definition before running it, on top of asl-validator's
 * schema check (made once, when the tool folder loads): the checks Step Functions makes when
 * the machine is created that the interpreter relies on. Transitions that name a state of
 * their own graph; each state's query language (its own `QueryLanguage`, else the machine's,
 * also inside Map and Parallel); fields that belong to the other language; JSONata that does
 * not parse; reserved variable names; and no Distributed Map, which does not run locally.
 */
import { checkJsonataTemplate, hasJsonata } from './asl-jsonata.ts';

export type QueryLanguage = 'JSONPath' | 'JSONata';

type State = Record<string, unknown>;

/** The States and StartAt of a machine, a Parallel branch or a Map processor. */
export interface StateGraph {
  StartAt: string;
  States: Record<string, State>;
}
type Visit = (name: string, state: State, path: string) => void;

const JSONPATH_ONLY = [
  'InputPath',
  'Parameters',
  'ResultSelector',
  'ResultPath',
  'OutputPath',
  'Result',
  'ItemsPath',
  'MaxConcurrencyPath',
  'SecondsPath',
  'TimestampPath',
  'ErrorPath',
  'CausePath',
  'TimeoutSecondsPath',
  'HeartbeatSecondsPath',
];
const JSONATA_ONLY = ['Arguments', 'Output', 'Items'];
/** Fields whose strings may be `{% … %}` in a JSONata state. */
const JSONATA_FIELDS = [
  'Arguments',
  'Output',
  'Assign',
  'Items',
  'ItemSelector',
  'MaxConcurrency',
  'TimeoutSeconds',
  'HeartbeatSeconds',
  'Seconds',
  'Timestamp',
  'Error',
  'Cause',
];
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,79}$/;

/** The language a state is evaluated in. */
export function stateLanguage(state: State, machineLanguage: QueryLanguage): QueryLanguage {
  const own = state.QueryLanguage;
  if (own === undefined) return machineLanguage;
  return own === 'JSONPath' ? 'JSONPath' : 'JSONata';
}

/** The machine's own language (JSONPath unless it says JSONata). */
export function machineLanguage(definition: unknown): QueryLanguage {
  return (definition as State).QueryLanguage === 'JSONata' ? 'JSONata' : 'JSONPath';
}

/** Throws naming the state and field of the first problem. */
export function checkDefinition(definition: unknown): void {
  checkTransitions(definition, '');
  const top = machineLanguage(definition);
  walkDefinition(definition, (name, state, path) => {
    const where = `state "${name}" (${path})`;
    const language = stateLanguage(state, top);
    if (top === 'JSONata' && state.QueryLanguage === 'JSONPath') {
      throw new Error(`${where}: 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine`);
    }
    const foreign = language === 'JSONata' ? JSONPATH_ONLY : JSONATA_ONLY;
    for (const field of foreign) {
      if (field in state) throw new Error(`${where}: the QueryLanguage is ${language}, but field '${field}' belongs to the other query language`);
    }
    for (const field of ['ItemReader', 'ItemBatcher', 'ResultWriter']) {
      if (field in state) throw new Error(`${where}: ${field} (a Distributed Map) does not run locally; use an inline Map`);
    }
    const choices = (state.Choices as State[] | undefined) ?? [];
    if (language === 'JSONata') {
      for (const field of JSONATA_FIELDS) if (field in state) checkJsonataTemplate(state[field], `${where} ${field}`);
      choices.forEach((rule, index) => {
        if (!('Condition' in rule)) throw new Error(`${where}: Choices[${index}] needs a Condition in a JSONata state`);
        for (const field of ['Condition', 'Assign', 'Output']) checkJsonataTemplate(rule[field], `${where} Choices[${index}]/${field}`);
      });
      ((state.Catch as State[] | undefined) ?? []).forEach((catcher, index) => {
        if ('ResultPath' in catcher) throw new Error(`${where}: Catch[${index}] uses ResultPath, which a JSONata state does not have; use Output`);
        for (const field of ['Assign', 'Output']) checkJsonataTemplate(catcher[field], `${where} Catch[${index}]/${field}`);
      });
    } else {
      for (const field of ['Assign', 'ItemSelector', 'Parameters']) {
        if (hasJsonata(state[field])) throw new Error(`${where}: ${field} holds a {% %} expression, but the state's QueryLanguage is JSONPath`);
      }
      choices.forEach((rule, index) => {
        if ('Condition' in rule) throw new Error(`${where}: Choices[${index}] uses Condition, which needs QueryLanguage JSONata`);
      });
    }
    for (const assign of assignments(state)) {
      for (const key of Object.keys(assign)) {
        const variable = language === 'JSONPath' && key.endsWith('.$') ? key.slice(0, -2) : key;
        if (variable === 'states') throw new Error(`${where}: "states" is a reserved variable name and cannot be assigned`);
        if (!VARIABLE_NAME.test(variable)) throw new Error(`${where}: "${variable}" is not a valid variable name`);
      }
    }
  });
}

/**
 * StartAt and every Next, Default and Choice or Catch Next name a state of their own graph (a
 * branch or a Map processor cannot leave it), as CreateStateMachine requires.
 */
function checkTransitions(graph: unknown, path: string): void {
  const { StartAt: start, States: states } = (graph ?? {}) as { StartAt?: unknown; States?: Record<string, State> };
  if (!states || typeof states !== 'object') return;
  const target = (name: unknown, at: string) => {
    if (typeof name !== 'string' || !Object.hasOwn(states, name)) throw new Error(`Missing 'Next' target: ${String(name)} at ${at}`);
  };
  target(start, `${path}/StartAt`);
  for (const [name, state] of Object.entries(states)) {
    const at = `${path}/States/${name}`;
    if (state.Next !== undefined) target(state.Next, `${at}/Next`);
    if (state.Default !== undefined) target(state.Default, `${at}/Default`);
    for (const field of ['Choices', 'Catch'] as const) {
      const entries = Array.isArray(state[field]) ? (state[field] as State[]) : [];
      for (const [index, entry] of entries.entries()) target(entry.Next, `${at}/${field}[${index}]/Next`);
    }
    const branches = Array.isArray(state.Branches) ? state.Branches : [];
    for (const [index, branch] of branches.entries()) checkTransitions(branch, `${at}/Branches[${index}]`);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) checkTransitions(processor, `${at}/${state.ItemProcessor ? 'ItemProcessor' : 'Iterator'}`);
  }
}

/** Every Assign object of a state: its own, its Choice rules' and its Catch clauses'. */
function assignments(state: State): Record<string, unknown>[] {
  const nested = [state.Choices, state.Catch].flatMap((list) => (Array.isArray(list) ? (list as State[]).map((entry) => entry.Assign) : []));
  return [state.Assign, ...nested].filter((assign): assign is Record<string, unknown> => typeof assign === 'object' && assign !== null);
}

/** Visits every state, inside Parallel branches and Map processors too. */
export function walkDefinition(definition: unknown, visit: Visit, path = ''): void {
  const states = (definition as { States?: Record<string, State> } | undefined)?.States;
  if (!states || typeof states !== 'object') return;
  for (const [name, state] of Object.entries(states)) {
    const at = `${path}/States/${name}`;
    visit(name, state, at);
    for (const [index, branch] of ((state.Branches as unknown[] | undefined) ?? []).entries()) walkDefinition(branch, visit, `${at}/Branches[${index}]`);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) walkDefinition(processor, visit, `${at}/${state.ItemProcessor ? 'ItemProcessor' : 'Iterator'}`);
  }
}

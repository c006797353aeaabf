/**
 * The operation card's script: connects to the host, learns which operation it shows (from
 * the tool result the host hands it, or, while the host's call still waits, from that
 * call's JSON-RPC id), then polls the operation at its own interval through the host until
 * it ends, the host hides the card, or the host tears it down.
 */
import type { McpUiHostCapabilities, McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import { CARD_ANSWER, CARD_CANCEL, CARD_STATUS } from '../card-tool-schemas.ts';
import type { CardSnapshot } from '../card-tools.ts';
import { h, replaceChildren } from './dom.ts';
import { HostBridge } from './host-bridge.ts';
import { applyHostContext } from './host-style.ts';
import { operationRefOf, type ToolResult } from './operation-ref.ts';
import { resultView } from './result-view.ts';
import { schemaForm, type FormAnswer } from './schema-form.ts';

/** How often the card looks for the operation by request id before it knows its id, seconds. */
const LOOKUP_SECONDS = 1;
/** The wait after a poll the host failed to pass on, seconds. */
const RETRY_SECONDS = 5;
const TERMINAL = ['completed', 'failed', 'canceled'];
const STATUS_WORDS: Record<string, string> = {
  starting: 'Starting',
  working: 'Working',
  input_required: 'Waiting for your answer',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Cancelled',
};

interface State {
  tool?: string;
  title?: string;
  args?: Record<string, unknown>;
  requestId?: string | number;
  operationId?: string;
  snapshot?: CardSnapshot;
  /** The tool's own answer, when the host's call ended with it. */
  final?: ToolResult;
  note?: string;
  startedAt: number;
  snapshotAt: number;
  locale?: string;
  hostCapabilities: McpUiHostCapabilities;
}

const state: State = { startedAt: performance.now(), snapshotAt: 0, hostCapabilities: {} };
let pollTimer: ReturnType<typeof setTimeout> | undefined;
let ticker: ReturnType<typeof setInterval> | undefined;
let polling = false;
let stopped = false;
let shownQuestion: string | undefined;
/** The result on show, as JSON: a poll's equal result is not drawn (nor its preview read) again. */
let shownResult: string | undefined;

// The card's regions: built once, updated in place, so focus and typed answers survive a poll.
const heading = h('h1', { id: 'card-title' }, 'Operation');
const argsLine = h('p', { class: 'args' });
const statusText = h('span', { class: 'status-text' });
const statusLine = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' }, statusText);
const elapsed = h('p', { class: 'elapsed' });
const progressBar = h('progress', { id: 'progress', 'aria-describedby': 'progress-text', 'aria-label': 'Progress' });
const progressText = h('span', { id: 'progress-text' });
const progressRow = h('div', { class: 'progress', hidden: true }, progressBar, progressText);
const message = h('p', { class: 'message', hidden: true });
const question = h('div', { class: 'question-slot' });
const cancelButton = h('button', { type: 'button', class: 'danger', disabled: true, onclick: () => void cancel() }, 'Cancel');
const actions = h('div', { class: 'actions' }, cancelButton);
const noteLine = h('p', { class: 'note', role: 'alert', hidden: true });
const result = h('div', { class: 'result-slot' });
const card = h(
  'main',
  { class: 'card', 'aria-labelledby': 'card-title', 'aria-busy': 'true' },
  h('header', {}, heading, argsLine),
  statusLine,
  elapsed,
  progressRow,
  message,
  question,
  actions,
  noteLine,
  result,
);

const bridge = new HostBridge({
  toolInput: ({ arguments: args }) => {
    state.args = args;
    render();
  },
  toolResult: (toolResult) => onToolResult(toolResult),
  toolCancelled: ({ reason }) => {
    state.note = `The host cancelled the call${reason ? `: ${reason}` : ''}.`;
    if (state.operationId) void poll();
    else stop();
    render();
  },
  hostContextChanged: (context) => onHostContext(context),
  teardown: () => stop(),
});

function onHostContext(context: McpUiHostContext): void {
  applyHostContext(context);
  if (context.locale) state.locale = context.locale;
  const info = context.toolInfo;
  if (info) {
    state.tool = info.tool.name;
    state.title = info.tool.title ?? info.tool.annotations?.title;
    if (info.id !== undefined) state.requestId = info.id;
  }
  render();
}

function onToolResult(toolResult: ToolResult): void {
  const structured = toolResult.structuredContent;
  // Some hosts relay the card's own polls as tool results: a snapshot is applied, nothing more.
  if (structured && typeof structured.elapsedSeconds === 'number' && typeof structured.tool === 'string') {
    if (structured.operationId === state.operationId) applySnapshot(structured as unknown as CardSnapshot);
    return;
  }
  const ref = operationRefOf(toolResult);
  if (ref.operationId) state.operationId ??= ref.operationId;
  if (ref.final) {
    state.final = toolResult;
    stop();
  } else {
    void poll();
  }
  render();
}

async function poll(): Promise<void> {
  if (polling || stopped) return;
  const args = state.operationId
    ? { operationId: state.operationId }
    : state.requestId !== undefined
      ? { requestId: state.requestId, ...(state.tool ? { tool: state.tool } : {}) }
      : undefined;
  if (!args) return;
  polling = true;
  let next = LOOKUP_SECONDS;
  try {
    const answer = await bridge.callServerTool(CARD_STATUS, args);
    if (answer.isError) {
      // Not started yet (looked up by request id), or gone: keep looking only while the call waits.
      if (state.operationId) {
        state.note = firstText(answer) ?? 'The operation is no longer available.';
        stop();
      }
    } else {
      applySnapshot(answer.structuredContent as unknown as CardSnapshot);
      next = state.snapshot?.pollAfterSeconds ?? LOOKUP_SECONDS;
    }
  } catch {
    next = RETRY_SECONDS;
  } finally {
    polling = false;
  }
  render();
  schedule(next);
}

function applySnapshot(snapshot: CardSnapshot): void {
  state.snapshot = snapshot;
  state.snapshotAt = performance.now();
  state.operationId ??= snapshot.operationId;
  if (TERMINAL.includes(snapshot.status)) stop();
  render();
}

function schedule(seconds: number): void {
  clearTimeout(pollTimer);
  if (stopped || document.hidden) return;
  pollTimer = setTimeout(() => void poll(), Math.max(0.5, seconds) * 1000);
}

/** Stops polling and the clock: the operation ended, or the host is done with the card. */
function stop(): void {
  stopped = true;
  clearTimeout(pollTimer);
  clearInterval(ticker);
}

async function cancel(): Promise<void> {
  if (!state.operationId) return;
  cancelButton.disabled = true;
  cancelButton.textContent = 'Cancelling…';
  try {
    const answer = await bridge.callServerTool(CARD_CANCEL, { operationId: state.operationId });
    if (answer.isError) state.note = firstText(answer) ?? 'The operation could not be cancelled.';
    else applySnapshot(answer.structuredContent as unknown as CardSnapshot);
  } catch {
    state.note = 'The host did not pass the cancel on. Try again.';
  }
  cancelButton.textContent = 'Cancel';
  render();
}

async function answerQuestion(key: string, answer: FormAnswer): Promise<void> {
  if (!state.operationId) return;
  try {
    const response = await bridge.callServerTool(CARD_ANSWER, { operationId: state.operationId, key, ...answer });
    if (response.isError) state.note = firstText(response) ?? 'The answer was not taken.';
    else {
      const snapshot = response.structuredContent as unknown as CardSnapshot;
      if (snapshot.answer === 'closed') state.note = 'The question had closed before your answer arrived.';
      applySnapshot(snapshot);
    }
  } catch {
    state.note = 'The host did not pass your answer on. Try again.';
    shownQuestion = undefined; // Shows the form again.
  }
  render();
  schedule(0);
}

function render(): void {
  const snapshot = state.snapshot;
  // The operation's own end wins over what the host's call answered (a cancelled run's call ends in an error).
  const ended = snapshot && TERMINAL.includes(snapshot.status) ? snapshot : undefined;
  const status = ended ? ended.status : state.final ? (state.final.isError ? 'failed' : 'completed') : (snapshot?.status ?? 'starting');
  heading.textContent = state.title ?? snapshot?.title ?? state.tool ?? snapshot?.tool ?? 'Operation';
  argsLine.textContent = state.args ? shortArguments(state.args) : '';
  argsLine.hidden = argsLine.textContent === '';
  statusText.textContent = STATUS_WORDS[status] ?? status;
  card.dataset.status = status;
  if (state.operationId) card.dataset.operationId = state.operationId;
  card.setAttribute('aria-busy', String(!TERMINAL.includes(status)));
  renderElapsed();
  renderProgress(snapshot, status);
  const line = snapshot?.progress?.message ?? snapshot?.log?.text ?? snapshot?.statusMessage;
  message.textContent = line ?? '';
  // While a question is open the form says what the run waits for; a cancelled run says why it stopped.
  message.hidden = !line || (TERMINAL.includes(status) && status !== 'canceled') || (status === 'input_required' && snapshot?.question !== undefined);
  renderQuestion(snapshot, status);
  cancelButton.disabled = !state.operationId || TERMINAL.includes(status) || cancelButton.textContent !== 'Cancel';
  actions.hidden = TERMINAL.includes(status);
  noteLine.textContent = state.note ?? '';
  noteLine.hidden = !state.note;
  renderResult(snapshot, ended);
}

function renderElapsed(): void {
  const snapshot = state.snapshot;
  const running = !state.final && !(snapshot && TERMINAL.includes(snapshot.status));
  const seconds = snapshot
    ? snapshot.elapsedSeconds + (running ? (performance.now() - state.snapshotAt) / 1000 : 0)
    : (performance.now() - state.startedAt) / 1000;
  elapsed.textContent = `${running ? 'Running for' : 'Took'} ${duration(seconds)}`;
}

function renderProgress(snapshot: CardSnapshot | undefined, status: string): void {
  const progress = snapshot?.progress;
  const running = !TERMINAL.includes(status);
  progressRow.hidden = !progress && !running;
  if (status === 'completed' && progress?.total !== undefined) {
    progressBar.max = progress.total;
    progressBar.value = progress.total;
  }
  if (progress?.total !== undefined && running) {
    progressBar.max = progress.total;
    progressBar.value = Math.min(progress.progress, progress.total);
    const percent = Math.round((progress.progress / progress.total) * 100);
    progressText.textContent = `${number(progress.progress)} of ${number(progress.total)} (${percent}%)`;
  } else if (running) {
    // Indeterminate: no total to measure against.
    progressBar.removeAttribute('value');
    progressText.textContent = progress ? `${number(progress.progress)} done` : 'No progress reported yet';
  } else {
    progressText.textContent = progress?.total !== undefined ? `${number(progress.progress)} of ${number(progress.total)}` : '';
  }
}

function renderQuestion(snapshot: CardSnapshot | undefined, status: string): void {
  const asked = status === 'input_required' ? snapshot?.question : undefined;
  if (!asked) {
    if (shownQuestion !== undefined) replaceChildren(question);
    shownQuestion = undefined;
    return;
  }
  if (asked.key === shownQuestion) return;
  shownQuestion = asked.key;
  replaceChildren(
    question,
    schemaForm(asked.message, asked.requestedSchema, (answer) => void answerQuestion(asked.key, answer)),
  );
}

function renderResult(snapshot: CardSnapshot | undefined, ended: CardSnapshot | undefined): void {
  const fromSnapshot = snapshot?.error ? { isError: true, content: [{ type: 'text', text: snapshot.error.message }] } : snapshot?.result;
  const shown = ended ? fromSnapshot : (state.final ?? fromSnapshot);
  const key = shown === undefined ? undefined : JSON.stringify(shown);
  if (key === shownResult) return;
  shownResult = key;
  if (!shown) replaceChildren(result);
  else
    replaceChildren(result, resultView(shown as ToolResult, { bridge, locale: state.locale, canDownload: state.hostCapabilities.downloadFile !== undefined }));
}

/** The arguments in short: a few `name: value` pairs, long values cut. */
function shortArguments(args: Record<string, unknown>): string {
  const entries = Object.entries(args);
  const shown = entries.slice(0, 4).map(([name, value]) => `${name}: ${shortValue(value)}`);
  return entries.length > 4 ? `${shown.join(' · ')} · …` : shown.join(' · ');
}

function shortValue(value: unknown): string {
  if (typeof value === 'number') return number(value);
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? '' : 's'}`;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function number(value: number): string {
  return value.toLocaleString(state.locale, { maximumFractionDigits: 2 });
}

function duration(seconds: number): string {
  const whole = Math.floor(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  return minutes < 60 ? `${minutes} min ${whole % 60} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function firstText(answer: ToolResult): string | undefined {
  const block = answer.content?.find(
    (b): b is { type: 'text'; text: string } => typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'text',
  );
  return block?.text;
}

/** Tells the host the card's size, as the SDK's `App` does with `autoResize`. */
function reportSize(): void {
  let queued = false;
  let last = '';
  const measure = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const root = document.documentElement;
      const height = root.style.height;
      root.style.height = 'max-content';
      const size = { width: Math.ceil(window.innerWidth), height: Math.ceil(root.getBoundingClientRect().height) };
      root.style.height = height;
      const key = `${size.width}x${size.height}`;
      if (key !== last) {
        last = key;
        bridge.sizeChanged(size);
      }
    });
  };
  const observer = new ResizeObserver(measure);
  observer.observe(document.documentElement);
  observer.observe(document.body);
}

async function start(): Promise<void> {
  document.body.append(card);
  render();
  const initialized = await bridge.connect({ name: 'async-mcp operation card', version: '1.0.0' }, { availableDisplayModes: ['inline'] });
  state.hostCapabilities = initialized.hostCapabilities ?? {};
  onHostContext(initialized.hostContext ?? {});
  reportSize();
  ticker = setInterval(renderElapsed, 1000);
  // Hidden: no polls. Shown again: one at once.
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) clearTimeout(pollTimer);
    else if (!stopped) void poll();
  });
  // While the host's call still waits, its request id finds the operation.
  if (!state.operationId && !state.final) void poll();
}

void start();

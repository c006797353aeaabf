/** What the startup banner shows beside a tool's name. */

/** Longest label, so that one row stays one line in a terminal. */
const MAX_LABEL = 72;

/** The tool's title, else the first line of its description (a title is optional), shortened to one row. */
export function toolLabel(tool: { title?: string | undefined; description?: string | undefined }): string {
  const text = (tool.title?.trim() || tool.description?.trim().split('\n')[0]?.trim()) ?? '';
  return text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text;
}

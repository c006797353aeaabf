/**
 * Opens a URL in the user's browser, as `gh auth login` does: the command in `$BROWSER`
 * (`%s` stands for the URL; without it the URL is appended), else the platform's opener.
 * Never fails: the URL is printed anyway, and a machine without a browser just shows it.
 */
import { spawn } from 'node:child_process';

/** The command (program and arguments) that opens `url`; `undefined` when there is none to try. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] | undefined {
  const custom = env.BROWSER?.trim();
  if (custom) {
    const words = custom.split(/\s+/);
    return words.some((word) => word.includes('%s')) ? words.map((word) => word.replaceAll('%s', url)) : [...words, url];
  }
  if (platform === 'darwin') return ['open', url];
  if (platform === 'win32') return ['cmd', '/c', 'start', '""', url];
  // A Linux or BSD desktop; on a server without one xdg-open fails and the printed URL remains.
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open', url];
  return undefined;
}

/** Starts the browser and resolves whether a command was started (not whether a page opened). */
export async function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const command = browserCommand(url, env);
  if (!command) return false;
  const [program, ...args] = command as [string, ...string[]];
  return new Promise((resolve) => {
    try {
      const child = spawn(program, args, { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}

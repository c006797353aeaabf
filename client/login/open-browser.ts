/**
 * Opens a URL in the user's browser, as `gh auth login` does: the command in `$BROWSER`
 * (`%s` stands for the URL; without it the URL is appended), else the platform's opener.
 * Never fails: the URL is printed anyway, and a machine without a browser just shows it.
 *
 * Only web pages are opened (`openableUrl`): the authorization URL comes from a server the
 * user merely named, and an OS opener also runs `file:`, `smb:` and custom-scheme handlers
 * (the pattern of mcp-remote's CVE-2025-6514). No command goes through a shell.
 */
import { spawn } from 'node:child_process';
import { isIPv4 } from 'node:net';

/** Whether `url` may be handed to a browser: `https:`, or `http:` to a loopback host (RFC 8252 §8.3). */
export function openableUrl(url: URL): boolean {
  if (url.protocol === 'https:') return true;
  if (url.protocol !== 'http:') return false;
  const host = url.hostname;
  return host === 'localhost' || host === '[::1]' || (isIPv4(host) && host.startsWith('127.'));
}

/** The command (program and arguments) that opens `url`; `undefined` when there is none to try. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] | undefined {
  const custom = env.BROWSER?.trim();
  if (custom) {
    const words = custom.split(/\s+/);
    return words.some((word) => word.includes('%s')) ? words.map((word) => word.replaceAll('%s', url)) : [...words, url];
  }
  if (platform === 'darwin') return ['open', url];
  // Not `cmd /c start`: cmd splits its line at every `&`, and every authorization URL has some.
  // rundll32 takes the URL as one argument and hands it to the default browser unparsed.
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler', url];
  // A Linux or BSD desktop; on a server without one xdg-open fails and the printed URL remains.
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open', url];
  return undefined;
}

/** Starts the browser and resolves whether a command was started (not whether a page opened); never for a URL `openableUrl` refuses. */
export async function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (!URL.canParse(url) || !openableUrl(new URL(url))) return false;
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

/** `login` and `logout` on the command line, parsed without running anything. */
import { describe, expect, it } from 'vitest';
import { parseCli, USAGE, UsageError } from '../../client/cli-args.ts';

describe('async-mcp login / logout arguments', () => {
  it('login takes a URL, opens a browser unless --no-browser, and waits as long as --timeout says', () => {
    expect(parseCli(['login', 'https://h.example/mcp']).command).toEqual({ name: 'login', url: 'https://h.example/mcp', openBrowser: true });
    expect(parseCli(['login', 'https://h.example/mcp', '--no-browser', '--timeout', '2m']).command).toEqual({
      name: 'login',
      url: 'https://h.example/mcp',
      openBrowser: false,
      timeoutMs: 120_000,
    });
  });

  it('logout takes a URL', () => {
    expect(parseCli(['logout', 'http://127.0.0.1:3000/mcp', '--json'])).toMatchObject({
      json: true,
      command: { name: 'logout', url: 'http://127.0.0.1:3000/mcp' },
    });
  });

  it.each([
    [['login']],
    [['login', 'not a url']],
    [['logout', 'http://h/mcp', 'extra']],
    [['logout', 'http://h/mcp', '--no-browser']],
    [['call', 'http://h/mcp', 't', '--no-browser']],
    [['login', 'http://h/mcp', '--token', 't']],
    [['login', 'http://h/mcp', '--sigv4']],
    [['logout', 'http://h/mcp', '--timeout', '1s']],
  ])('refuses %j as a usage error', (argv) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
  });

  it('the usage text documents both commands and where logins are kept', () => {
    expect(USAGE).toContain('async-mcp login <url> [--no-browser]');
    expect(USAGE).toContain('async-mcp logout <url>');
    expect(USAGE).toMatch(/Handles and logins are kept in \$ASYNC_MCP_STATE_DIR/);
  });
});

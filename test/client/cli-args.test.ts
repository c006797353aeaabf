/** The CLI's argument contract, parsed without running anything. */
import { describe, expect, it } from 'vitest';
import { parseCli, parseDuration, UsageError } from '../../client/cli-args.ts';

describe('async-mcp arguments', () => {
  it('call takes --args JSON and -a key=value, values as JSON when they parse', () => {
    const { command } = parseCli([
      'call',
      'http://h/mcp',
      't',
      '--args',
      '{"x":1}',
      '-a',
      'n=5',
      '-a',
      'name=Ada',
      '-a',
      'flag=true',
      '--dialect',
      'sep-1391',
      '--timeout',
      '90s',
    ]);
    expect(command).toEqual({
      name: 'call',
      url: 'http://h/mcp',
      tool: 't',
      args: { x: 1, n: 5, name: 'Ada', flag: true },
      detach: false,
      dialect: 'sep-1391',
      timeoutMs: 90_000,
      answers: [],
    });
  });

  it('durations: ms, s, m, h, and bare seconds', () => {
    expect([parseDuration('500ms'), parseDuration('1s'), parseDuration('1.5m'), parseDuration('2h'), parseDuration('30')]).toEqual([
      500, 1000, 90_000, 7_200_000, 30_000,
    ]);
  });

  it.each([
    [['call', 'http://h/mcp']],
    [['call', 'ftp://h', 't']],
    [['call', 'http://h/mcp', 't', '--args', '[1]']],
    [['call', 'http://h/mcp', 't', '--detach', '--timeout', '1s']],
    [['join', 'id', '--detach']],
    [['status', 'id', '--timeout', '1s']],
    [['list', 'extra']],
    [['join', 'id', '--bogus']],
  ])('refuses %j as a usage error', (argv) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
  });

  it('--json, --token, --sigv4 and --region apply to every command', () => {
    expect(parseCli(['status', 'abc', '--json', '--token', 't', '--sigv4', '--region', 'eu-west-1'])).toEqual({
      command: { name: 'status', id: 'abc' },
      json: true,
      token: 't',
      sigv4: true,
      region: 'eu-west-1',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { ShellKillRequest, ShellRunRequest, ShellRunResult } from './shell.js';
import { ShellStreamClientMessage, ShellStreamServerMessage } from './shell-stream.js';

const exit = {
  run_id: 'r1',
  pid: 4242,
  exit_code: 0,
  signal: null,
  timed_out: false,
  killed: false,
  duration_ms: 15,
};

describe('ShellRunRequest', () => {
  it('takes argv or a shell command, with defaults', () => {
    expect(ShellRunRequest.parse({ argv: ['echo', 'hi'] })).toEqual({
      argv: ['echo', 'hi'],
      timeout_ms: 60_000,
      output_encoding: 'utf8',
    });
    const parsed = ShellRunRequest.parse({
      command: 'ls | wc -l',
      cwd: '/tmp',
      env: { LANG: 'C.UTF-8' },
      stdin: 'x',
      run_id: 'job-1',
    });
    expect(parsed).toMatchObject({ command: 'ls | wc -l', cwd: '/tmp' });
  });

  it('requires exactly one of argv and command', () => {
    expect(ShellRunRequest.safeParse({ argv: ['true'], command: 'true' }).success).toBe(false);
    expect(ShellRunRequest.safeParse({ cwd: '/tmp' }).success).toBe(false);
    expect(ShellRunRequest.safeParse({ argv: [] }).success).toBe(false);
  });

  it('rejects relative cwd, bad env names and unbounded timeouts', () => {
    expect(ShellRunRequest.safeParse({ argv: ['true'], cwd: 'tmp' }).success).toBe(false);
    expect(ShellRunRequest.safeParse({ argv: ['true'], env: { 'A=B': 'x' } }).success).toBe(false);
    expect(ShellRunRequest.safeParse({ argv: ['true'], timeout_ms: 0 }).success).toBe(false);
    expect(ShellRunRequest.safeParse({ argv: ['true'], timeout_ms: 7_200_000 }).success).toBe(
      false,
    );
  });
});

describe('shell results and kill', () => {
  it('accepts a collected run and rejects unknown fields', () => {
    const result = {
      ...exit,
      output_encoding: 'utf8',
      stdout: 'hi\n',
      stderr: '',
      stdout_truncated: false,
      stderr_truncated: false,
    };
    expect(ShellRunResult.safeParse(result).success).toBe(true);
    expect(ShellRunResult.safeParse({ ...result, exit: 0 }).success).toBe(false);
  });

  it('defaults kill to SIGTERM and rejects arbitrary signals', () => {
    expect(ShellKillRequest.parse({ run_id: 'r1' })).toEqual({ run_id: 'r1', signal: 'SIGTERM' });
    expect(ShellKillRequest.safeParse({ run_id: 'r1', signal: 'SIGSTOP' }).success).toBe(false);
  });
});

describe('shell stream messages', () => {
  it('parses each client message', () => {
    const messages = [
      { type: 'start', request: { argv: ['cat'] } },
      { type: 'stdin', data: 'line\n' },
      { type: 'stdin_end' },
      { type: 'kill', signal: 'SIGKILL' },
    ];
    for (const message of messages)
      expect(ShellStreamClientMessage.safeParse(message).success).toBe(true);
    expect(ShellStreamClientMessage.safeParse({ type: 'start', request: {} }).success).toBe(false);
    expect(ShellStreamClientMessage.safeParse({ type: 'resize' }).success).toBe(false);
  });

  it('parses each server message', () => {
    const messages = [
      { type: 'started', run_id: 'r1', pid: 4242 },
      { type: 'stdout', seq: 0, data: 'hi\n', encoding: 'utf8' },
      { type: 'stderr', seq: 1, data: 'AA==', encoding: 'base64' },
      { type: 'exit', ...exit, exit_code: null, signal: 'SIGKILL', timed_out: true },
      {
        type: 'error',
        error: { code: 'internal_error', message: 'spawn failed', request_id: 'req-1' },
      },
    ];
    for (const message of messages)
      expect(ShellStreamServerMessage.safeParse(message).error).toBeUndefined();
    expect(
      ShellStreamServerMessage.safeParse({ type: 'stdout', data: 'x', encoding: 'utf8' }).success,
    ).toBe(false);
    expect(ShellStreamServerMessage.safeParse({ type: 'exit', ...exit, extra: 1 }).success).toBe(
      false,
    );
  });
});

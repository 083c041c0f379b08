import { McpToolName, Routes } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { APPLICATION_ERROR, toToolCallError } from './mcp-errors.js';
import { McpTools, toolNamed } from './mcp-tools.js';

describe('MCP tools', () => {
  it('are the contract’s tool names, in its order', () => {
    expect(McpTools.map((t) => t.name)).toEqual(McpToolName.options);
  });

  it('take the REST route’s own body schema (one description of the API)', () => {
    expect(toolNamed('act')!.input).toBe(Routes.actClaim.body);
    expect(toolNamed('input')!.input).toBe(Routes.inputClaim.body);
    expect(toolNamed('screenshot')!.input).toBe(Routes.screenshotClaim.body);
    expect(toolNamed('files_write')!.input).toBe(Routes.writeClaimFile.body);
  });

  it('publish object input schemas, unions included (MCP needs type: object on top)', () => {
    for (const tool of McpTools) {
      expect(tool.inputJsonSchema.type, tool.name).toBe('object');
      expect(tool.inputJsonSchema).not.toHaveProperty('$schema');
    }
    expect(
      toolNamed('act')!.inputJsonSchema.oneOf ?? toolNamed('act')!.inputJsonSchema.anyOf,
    ).toBeDefined();
  });
});

describe('toToolCallError', () => {
  const log = pino({ level: 'silent' });

  it('carries the stable error code, status and request id', () => {
    const err = toToolCallError(new AppError('window_not_found', 'no window 7'), 'req_1', log);
    expect(err.code).toBe(APPLICATION_ERROR);
    expect(err.message).toBe('window_not_found: no window 7');
    expect(err.data).toEqual({ code: 'window_not_found', status: 404, request_id: 'req_1' });
  });

  it('answers bad arguments as InvalidParams', () => {
    const err = toToolCallError(new AppError('validation_failed', 'bad', { issues: [] }), 'r', log);
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.data.details).toEqual({ issues: [] });
  });

  it('never shows what an unexpected error said', () => {
    const err = toToolCallError(new Error('password=hunter2 in a stack'), 'r', log);
    expect(err.code).toBe(ErrorCode.InternalError);
    expect(err.message).not.toContain('hunter2');
    expect(err.data.code).toBe('internal_error');
  });
});

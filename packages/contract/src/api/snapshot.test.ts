import { describe, expect, it } from 'vitest';
import { CreateSnapshotRequest, isSnapshotPath, SNAPSHOT_PATH_PATTERN } from './snapshot.js';

const samples = [
  'Documents',
  '.config/chromium',
  'a/b/c.txt',
  '..a/b..',
  '.bash_history',
  '/etc/passwd',
  '../x',
  'a/../b',
  'a/./b',
  'a//b',
  'a/',
  '.',
  '..',
  '',
  'a/..',
  'line\n/../x',
];

describe('SnapshotPath', () => {
  it('publishes the same rule it enforces (pattern and isSnapshotPath agree)', () => {
    const pattern = new RegExp(SNAPSHOT_PATH_PATTERN);
    for (const p of samples) expect(pattern.test(p), JSON.stringify(p)).toBe(isSnapshotPath(p));
  });

  it('keeps a snapshot inside the home', () => {
    expect(CreateSnapshotRequest.safeParse({ paths: ['Documents', '.mozilla'] }).success).toBe(
      true,
    );
    for (const bad of ['/etc', '../other', 'Documents/../../etc', 'a\u0000b'])
      expect(CreateSnapshotRequest.safeParse({ paths: [bad] }).success, bad).toBe(false);
  });
});

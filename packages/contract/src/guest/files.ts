import { z } from 'zod';
import { named } from '../registry.js';
import { AbsolutePath, Timestamp } from './common.js';

/**
 * File size limits, in bytes of file content (not of the JSON carrying it). Larger files go
 * through ranges (read) or the shell. Over-limit requests are refused 413 `payload_too_large`
 * before anything is written; the string lengths in the schemas are only a first cut, because a
 * UTF-8 character can take up to four bytes.
 */
export const FILE_READ_MAX_BYTES = 8 * 1024 * 1024;
export const FILE_WRITE_MAX_BYTES = 8 * 1024 * 1024;
export const FILE_LIST_MAX_ENTRIES = 10_000;
/** Base64 of FILE_WRITE_MAX_BYTES: the longest `content` string a write can carry. */
const WRITE_MAX_CONTENT_CHARS = Math.ceil(FILE_WRITE_MAX_BYTES / 3) * 4;

export const FileEncoding = named('GuestFileEncoding', z.enum(['utf8', 'base64']));
export type FileEncoding = z.infer<typeof FileEncoding>;

/** FileMode is a permission mode in octal digits, as chmod takes it (`"644"`, `"0755"`). */
export const FileMode = named(
  'GuestFileMode',
  z.string().regex(/^0?[0-7]{3,4}$/, 'octal permission bits, e.g. "644"'),
);
export type FileMode = z.infer<typeof FileMode>;

export const FileType = named('GuestFileType', z.enum(['file', 'directory', 'symlink', 'other']));
export type FileType = z.infer<typeof FileType>;

/**
 * FileReadRequest reads one byte range. With `utf8`, bytes that are not valid UTF-8 (including
 * a range that cuts a character) are an error whose message suggests `base64`, rather than text
 * with replacement characters that would silently corrupt the file if written back.
 */
export const FileReadRequest = named(
  'GuestFileReadRequest',
  z.strictObject({
    path: AbsolutePath,
    offset: z.int().min(0).default(0),
    /** Bytes to read; defaults to the rest of the file, and is capped at FILE_READ_MAX_BYTES. */
    length: z.int().min(0).max(FILE_READ_MAX_BYTES).optional(),
    encoding: FileEncoding.default('utf8'),
  }),
);
export type FileReadRequest = z.infer<typeof FileReadRequest>;

export const FileReadResponse = named(
  'GuestFileReadResponse',
  z.strictObject({
    path: AbsolutePath,
    encoding: FileEncoding,
    content: z.string(),
    offset: z.int().min(0),
    /** Bytes returned. */
    length: z.int().min(0).max(FILE_READ_MAX_BYTES),
    /** Size of the whole file. */
    size: z.int().min(0),
    /** The range reached the end of the file. */
    eof: z.boolean(),
  }),
);
export type FileReadResponse = z.infer<typeof FileReadResponse>;

/**
 * FileWriteRequest replaces a file. `atomic` (default) writes a temporary file in the same
 * directory and renames it over the target, so a reader never sees half a file and a failed
 * write leaves the old one intact.
 */
export const FileWriteRequest = named(
  'GuestFileWriteRequest',
  z.strictObject({
    path: AbsolutePath,
    content: z.string().max(WRITE_MAX_CONTENT_CHARS),
    encoding: FileEncoding.default('utf8'),
    /** Mode of a new file; an existing file keeps its mode unless this is given. */
    mode: FileMode.optional(),
    atomic: z.boolean().default(true),
    /** Create missing parent directories (mode 755). */
    create_parents: z.boolean().default(false),
  }),
);
export type FileWriteRequest = z.infer<typeof FileWriteRequest>;

export const FileWriteResponse = named(
  'GuestFileWriteResponse',
  z.strictObject({ path: AbsolutePath, size: z.int().min(0), atomic: z.boolean() }),
);
export type FileWriteResponse = z.infer<typeof FileWriteResponse>;

/** FileStat describes one path without following a final symlink (lstat). */
export const FileStat = named(
  'GuestFileStat',
  z.strictObject({
    path: AbsolutePath,
    type: FileType,
    size: z.int().min(0),
    mode: FileMode,
    mtime: Timestamp,
    uid: z.int().min(0),
    gid: z.int().min(0),
    symlink_target: z.string().max(4096).optional(),
  }),
);
export type FileStat = z.infer<typeof FileStat>;

/** Stat of a missing path is 404 `not_found`. */
export const FileStatRequest = named(
  'GuestFileStatRequest',
  z.strictObject({ path: AbsolutePath }),
);
export type FileStatRequest = z.infer<typeof FileStatRequest>;

export const FileListRequest = named(
  'GuestFileListRequest',
  z.strictObject({
    path: AbsolutePath,
    max_entries: z.int().min(1).max(FILE_LIST_MAX_ENTRIES).default(1_000),
  }),
);
export type FileListRequest = z.infer<typeof FileListRequest>;

export const FileEntry = named(
  'GuestFileEntry',
  z.strictObject({
    name: z.string().min(1).max(255),
    type: FileType,
    size: z.int().min(0),
    mode: FileMode,
    mtime: Timestamp,
  }),
);
export type FileEntry = z.infer<typeof FileEntry>;

/** FileListResponse lists a directory, sorted by name; `truncated` when entries were left out. */
export const FileListResponse = named(
  'GuestFileListResponse',
  z.strictObject({
    path: AbsolutePath,
    entries: z.array(FileEntry).max(FILE_LIST_MAX_ENTRIES),
    truncated: z.boolean(),
  }),
);
export type FileListResponse = z.infer<typeof FileListResponse>;

/**
 * FileDeleteRequest removes a file, or a directory tree with `recursive`. A missing path is 404
 * unless `missing_ok`, which makes cleanup calls idempotent.
 */
export const FileDeleteRequest = named(
  'GuestFileDeleteRequest',
  z.strictObject({
    path: AbsolutePath.refine((p) => p !== '/', 'refusing to delete /').meta({
      description: 'Any absolute path but `/`.',
      not: { const: '/' },
    }),
    recursive: z.boolean().default(false),
    missing_ok: z.boolean().default(false),
  }),
);
export type FileDeleteRequest = z.infer<typeof FileDeleteRequest>;

/** FileDeleteResponse: `deleted` is false only for a missing path with `missing_ok`. */
export const FileDeleteResponse = named(
  'GuestFileDeleteResponse',
  z.strictObject({ path: AbsolutePath, deleted: z.boolean() }),
);
export type FileDeleteResponse = z.infer<typeof FileDeleteResponse>;

import { z } from 'zod';
import { named } from '../registry.js';
import { ClaimId, Timestamp } from './common.js';

/**
 * ProfileName is the tenant's own id for a profile (`cust-42`, an end user's id): 1–128 of
 * letters, digits, `.`, `_`, `-`, `@`, `:`, starting with a letter or digit. Tenant-scoped: two
 * tenants' `cust-42` are different profiles.
 */
export const ProfileName = named(
  'ProfileName',
  z
    .string()
    .min(1)
    .max(128)
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._@:-]*$/,
      'letters, digits, ".", "_", "-", "@", ":"; starting with a letter or digit',
    ),
);
export type ProfileName = z.infer<typeof ProfileName>;

/**
 * ProfilePath is a path relative to the desktop user's home that a pool's profiles hold
 * (`.config/chromium`, `Documents`): no leading `/`, no `.` or `..` component.
 */
export const ProfilePath = named(
  'ProfilePath',
  z
    .string()
    .min(1)
    .max(512)
    .refine(
      (p) =>
        !p.startsWith('/') &&
        !p.includes('\0') &&
        p.split('/').every((part) => part !== '' && part !== '.' && part !== '..'),
      'a path relative to the home, without "." or ".." components',
    ),
);
export type ProfilePath = z.infer<typeof ProfilePath>;

/**
 * DEFAULT_PROFILE_PATHS is what a pool without `profile_paths` keeps: Chromium's and Firefox's
 * profiles (cookies, logins, local storage, history) as the driver launches them
 * (`.cubicle/chromium`, `.cubicle/firefox`) and at their own default places, Documents, Desktop
 * and the shell history.
 */
export const DEFAULT_PROFILE_PATHS = [
  '.cubicle/chromium',
  '.cubicle/firefox',
  '.config/chromium',
  '.mozilla/firefox',
  'Documents',
  'Desktop',
  '.bash_history',
] as const;

/** Profile is a persistent profile as the API shows it. */
export const Profile = named(
  'Profile',
  z.strictObject({
    id: ProfileName,
    /** The current saved version (0: never saved; a claim of it starts empty). */
    version: z.int().min(0),
    /** Bytes of the current version's files. */
    size_bytes: z.int().min(0),
    file_count: z.int().min(0),
    saved_at: Timestamp.nullable(),
    /** The live claim holding it, or null. */
    claim_id: ClaimId.nullable(),
    /** The last claim that held it. */
    last_claim_id: ClaimId.nullable(),
    last_used_at: Timestamp,
    created_at: Timestamp,
  }),
);
export type Profile = z.infer<typeof Profile>;

export const ProfilePathParams = named('ProfilePathParams', z.strictObject({ id: ProfileName }));
export type ProfilePathParams = z.infer<typeof ProfilePathParams>;

export const ProfileListQuery = named(
  'ProfileListQuery',
  z.strictObject({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    /** The last `id` of the previous page (profiles are listed by id). */
    cursor: ProfileName.optional(),
  }),
);
export type ProfileListQuery = z.infer<typeof ProfileListQuery>;

/** ProfileSaveResult is what a save did: the version it made and what it moved. */
export const ProfileSaveResult = named(
  'ProfileSaveResult',
  z.strictObject({
    profile: Profile,
    /** Files whose content was not already stored (read from the desktop and uploaded). */
    changed_files: z.int().min(0),
    /** Bytes uploaded: only chunks the store did not hold. */
    uploaded_bytes: z.int().min(0),
    duration_ms: z.number().min(0),
  }),
);
export type ProfileSaveResult = z.infer<typeof ProfileSaveResult>;

import { ClaimPathParams } from '../claim.js';
import { listOf } from '../common.js';
import { Profile, ProfileListQuery, ProfilePathParams, ProfileSaveResult } from '../profile.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

/** Persistent profiles: a tenant's named home state, restored at claim, saved at release and on request. */
export const profileRoutes = {
  saveClaimProfile: defineRoute({
    operationId: 'saveClaimProfile',
    method: 'POST',
    path: claimChild('profile/save'),
    tag: 'profiles',
    auth: 'api_key',
    summary: "Save a claim's profile now",
    description:
      "Saves the profile the claim holds (claimed with `profile`) as a new version: only files changed since the last version are read and uploaded (chunks are content-addressed and shared across versions), the version's manifest is stored after its chunks and the profile moves to it last, so a save cut short leaves the previous version whole. Files are copied as they are (running browsers are not stopped; the save at release stops them first). 404 when the claim holds no profile; over the tenant's `profile_bytes` quota 429 `quota_exceeded` and the previous version stays.",
    params: ClaimPathParams,
    responses: { 200: ProfileSaveResult },
    errors: [
      ...writeErrors,
      'claim_not_active',
      'quota_exceeded',
      'conflict',
      'backend_unavailable',
      'service_unavailable',
      'timeout',
    ],
  }),
  listProfiles: defineRoute({
    operationId: 'listProfiles',
    method: 'GET',
    path: '/v1/profiles',
    tag: 'profiles',
    auth: 'api_key',
    summary: 'List profiles by id',
    query: ProfileListQuery,
    responses: { 200: listOf(Profile) },
    errors: [...readErrors],
  }),
  getProfile: defineRoute({
    operationId: 'getProfile',
    method: 'GET',
    path: '/v1/profiles/{id}',
    tag: 'profiles',
    auth: 'api_key',
    summary: 'Get a profile (size, saved_at, last claim, version)',
    params: ProfilePathParams,
    responses: { 200: Profile },
    errors: [...readErrors],
  }),
  deleteProfile: defineRoute({
    operationId: 'deleteProfile',
    method: 'DELETE',
    path: '/v1/profiles/{id}',
    tag: 'profiles',
    auth: 'api_key',
    summary: 'Delete a profile and its stored objects',
    description:
      'Deletes every stored version and chunk, then the profile. A profile held by a live claim is 409 `profile_in_use`.',
    params: ProfilePathParams,
    responses: { 204: null },
    errors: [...writeErrors, 'profile_in_use', 'service_unavailable'],
  }),
} satisfies Record<string, RouteDef>;

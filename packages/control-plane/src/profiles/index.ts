export { claimWithProfile } from './claim-with-profile.js';
export {
  deleteProfile,
  getProfile,
  listProfiles,
  saveClaimProfile,
  sweepProfiles,
} from './manage-profiles.js';
export { destroySandboxSavingProfile, saveProfileAtRelease } from './release-profile.js';
export { saveProfile } from './save-profile.js';
export { restoreHome, uploadChunks } from './home-transfer.js';
export { diffManifests, chunksOf, type ManifestDiff } from './manifest-diff.js';
export { hasObjects, pathsOf, type ProfileDeps } from './profile-deps.js';
export {
  readManifest,
  ProfileManifest,
  profilePrefix,
  blobKey,
  versionKey,
} from './profile-objects.js';

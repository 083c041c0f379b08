import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LaunchApp } from '@cubicle/contract/guest';
import { trustEgressCaIn } from '../desktop/egress-trust.js';

/** AppCommand is how one LaunchApp starts: its argv and the environment it adds. */
export interface AppCommand {
  argv: string[];
  env: Record<string, string>;
}

/** Where the browser saves downloads: in the sandbox home, so the files API reads them. */
export const DOWNLOAD_DIR = 'Downloads';

const CHROMIUM_FLAGS = [
  // Chromium builds its accessibility tree only when asked (or when it sees a screen reader).
  '--force-renderer-accessibility',
  // Policy: no first-run or default-browser prompts, no update or component checks, no sync,
  // no metrics upload, no crash reports, no background traffic, no keyring prompt.
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-component-update',
  '--disable-background-networking',
  '--disable-sync',
  '--disable-breakpad',
  '--metrics-recording-only',
  '--disable-features=Translate,MediaRouter,OptimizationHints',
  '--password-store=basic',
  '--disable-gpu',
  '--disable-quic',
  // An agent drives windows a person does not watch: a page in a covered or background window
  // keeps its timers and rendering at full rate, so its response to an action arrives when the
  // page makes it, not at the next input (the flags browser automation runs with). A minimized
  // window still defers its page's updates (measured: a click's effect came with the next click).
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
  // A sandbox's browser is stopped by killing its process group: no "restore pages?" bubble then.
  '--hide-crash-restore-bubble',
];

/**
 * chromiumSandboxFlags: Chromium's own sandbox needs a new user namespace or its setuid helper.
 * Inside Cubicle's bubblewrap sandbox neither exists (nested user namespaces are disabled and
 * refused by its seccomp filter; no_new_privs makes setuid inert), so there the browser runs
 * with `--no-sandbox` and Cubicle's sandbox (own uid, namespaces, seccomp, cgroup) is the
 * boundary; the same as root (the test harness' unsandboxed desktops), where Chromium refuses
 * to start without it. Anywhere else its sandbox stays on.
 */
function chromiumSandboxFlags(): string[] {
  return process.getuid?.() === 0 || isConfined() ? ['--no-sandbox'] : [];
}

/** isConfined: this process runs under no_new_privs and a seccomp filter (Cubicle's sandbox). */
function isConfined(): boolean {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    return /^NoNewPrivs:\s*1$/m.test(status) && /^Seccomp:\s*2$/m.test(status);
  } catch {
    return false;
  }
}

/** writeOnce creates a file unless it exists: the browser owns it after its first start. */
async function writeOnce(path: string, content: string): Promise<void> {
  await writeFile(path, content, { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
}

/**
 * prepareChromiumProfile writes the policy into a fresh profile, once: downloads saved without a
 * prompt into the home's Downloads (where the files API reads them), no first-run or
 * default-browser prompts, no metrics reporting (Local State), no Safe Browsing lookups, and no
 * memory figure in a tab's name (the hover-card setting also puts it in the tab's accessible
 * name, which then changes on its own every few seconds: seen in a click's evidence window).
 */
async function prepareChromiumProfile(profile: string, downloads: string): Promise<void> {
  await mkdir(join(profile, 'Default'), { recursive: true });
  await mkdir(downloads, { recursive: true });
  const prefs = {
    download: { default_directory: downloads, prompt_for_download: false, directory_upgrade: true },
    savefile: { default_directory: downloads },
    browser: { check_default_browser: false, has_seen_welcome_page: true },
    distribution: { skip_first_run_ui: true, suppress_first_run_default_browser_prompt: true },
    safebrowsing: { enabled: false },
  };
  await writeOnce(join(profile, 'Default', 'Preferences'), JSON.stringify(prefs));
  await writeOnce(
    join(profile, 'Local State'),
    JSON.stringify({
      user_experience_metrics: { reporting_enabled: false },
      browser: { hovercard: { memory_usage_enabled: false } },
    }),
  );
}

/**
 * prepareFirefoxProfile writes user.js: the same policy as Chromium's, in Firefox's prefs. It is
 * rewritten on every launch (Firefox copies it into prefs.js at start), so a profile made by an
 * older driver gets the current policy.
 */
async function prepareFirefoxProfile(profile: string, downloads: string): Promise<void> {
  await mkdir(profile, { recursive: true });
  await mkdir(downloads, { recursive: true });
  // Firefox reads its own profile's NSS database, not ~/.pki/nssdb (see egress-trust.ts).
  await trustEgressCaIn(profile);
  const prefs: Record<string, string | number | boolean> = {
    // First run: no welcome, what's-new or privacy-notice tabs, no default-browser question.
    'browser.shell.checkDefaultBrowser': false,
    'browser.startup.homepage_override.mstone': 'ignore',
    'browser.aboutwelcome.enabled': false,
    'startup.homepage_welcome_url': '',
    'startup.homepage_welcome_url.additional': '',
    'datareporting.policy.firstRunURL': '',
    'toolkit.telemetry.reportingpolicy.firstRun': false,
    // Killed with its process group: no session-restore page on the next start.
    'browser.sessionstore.resume_from_crash': false,
    // Telemetry and studies.
    'datareporting.policy.dataSubmissionEnabled': false,
    'datareporting.healthreport.uploadEnabled': false,
    'toolkit.telemetry.enabled': false,
    'toolkit.telemetry.unified': false,
    'toolkit.telemetry.archive.enabled': false,
    'app.shield.optoutstudies.enabled': false,
    'app.normandy.enabled': false,
    // Updates and background traffic.
    'app.update.enabled': false,
    'app.update.auto': false,
    'extensions.update.enabled': false,
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    'browser.safebrowsing.downloads.remote.enabled': false,
    // Downloads saved without asking into the home's Downloads, where the files API reads them.
    'browser.download.dir': downloads,
    'browser.download.folderList': 2,
    'browser.download.useDownloadDir': true,
    'browser.download.always_ask_before_handling_new_types': false,
    'browser.download.alwaysOpenPanel': false,
    'accessibility.force_disabled': -1,
  };
  const lines = Object.entries(prefs).map(
    ([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});`,
  );
  await writeFile(join(profile, 'user.js'), `${lines.join('\n')}\n`);
}

// LibreOffice's first start shows a tip of the day, a document-recovery dialog and an update
// check, each a window an agent would have to dismiss first: a fresh user profile with these
// registry values (written once, before the first start) makes the document the only window.
const LIBREOFFICE_SETTINGS: readonly (readonly [string, string, string, string])[] = [
  ['/org.openoffice.Office.Common/Misc', 'ShowTipOfTheDay', 'boolean', 'false'],
  ['/org.openoffice.Office.Common/Misc', 'FirstRun', 'boolean', 'false'],
  ['/org.openoffice.Setup/Office', 'ooSetupInstCompleted', 'boolean', 'true'],
  ['/org.openoffice.Setup/Product', 'ooSetupLastVersion', 'string', '99.0'],
  ['/org.openoffice.Office.Recovery/RecoveryInfo', 'Enabled', 'boolean', 'false'],
  ['/org.openoffice.Office.Recovery/AutoSave', 'Enabled', 'boolean', 'false'],
  [
    "/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments",
    'AutoCheckEnabled',
    'boolean',
    'false',
  ],
];

/** prepareLibreOfficeProfile writes the settings above into a fresh user profile, once. */
async function prepareLibreOfficeProfile(profile: string): Promise<void> {
  await mkdir(join(profile, 'user'), { recursive: true });
  const items = LIBREOFFICE_SETTINGS.map(
    ([path, prop, type, value]) =>
      `<item oor:path="${path}"><prop oor:name="${prop}" oor:op="fuse" oor:type="xs:${type}"><value>${value}</value></prop></item>`,
  );
  const xcu = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    ...items,
    '</oor:items>',
    '',
  ].join('\n');
  await writeOnce(join(profile, 'user', 'registrymodifications.xcu'), xcu);
}

/** libreOffice starts one LibreOffice module on its own profile under the desktop's home. */
async function libreOffice(module: 'writer' | 'calc', home: string): Promise<AppCommand> {
  const profile = join(home, '.cubicle', 'libreoffice');
  await prepareLibreOfficeProfile(profile);
  return {
    argv: [
      'libreoffice',
      `-env:UserInstallation=${pathToFileURL(profile).href}`,
      `--${module}`,
      '--norestore',
      '--nologo',
      '--nofirststartwizard',
    ],
    // The GTK3 VCL plugin is the one that speaks AT-SPI (through GTK's atk-bridge).
    env: { SAL_USE_VCLPLUGIN: 'gtk3', GNOME_ACCESSIBILITY: '1' },
  };
}

/**
 * appCommand maps a LaunchApp to its command, preparing browser profiles under the desktop's
 * home (`.cubicle/<browser>`) first. `url` is only accepted for browsers (the contract checks).
 */
export async function appCommand(
  app: LaunchApp,
  home: string,
  url: string | undefined,
): Promise<AppCommand> {
  const downloads = join(home, DOWNLOAD_DIR);
  switch (app) {
    case 'browser': {
      const profile = join(home, '.cubicle', 'chromium');
      await prepareChromiumProfile(profile, downloads);
      return {
        argv: [
          'chromium',
          ...CHROMIUM_FLAGS,
          ...chromiumSandboxFlags(),
          `--user-data-dir=${profile}`,
          '--new-window',
          url ?? 'about:blank',
        ],
        env: {},
      };
    }
    case 'browser.firefox': {
      const profile = join(home, '.cubicle', 'firefox');
      await prepareFirefoxProfile(profile, downloads);
      return {
        argv: ['firefox-esr', '--new-instance', '--profile', profile, url ?? 'about:blank'],
        // Firefox enables its accessibility service only when asked or when a client appears.
        env: { GNOME_ACCESSIBILITY: '1', MOZ_CRASHREPORTER_DISABLE: '1' },
      };
    }
    case 'office.writer':
      return libreOffice('writer', home);
    case 'office.calc':
      return libreOffice('calc', home);
    case 'terminal':
      // Its own process per window, so the window's pid is the launched one.
      return { argv: ['xfce4-terminal', '--disable-server'], env: {} };
    case 'files':
      return { argv: ['thunar', home], env: {} };
    case 'editor':
      return { argv: ['mousepad'], env: {} };
    default:
      return app satisfies never;
  }
}

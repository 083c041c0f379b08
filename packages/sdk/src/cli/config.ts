import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** CliConfig is what `cubicle login` stores: where the API is and the key to use. */
export interface CliConfig {
  url: string;
  api_key: string;
}

/** configPath: `$CUBICLE_CONFIG`, else `$XDG_CONFIG_HOME/cubicle/config.json`, else `~/.config/…`. */
export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.CUBICLE_CONFIG) return env.CUBICLE_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'cubicle', 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv): CliConfig | null {
  try {
    const parsed = JSON.parse(readFileSync(configPath(env), 'utf8')) as Partial<CliConfig>;
    return parsed.url && parsed.api_key ? { url: parsed.url, api_key: parsed.api_key } : null;
  } catch {
    return null;
  }
}

/**
 * writeConfig stores the key readable by the owner only: the file is created 0600 (and chmod'ed
 * again, should it have existed with wider rights), its directory 0700.
 */
export function writeConfig(env: NodeJS.ProcessEnv, config: CliConfig): string {
  const path = configPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

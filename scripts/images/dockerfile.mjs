// What the registry-free image build (build.mjs) takes from images/<name>/Dockerfile, so the
// Dockerfiles stay the one published recipe: the final stage's Debian packages (the desktop's
// come from packages/driver-guest/desktop-packages.json through `node -p`), ENV, USER, WORKDIR,
// EXPOSE, ENTRYPOINT, CMD, the /usr/local/bin links and the renamed login user. Plain Node.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environment every node:20-bookworm-slim container starts with (the Dockerfiles' base). */
export const BASE_ENV = Object.freeze({
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
});

/** finalStage returns the instructions after the Dockerfile's last FROM, continuations joined. */
export function finalStage(text) {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim());
  const lastFrom = lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true);
  return lines.slice(lastFrom).filter((l) => l && !l.startsWith('#'));
}

/**
 * aptPackages lists what the stage's `apt-get install` commands install. A `$(node -p
 * 'require("X").packages.join(" ")')` word is the `packages` list of the JSON file the stage
 * copied to X (resolved against the repository root through its COPY line); `listKey` picks
 * another list of that file instead (the desktop's `minimal`).
 */
export function aptPackages(stage, root, { listKey = 'packages' } = {}) {
  const copies = new Map();
  for (const line of stage.filter((l) => /^COPY\s/.test(l) && !l.includes('--from'))) {
    const words = line.split(/\s+/).slice(1);
    copies.set(words.at(-1), words[0]);
  }
  const names = [];
  for (const command of stage.filter((l) => l.startsWith('RUN ')).flatMap((l) => l.split('&&'))) {
    if (!/apt-get install/.test(command)) continue;
    const rest = command.replace(/.*apt-get install/, '');
    for (const match of rest.matchAll(/\$\(node -p '.*?require\("([^"]+)"\)\.packages[^']*'\)/g)) {
      const source = copies.get(match[1]);
      if (!source) throw new Error(`the Dockerfile reads ${match[1]} but never copies it`);
      names.push(...JSON.parse(readFileSync(join(root, source), 'utf8'))[listKey]);
    }
    names.push(
      ...rest
        .replace(/\$\(node -p '[^']*'\)/g, '')
        .split(/\s+/)
        .filter((w) => w && !w.startsWith('-')),
    );
  }
  return names;
}

function jsonArray(stage, op) {
  const line = stage.find((l) => l.startsWith(`${op} `));
  return line ? JSON.parse(line.slice(op.length + 1)) : undefined;
}

/**
 * imageConfigOf reads images/<name>/Dockerfile: packages, env (base env first), user, workdir,
 * exposed ports, entrypoint, cmd, links (/usr/local/bin name → target) and the login user
 * (name, home) that owns uid 1000.
 */
export function imageConfigOf(root, name, options = {}) {
  const text = readFileSync(join(root, 'images', name, 'Dockerfile'), 'utf8');
  const stage = finalStage(text);
  const env = { ...BASE_ENV };
  for (const line of stage.filter((l) => l.startsWith('ENV '))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const [key, ...value] = pair.split('=');
      env[key] = value.join('=');
    }
  }
  const links = {};
  for (const m of stage.join('\n').matchAll(/ln -s (\/\S+) \/usr\/local\/bin\/(\S+)/g))
    links[m[2]] = m[1];
  const chmodX = [...stage.join('\n').matchAll(/chmod \+x ((?:\/\S+\s*)+)/g)].flatMap((m) =>
    m[1].trim().split(/\s+/),
  );
  // node:20-bookworm-slim's uid 1000 is `node` (/home/node); the desktop renames it.
  const renamed = /usermod --login (\S+) --home (\S+)/.exec(stage.join('\n'));
  const login = renamed
    ? { name: renamed[1], home: renamed[2] }
    : { name: 'node', home: '/home/node' };
  const workdir =
    stage
      .filter((l) => l.startsWith('WORKDIR '))
      .at(-1)
      ?.slice(8)
      .trim() ?? '/';
  const user =
    stage
      .filter((l) => l.startsWith('USER '))
      .at(-1)
      ?.slice(5)
      .trim() ?? '0:0';
  const ports = stage
    .filter((l) => l.startsWith('EXPOSE '))
    .flatMap((l) => l.slice(7).trim().split(/\s+/));
  // Repository files the stage copies in (not from a build stage): same path in the image.
  const copies = stage
    .filter((l) => /^COPY\s/.test(l) && !l.includes('--from'))
    .map((l) => l.split(/\s+/).slice(1))
    .map((words) => ({ from: words[0], to: words.at(-1) }));
  return {
    packages: aptPackages(stage, root, options),
    copies,
    env,
    user,
    workdir,
    ports,
    entrypoint: jsonArray(stage, 'ENTRYPOINT') ?? [],
    cmd: jsonArray(stage, 'CMD') ?? [],
    links,
    executables: chmodX,
    login,
  };
}

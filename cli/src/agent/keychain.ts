/**
 * The OS keychain for `svc agent bootstrap --secret-dest keychain`. Found through the PATH of the
 * CLI's environment (so tests choose it): libsecret's `secret-tool` where a D-Bus session bus is
 * reachable (Linux and other Unix desktops), else on macOS `security`. Nowhere else is there one
 * (Windows Credential Manager is not supported): the caller then refuses before minting a key.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Env } from '../config.js';

/** The keychain item is service `svc`, account = the key id. */
export const KEYCHAIN_SERVICE = 'svc';

const STORE_TIMEOUT_MS = 120_000;

export interface Keychain {
  kind: 'secret-tool' | 'macos-keychain';
  /** The command that reads the secret back. */
  lookupCommand(account: string): string;
  store(account: string, label: string, secret: string): Promise<void>;
}

/** The first executable file called `name` on `pathVar`. */
export function findExecutable(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** libsecret talks to the Secret Service over the session bus; without one `secret-tool` cannot store. */
function sessionBusReachable(env: Env): boolean {
  if (env.DBUS_SESSION_BUS_ADDRESS) return true;
  return Boolean(env.XDG_RUNTIME_DIR) && existsSync(join(env.XDG_RUNTIME_DIR!, 'bus'));
}

export function findKeychain(env: Env, platform: NodeJS.Platform = process.platform): Keychain | undefined {
  const secretTool = findExecutable('secret-tool', env.PATH);
  if (secretTool && sessionBusReachable(env))
    return {
      kind: 'secret-tool',
      lookupCommand: (account) => `secret-tool lookup service ${KEYCHAIN_SERVICE} account ${account}`,
      // The secret goes through standard input, never the command line.
      store: (account, label, secret) =>
        runWithInput(secretTool, ['store', `--label=${label}`, 'service', KEYCHAIN_SERVICE, 'account', account], secret, env),
    };
  const security = platform === 'darwin' ? findExecutable('security', env.PATH) : undefined;
  if (security)
    return {
      kind: 'macos-keychain',
      lookupCommand: (account) => `security find-generic-password -s ${KEYCHAIN_SERVICE} -a ${account} -w`,
      // `security -i` reads its command from standard input, which keeps the secret out of the process list.
      store: async (account, label, secret) => {
        for (const v of [account, secret]) if (!/^[\x21-\x7e]+$/.test(v) || /["\\]/.test(v)) throw new Error('unexpected characters in the key');
        const safeLabel = label.replace(/["\\\r\n]/g, '');
        const line = `add-generic-password -U -s ${KEYCHAIN_SERVICE} -a "${account}" -l "${safeLabel}" -w "${secret}"\n`;
        return runWithInput(security, ['-i'], line, env);
      },
    };
  return undefined;
}

/** Runs `cmd` with `input` on standard input; rejects with its standard error on a non-zero exit. */
function runWithInput(cmd: string, args: string[], input: string, env: Env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), STORE_TIMEOUT_MS);
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${signal ? `was stopped by ${signal}` : `exited with ${code}`}${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
    });
    child.stdin!.on('error', () => {
      /* reported through the exit status */
    });
    child.stdin!.end(input);
  });
}
